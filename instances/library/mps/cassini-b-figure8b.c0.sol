=obj= 0.9708333333333333
y(j1_0) 1.0
y(j2_6) 1.0
y(j3_3) 1.0
links(l1)_z(6) 1.0
links(l2)_z(39) 1.0
ONE_VAR_CONSTANT 1.0
