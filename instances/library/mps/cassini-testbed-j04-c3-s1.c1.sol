=obj= 0.9815
y(hybrid2_1) 1.0
y(tensor0_0) 1.0
links(tor7_core)_z(1) 1.0
ONE_VAR_CONSTANT 1.0
