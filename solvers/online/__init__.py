"""Online policies the trace-driven simulator runs, one module each, and their building blocks.

Policies (registered in ``pyproject.toml`` under ``placement.policies``): :mod:`.fifo`,
:mod:`.dally` (Dally, Dally-manual), :mod:`.tiresias`, :mod:`.gandiva`, :mod:`.mast`,
:mod:`.federated`, :mod:`.hived` (dynamic and static binding), :mod:`.quota`, :mod:`.private`.

Building blocks: :mod:`.delay` (Dally's delay timers and auto-tuner, Algorithms 1-2),
:mod:`.gms` and :mod:`.rms` (MAST's global and regional schedulers), :mod:`.tenants` (per-tenant
queues and VC assignments shared by the HiveD family). Placement helpers every policy may use
live in :mod:`placement.sim.placement`.

A policy imports ``placement/`` and its building blocks, ``models/`` where it solves a
sub-problem exactly, never another policy's private names; it receives its data (a VC
assignment, a data placement) rather than loading it.
"""
