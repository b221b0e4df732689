"""The 13 models of CASSINI's testbed (§5.1) as communication profiles built from what the paper states.

The paper's measured profiles are not public. Each model gets a kind (data, pipeline, tensor
or hybrid parallel: :mod:`.profiles`, shaped like Fig. 1), an iteration time, and the shape's
keyword arguments (Up fraction ``comm_fraction``, Up bandwidth in Gbps). The sources:

iteration times (Table 2, Fig. 3)
    The paper's co-located jobs run within about 10% of each other: Table 2's Th+CASSINI times
    are 163-168 ms on snapshots 2 and 3 and 164 / 180 ms on snapshot 4, so every model but one
    gets **165 ms** (one common period: co-located jobs keep their relative phase, as the
    paper's shifts assume). ResNet50 runs at **55 ms** = 165 / 3, a harmonic (Table 2
    snapshot 2: 55 ms under Themis, 59 ms under Th+CASSINI beside 163-168 ms jobs). The
    model-parallel models' times are not stated (Fig. 1 has no time scale in the text): 165 ms,
    drawn. Fig. 3's VGG16 at 255 ms is another batch size (not used, see :data:`VARIANTS`).
Up fractions
    VGG16 0.45: Fig. 3(c), an Up arc of 114 of 255 units (Down 141 units, 200 degrees).
    VGG11, VGG19 0.45: same family as VGG16 (Table 3: 507-549 MB); Fig. 2(c) interleaves two
    VGG19 perfectly at a 120 ms shift, which needs Up <= 0.5. WideResNet101 0.4: Table 2
    snapshot 1 scores 1.0 beside VGG16 (the two Up arcs fit in one circle: 0.4 + 0.45 <= 1).
    BERT 0.6: §2.3, BERT and VGG19 have no perfectly interleaving shift (0.6 + 0.45 > 1), and
    Table 2 snapshot 5 (BERT, VGG19, WideResNet101) scores 0.6 (Up arcs sum to 1.45).
    RoBERTa 0.6: Table 2 snapshot 4, two RoBERTa score 0.8 (overlap 0.2 of the circle at
    45 + 45 Gbps on 50 scores 0.83 here). XLM 0.65: §5.2 (Fig. 11), XLM and WideResNet101 are
    not compatible (0.65 + 0.4 > 1); Table 3's largest language model. CamemBERT 0.35 and
    ResNet50 0.3: drawn (the smallest models of their families, Table 3).
Up bandwidths (Fig. 1, Fig. 2, Table 2)
    45 Gbps for the data-parallel VGG, WideResNet101, RoBERTa and XLM: Fig. 2(b), a VGG19 alone
    fills the 50 Gbps NIC to about 44-45 Gbps (two sharing get about 22 each). BERT 40 and
    CamemBERT 30: drawn, below the larger models. ResNet50 **5 Gbps**: the headroom Table 2
    snapshot 2 needs (VGG19, VGG16 and ResNet50 score 1.0 on one 50 Gbps link while the VGG Up
    arcs cover 0.9 of the circle, so ResNet50's Up must fit beside a 45 Gbps Up: 45 + 5 <= 50).
    GPT-2 (tensor parallel) 25 Gbps: Fig. 1(c), "roughly 25 Gbps" in both passes. GPT-1
    (pipeline) 25 Gbps AllReduce with 15 Gbps activation peaks: Fig. 1(b)'s shape, the height
    drawn so that GPT-1 and GPT-2 fit on one link (Fig. 12: GPT-2-A is compatible with GPT-1).
    GPT-3 (hybrid) 45 Gbps peak: Fig. 1(d); not compatible with GPT-2 (Fig. 12: 45 + 25 > 50).
    DLRM (pipeline, model parallel in §5.2) 45 Gbps: drawn heavy, the stress test's contrast
    with ResNet50 (§5.3).

Batch-size variants (:data:`VARIANTS`): Table 2 names each snapshot's batch sizes; the same
model at another batch size has another Up fraction (fewer samples per iteration, the same
gradient volume) and iteration time. Snapshot 1's pair runs at 145 ms (Table 2: 138 / 148 ms,
read as one period, rounded to 5 ms); snapshot 3's VGG19 (1024) and VGG16 (1200) carry Up
fractions of 0.55 (drawn so that the pair scores about 0.9, Table 2); BERT (8) as BERT.

Used by the simulator's link model (:mod:`placement.sim.links`), which looks a trace job's
``model`` up here, by §5.1's workload (:mod:`placement.sim.cassini_workload`) and by Table 2's
snapshots (:mod:`placement.app.reproduce.cassini_snapshots`).
"""

from __future__ import annotations

from .profiles import JobProfile, synthetic_profile

__all__ = ["CATALOGUE", "VARIANTS", "profile_of", "variant_profile", "COMMON_PERIOD", "GOODPUT",
           "GOODPUT_ANALOGUE", "goodput_inputs"]

#: Table 2's co-located iteration times (163-168 ms), module docstring
COMMON_PERIOD = 165

