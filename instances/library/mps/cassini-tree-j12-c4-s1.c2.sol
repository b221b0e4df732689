=obj= 1.0
y(data7_17) 1.0
y(data8_17) 1.0
y(hybrid6_0) 1.0
links(tor3_pod0)_z(17) 1.0
links(tor7_pod1)_z(17) 1.0
ONE_VAR_CONSTANT 1.0
