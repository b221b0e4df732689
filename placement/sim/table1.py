"""Dally Table 1 (Dally §3.2): communication overhead per model and network tier, and its skew.

Data only, shared by the performance model (:mod:`.perf`) and the synthetic-field rules of the
trace loaders (:mod:`.trace`, which draw a job's model from these names).
"""

from __future__ import annotations

__all__ = ["DALLY_TABLE1", "DALLY_SKEW", "DALLY_MODELS"]

# Dally Table 1 (Dally §3.2): communication overhead as a fraction of compute time per tier
# (machine, rack, network), transcribed from papers/dally-network-sensitive-dl.txt.
DALLY_TABLE1: dict[str, tuple[float, float, float]] = {
    "VGG11": (0.01, 0.06, 0.07),
    "AlexNet": (0.02, 0.13, 1.00),
    "MobileNetV3": (0.42, 9.40, 195.92),
    "ResNet18": (0.07, 1.16, 27.49),
    "ResNet50": (0.12, 0.12, 0.38),
    "BERT-large": (0.08, 0.23, 7.15),
}
# Table 1's skew column (High / Low), for policies that use Tiresias-style skew.
DALLY_SKEW = {"VGG11": "High", "AlexNet": "High", "MobileNetV3": "High", "ResNet18": "Low",
              "ResNet50": "Low", "BERT-large": "Low"}
DALLY_MODELS = tuple(DALLY_TABLE1)
