=obj= 0.9067592592592593
y(data8_8) 1.0
y(tensor0_0) 1.0
y(tensor3_1) 1.0
links(tor0_core)_z(26) 1.0
links(tor1_core)_z(1) 1.0
links(tor2_core)_z(8) 1.0
ONE_VAR_CONSTANT 1.0
