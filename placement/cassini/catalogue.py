"""The 13 models of CASSINI's testbed (§5.1) as **synthetic** communication profiles.

The paper's measured profiles are not public. Each model gets a kind (data, pipeline, tensor
or hybrid parallel: :mod:`.profiles`), an iteration time of 120-240 ms (commensurate periods,
as on the paper's testbed) and the shape's keyword arguments (Up fraction, bandwidth in Gbps).
Used by the simulator's link model (:mod:`placement.sim.links`), which looks a trace job's
``model`` up here, and by §5.1's workload (:mod:`.workload`).
"""

from __future__ import annotations

from .profiles import JobProfile, synthetic_profile

__all__ = ["CATALOGUE", "profile_of"]

# name: (kind, iteration ms, keyword arguments of the synthetic shape) -- synthetic, see above
CATALOGUE: dict[str, tuple[str, int, dict]] = {
    "VGG11": ("data_parallel", 120, {"comm_fraction": 0.45, "bandwidth": 45}),
    "VGG16": ("data_parallel", 180, {"comm_fraction": 0.5, "bandwidth": 48}),
    "VGG19": ("data_parallel", 240, {"comm_fraction": 0.5, "bandwidth": 48}),
    "ResNet50": ("data_parallel", 120, {"comm_fraction": 0.25, "bandwidth": 20}),
    "WideResNet101": ("data_parallel", 240, {"comm_fraction": 0.4, "bandwidth": 40}),
    "BERT": ("data_parallel", 180, {"comm_fraction": 0.35, "bandwidth": 35}),
    "RoBERTa": ("data_parallel", 180, {"comm_fraction": 0.35, "bandwidth": 38}),
    "XLM": ("data_parallel", 240, {"comm_fraction": 0.45, "bandwidth": 45}),
    "CamemBERT": ("data_parallel", 180, {"comm_fraction": 0.3, "bandwidth": 30}),
    "GPT-1": ("pipeline_parallel", 240, {"bandwidth": 45}),
    "GPT-2": ("tensor_parallel", 240, {"bandwidth": 25}),
    "GPT-3": ("hybrid_parallel", 240, {"bandwidth": 45}),
    "DLRM": ("pipeline_parallel", 120, {"bandwidth": 48}),
}


def profile_of(model: str, job: str) -> JobProfile:
    """The synthetic profile of catalogue ``model``, named ``job``; KeyError for another model."""
    kind, it, kw = CATALOGUE[model]
    return synthetic_profile(kind, job, it, **kw)
