=obj= 0.9876666666666667
y(hybrid1_11) 1.0
y(hybrid2_2) 1.0
y(tensor0_0) 1.0
links(tor0_core)_z(2) 1.0
links(tor1_core)_z(2) 1.0
links(tor4_core)_z(134) 1.0
ONE_VAR_CONSTANT 1.0
