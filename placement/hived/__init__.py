"""HiveD (OSDI'20): multi-level cells, VC assignment feasibility, cell bindings."""

from .cells import Chain, HivedInstance, PinnedCell, VirtualCluster
from .config import claims, instance_to_hived, instance_to_json, load_instance

__all__ = ["Chain", "HivedInstance", "PinnedCell", "VirtualCluster", "claims", "instance_to_hived", "instance_to_json",
           "load_instance"]