# name: (kind, iteration ms, keyword arguments of the shape) -- sources in the module docstring
CATALOGUE: dict[str, tuple[str, int, dict]] = {
    "VGG11": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.45, "bandwidth": 45}),
    "VGG16": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.45, "bandwidth": 45}),
    "VGG19": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.45, "bandwidth": 45}),
    "ResNet50": ("data_parallel", COMMON_PERIOD // 3, {"comm_fraction": 0.3, "bandwidth": 5}),
    "WideResNet101": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.4, "bandwidth": 45}),
    "BERT": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.6, "bandwidth": 40}),
    "RoBERTa": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.6, "bandwidth": 45}),
    "XLM": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.65, "bandwidth": 45}),
    "CamemBERT": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.35, "bandwidth": 30}),
    "GPT-1": ("pipeline_parallel", COMMON_PERIOD, {"bandwidth": 25, "peak": 15}),
    "GPT-2": ("tensor_parallel", COMMON_PERIOD, {"bandwidth": 25}),
    "GPT-3": ("hybrid_parallel", COMMON_PERIOD, {"bandwidth": 45}),
    "DLRM": ("pipeline_parallel", COMMON_PERIOD, {"bandwidth": 45}),
}

# "model (batch size)" of Table 2: (catalogue model, iteration ms, shape overrides) -- module docstring
VARIANTS: dict[str, tuple[str, int, dict]] = {
    "WideResNet101 (800)": ("WideResNet101", 145, {}),
    "VGG16 (1400)": ("VGG16", 145, {}),
    "VGG19 (1400)": ("VGG19", COMMON_PERIOD, {}),
    "VGG16 (1700)": ("VGG16", COMMON_PERIOD, {}),
    "ResNet50 (1600)": ("ResNet50", COMMON_PERIOD // 3, {}),
    "VGG19 (1024)": ("VGG19", COMMON_PERIOD, {"comm_fraction": 0.55}),
    "VGG16 (1200)": ("VGG16", COMMON_PERIOD, {"comm_fraction": 0.55}),
    "RoBERTa (12)": ("RoBERTa", COMMON_PERIOD, {}),
    "BERT (8)": ("BERT", COMMON_PERIOD, {}),
}


def profile_of(model: str, job: str) -> JobProfile:
    """The profile of catalogue ``model``, named ``job``; KeyError for another model."""
    kind, it, kw = CATALOGUE[model]
    return synthetic_profile(kind, job, it, **kw)


def variant_profile(variant: str, job: str) -> JobProfile:
    """The profile of a Table 2 batch-size variant (:data:`VARIANTS`), named ``job``."""
    model, it, over = VARIANTS[variant]
    kind, _, kw = CATALOGUE[model]
    return synthetic_profile(kind, job, it, **{**kw, **over})


# Goodput inputs (Pollux §3, :mod:`placement.sim.goodput`) for Pollux on §5.1's workload: every
# value is **drawn** (CASSINI gives none of them). Each model borrows the measured application of
# the Pollux authors closest to it (same family of network and data): its initial, maximum and
# per-GPU batch sizes and its gradient noise scale ``M0 var / sqr`` at the start, middle and end
# of training (measured on ``instances/data/pollux/traces/<analogue>/validation-<M0>.csv``).
GOODPUT_ANALOGUE: dict[str, str] = {
    "VGG11": "cifar10", "VGG16": "cifar10", "VGG19": "cifar10", "ResNet50": "imagenet",
    "WideResNet101": "imagenet", "BERT": "bert", "RoBERTa": "bert", "XLM": "bert", "CamemBERT": "bert",
    "GPT-1": "bert", "GPT-2": "bert", "GPT-3": "bert", "DLRM": "ncf",
}
# analogue: (M0, max batch, min local batch, max local batch, noise scale at start / middle / end)
_ANALOGUE_DATA = {
    "cifar10": (128, 4096, 32, 1024, (72, 4944, 38658)),
    "imagenet": (200, 12800, 20, 200, (928, 11397, 14427)),
    "bert": (12, 384, 4, 12, (423, 1124, 1124)),
    "ncf": (256, 32768, 32, 32768, (18565, 20766195, 59131515)),
}
# Up (communication) fraction of the iteration for the shapes without one in CATALOGUE (drawn).
_COMM_DRAWN = 0.4


def goodput_inputs(model: str) -> dict:
    """Drawn goodput inputs of catalogue ``model`` (labelled ``"source": "drawn"``): batch limits
    and noise scales of its analogue, and §3.2 throughput parameters from its iteration time
    ``t`` and communication fraction ``f`` at the analogue's initial local batch ``m``:
    ``T_grad = (1 - f) t`` split 20 % fixed / 80 % per sample (``alpha_c``, ``beta_c``),
    ``alpha_n = f t`` across nodes with retrogression ``alpha_n / 20``, a quarter of that within
    a node, and ``gamma = 1`` (no compute/communication overlap: CASSINI's Up phase follows the
    Down phase). KeyError for another model."""
    kind, it, kw = CATALOGUE[model]
    analogue = GOODPUT_ANALOGUE[model]
    m0, max_b, lo, hi, noise = _ANALOGUE_DATA[analogue]
    f = kw.get("comm_fraction", _COMM_DRAWN)
    t = it / 1000.0
    m = max(lo, min(hi, m0))
    t_grad = (1 - f) * t
    a_n = f * t
    perf = (0.2 * t_grad, 0.8 * t_grad / m, a_n, a_n / 20, a_n / 4, a_n / 80, 1.0)
    return {"analogue": analogue, "init_batch_size": m0, "max_batch_size": max_b, "local_bsz": (lo, hi),
            "perf_params": perf, "noise_scale": noise, "source": "drawn"}


GOODPUT: dict[str, dict] = {name: goodput_inputs(name) for name in CATALOGUE}
