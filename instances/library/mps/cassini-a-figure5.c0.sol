=obj= 1.0
y(j1_0) 1.0
y(j2_5) 1.0
links(l0)_z(5) 1.0
links(l1)_z(5) 1.0
ONE_VAR_CONSTANT 1.0
