=obj= 0.9911111111111112
y(hybrid0_0) 1.0
y(tensor4_12) 1.0
links(tor7_core)_z(12) 1.0
ONE_VAR_CONSTANT 1.0
