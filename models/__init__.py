"""Declarative exact models (Pyomo / PuLP), one module per problem family, solved by HiGHS."""
