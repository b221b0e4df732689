"""CASSINI (NSDI'24): unified circles, compatibility scores, Affinity graphs and time shifts.

Modules: :mod:`.profiles` (job communication profiles), :mod:`.topology` (tree
networks and ring all-reduce routes), :mod:`.instance` (instances, candidates,
solutions, file format), :mod:`.circle` (unified circle of a link on an angle
grid), :mod:`.evaluation` (reference evaluation on the integer time grid and
the link-sharing iteration-time model), :mod:`.affinity` (Affinity graph and
loop detection), and the CLI / bench adapter :mod:`placement.app.families.cassini`.
"""
