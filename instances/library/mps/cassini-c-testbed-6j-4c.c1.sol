=obj= 0.9036111111111111
y(hybrid0_0) 1.0
y(pipeline3_28) 1.0
links(tor6_core)_z(28) 1.0
ONE_VAR_CONSTANT 1.0
