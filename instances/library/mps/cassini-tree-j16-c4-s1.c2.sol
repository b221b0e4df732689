=obj= 1.0
y(data4_0) 1.0
y(pipeline12_35) 1.0
links(tor0_pod0)_z(35) 1.0
links(tor1_pod0)_z(35) 1.0
ONE_VAR_CONSTANT 1.0
