=obj= 3.0
x(0_0_3_2) 1.0
x(1_0_3_0) 1.0
ONE_VAR_CONSTANT 1.0
