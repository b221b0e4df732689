"""Registry of simulator policies: name -> ``"module:Class"`` (each policy helper adds its line).

Imported lazily so ``placement.sim`` never imports ``solvers/`` at module level.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import InstanceError

__all__ = ["POLICIES", "make_policy", "policy_class"]

POLICIES: dict[str, str] = {
    "fifo": "solvers.fifo:FIFO",
    "dally": "solvers.dally:Dally", "dally-manual": "solvers.dally:DallyManual", "tiresias": "solvers.tiresias:Tiresias", "gandiva": "solvers.gandiva:Gandiva",
    "mast": "solvers.mast:MastPolicy", "federated": "solvers.federated:FederatedPolicy",
    "hived": "solvers.hived_sched:HiveD", "hived-static": "solvers.hived_sched:HiveDStatic", "quota": "solvers.quota_sched:QuotaSharing", "private": "solvers.private:Private",
}


def policy_class(name: str):
    """The class registered as ``name``; :class:`InstanceError` on ``--policy`` when unknown."""
    if name not in POLICIES:
        raise InstanceError("--policy", f"must be one of {', '.join(sorted(POLICIES))}, not {name!r}")
    module, _, attr = POLICIES[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def make_policy(name: str, **options: Any):
    """A fresh policy object ``name`` built with ``options``."""
    return policy_class(name)(**options)
