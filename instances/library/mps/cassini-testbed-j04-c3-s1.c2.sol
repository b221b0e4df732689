=obj= 0.9782222222222222
y(hybrid2_0) 1.0
y(tensor3_13) 1.0
links(tor10_core)_z(13) 1.0
links(tor11_core)_z(13) 1.0
ONE_VAR_CONSTANT 1.0
