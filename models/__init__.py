"""Declarative exact models (Pyomo / PuLP), one module per problem family, solved by HiGHS
(or SCIP / CBC: ``mip_solver=``, :mod:`.backends`) and written as MPS / LP by :mod:`.export`."""
