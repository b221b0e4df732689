"""The 13 models of CASSINI's testbed (§5.1) as communication profiles built from what the paper states
(GPT-2 and GPT-3 in two parallelizations: model-parallel, and data-parallel for Fig. 11's trace).

The paper's measured profiles are not public. Each model gets a kind (data, pipeline, tensor
or hybrid parallel: :mod:`.profiles`, shaped like Fig. 1), an iteration time, and the shape's
keyword arguments (Up fraction ``comm_fraction``, Up bandwidth in Gbps). The sources:

iteration times (Table 2's Themis column)
    Co-located jobs under Themis run within 3% of each other in Table 2 (205 / 199, 220 / 220,
    176 / 177, 210 / 208 ms), so every model but one gets **one common period** (co-located jobs
    keep their relative phase, as the paper's shifts assume), and ResNet50 a **quarter** of it
    (snapshot 2 under Themis: 55 ms beside 220 ms). Its value, :data:`COMMON_PERIOD` = 140 ms, is
    the median of the five snapshots' periods fitted so that the fluid model's Themis (the
    snapshot's jobs started together) meets Table 2's Themis column, rounded to 20 ms
    (:func:`placement.app.reproduce.cassini_snapshots.fitted_common_period`; a test recomputes it).
    The gains are ratios and do not depend on the period's scale. The model-parallel models'
    times are not stated (Fig. 1 has no time scale in the text): the common period, drawn.
Up fractions
    VGG16 0.45: Fig. 3(c), an Up arc of 114 of 255 units (Down 141 units, 200 degrees).
    VGG11, VGG19 0.45: same family as VGG16 (Table 3: 507-549 MB); Fig. 2(c) interleaves two
    VGG19 perfectly at a 120 ms shift, which needs Up <= 0.5. BERT 0.6: §2.3, BERT and VGG19
    have no perfectly interleaving shift (0.6 + 0.45 > 1). XLM 0.65: §5.2 (Fig. 11), XLM and
    WideResNet101 are not compatible (0.65 + 0.4 > 1); Table 3's largest language model.
    WideResNet101 0.4, RoBERTa 0.6 (as BERT), CamemBERT 0.35 and ResNet50 0.3: drawn, not
    fitted (Table 2's compatibility scores are CASSINI's results, never a target).
Up bandwidths (Fig. 1, Fig. 2, Table 2)
    45 Gbps for the data-parallel VGG, WideResNet101, RoBERTa and XLM: Fig. 2(b), a VGG19 alone
    fills the 50 Gbps NIC to about 44-45 Gbps (two sharing get about 22 each). BERT 40 and
    CamemBERT 30: drawn, below the larger models. ResNet50 **5 Gbps**: drawn
    small, as §5.5 says its network demand "is not significant and can co-exist with the other
    jobs".
    GPT shapes per Fig. 1: GPT-1 data parallel (Fig. 1(a)), Up 0.5 at 30 Gbps, drawn so that it
    fits beside GPT-2's 15 Gbps activation peaks (§5.4, Fig. 12: GPT-2-A is placed with a
    compatible GPT-1); GPT-2 pipeline parallel (Fig. 1(b)), three 15 Gbps activation peaks
    (drawn) and a 45 Gbps AllReduce; GPT-3 hybrid (Fig. 1(d)), 45 Gbps peak, not compatible with
    GPT-2 (Fig. 12). §5.2 trains only DLRM model-parallel on Fig. 11's trace: there GPT-2 and
    GPT-3 run data-parallel (``GPT-2-DP``, ``GPT-3-DP``: Up 0.6 and 0.65 at 45 Gbps, drawn as the
    large language models BERT and XLM).
    DLRM (pipeline, model parallel in §5.2) 45 Gbps: drawn heavy, the stress test's contrast
    with ResNet50 (§5.3).

Batch-size variants (:data:`VARIANTS`): Table 2 names each snapshot's batch sizes. VGG19
(1400) and VGG16 (1700) (snapshot 2) are read as the catalogue's profiles; at a smaller batch
the compute phase shrinks in proportion and the gradient volume stays, so VGG19 (1024) and
VGG16 (1200) (snapshot 3) carry Up fractions ``0.45 / (0.45 + 0.55 b / b0)`` = 0.528 and 0.537
(ours: compute linear in the batch); the other variants are their model's profile. A
snapshot's period is fitted on its Themis column (the reproduction's ``snapshot period``).

Used by the simulator's link model (:mod:`placement.sim.links`), which looks a trace job's
``model`` up here, by §5.1's workload (:mod:`placement.sim.cassini_workload`) and by Table 2's
snapshots (:mod:`placement.app.reproduce.cassini_snapshots`).
"""

from __future__ import annotations

from .profiles import JobProfile, synthetic_profile

__all__ = ["CATALOGUE", "READINGS", "PROFILES", "VARIANTS", "profile_of", "variant_profile", "period_of", "COMMON_PERIOD", "GOODPUT",
           "GOODPUT_ANALOGUE", "goodput_inputs"]

#: the common period (ms): the median of Table 2's snapshot periods fitted on its Themis column,
#: rounded to 20 ms (module docstring)
COMMON_PERIOD = 140

# name: (kind, iteration ms, keyword arguments of the shape) -- sources in the module docstring
CATALOGUE: dict[str, tuple[str, int, dict]] = {
    "VGG11": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.45, "bandwidth": 45}),
    "VGG16": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.45, "bandwidth": 45}),
    "VGG19": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.45, "bandwidth": 45}),
    "ResNet50": ("data_parallel", COMMON_PERIOD // 4, {"comm_fraction": 0.3, "bandwidth": 5}),
    "WideResNet101": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.4, "bandwidth": 45}),
    "BERT": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.6, "bandwidth": 40}),
    "RoBERTa": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.6, "bandwidth": 45}),
    "XLM": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.65, "bandwidth": 45}),
    "CamemBERT": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.35, "bandwidth": 30}),
    "GPT-1": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.5, "bandwidth": 30}),
    "GPT-2": ("pipeline_parallel", COMMON_PERIOD, {"bandwidth": 45, "peak": 15}),
    "GPT-3": ("hybrid_parallel", COMMON_PERIOD, {"bandwidth": 45}),
    "DLRM": ("pipeline_parallel", COMMON_PERIOD, {"bandwidth": 45}),
}

#: the base batch of each VGG model's catalogue profile (Table 2 snapshot 2) and its Up fraction
_BASE_BATCH = {"VGG19": 1400, "VGG16": 1700}


def _batch_fraction(model: str, batch: int) -> float:
    """Up fraction of a VGG model at ``batch`` (module docstring: compute linear in the batch)."""
    f = CATALOGUE[model][2]["comm_fraction"]
    return round(f / (f + (1 - f) * batch / _BASE_BATCH[model]), 3)


#: the data-parallel GPT-2 and GPT-3 of Fig. 11's trace (module docstring): second readings of two models
READINGS: dict[str, tuple[str, int, dict]] = {
    "GPT-2-DP": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.6, "bandwidth": 45}),
    "GPT-3-DP": ("data_parallel", COMMON_PERIOD, {"comm_fraction": 0.65, "bandwidth": 45}),
}
#: every profile a trace job's ``model`` may name: the 13 models and the readings
PROFILES: dict[str, tuple[str, int, dict]] = {**CATALOGUE, **READINGS}

# "model (batch size)" of Table 2: (catalogue model, shape overrides) -- module docstring
VARIANTS: dict[str, tuple[str, dict]] = {
    "WideResNet101 (800)": ("WideResNet101", {}),
    "VGG16 (1400)": ("VGG16", {}),
    "VGG19 (1400)": ("VGG19", {}),
    "VGG16 (1700)": ("VGG16", {}),
    "ResNet50 (1600)": ("ResNet50", {}),
    "VGG19 (1024)": ("VGG19", {"comm_fraction": _batch_fraction("VGG19", 1024)}),
    "VGG16 (1200)": ("VGG16", {"comm_fraction": _batch_fraction("VGG16", 1200)}),
    "RoBERTa (12)": ("RoBERTa", {}),
    "BERT (8)": ("BERT", {}),
}


def period_of(model: str, common: int) -> int:
    """``model``'s iteration (ms) when the common period is ``common``: a quarter for ResNet50."""
    return common // 4 if model == "ResNet50" else common


def profile_of(model: str, job: str) -> JobProfile:
    """The profile of catalogue ``model`` (or a reading of :data:`READINGS`), named ``job``;
    KeyError for another model."""
    kind, it, kw = PROFILES[model]
    return synthetic_profile(kind, job, it, **kw)


def variant_profile(variant: str, job: str, common: int = COMMON_PERIOD, overrides: bool = True) -> JobProfile:
    """The profile of a Table 2 batch-size variant (:data:`VARIANTS`), named ``job``, at the common
    period ``common`` (:func:`period_of`); ``overrides=False``: its model's catalogue shape."""
    model, over = VARIANTS[variant]
    kind, _, kw = CATALOGUE[model]
    return synthetic_profile(kind, job, period_of(model, common), **{**kw, **(over if overrides else {})})


# Goodput inputs (Pollux §3, :mod:`placement.sim.goodput`) for Pollux on §5.1's workload: every
# value is **drawn** (CASSINI gives none of them). Each model borrows the measured application of
# the Pollux authors closest to it (same family of network and data): its initial, maximum and
# per-GPU batch sizes and its gradient noise scale ``M0 var / sqr`` at the start, middle and end
# of training (measured on ``instances/data/pollux/traces/<analogue>/validation-<M0>.csv``).
GOODPUT_ANALOGUE: dict[str, str] = {
    "VGG11": "cifar10", "VGG16": "cifar10", "VGG19": "cifar10", "ResNet50": "imagenet",
    "WideResNet101": "imagenet", "BERT": "bert", "RoBERTa": "bert", "XLM": "bert", "CamemBERT": "bert",
    "GPT-1": "bert", "GPT-2": "bert", "GPT-3": "bert", "GPT-2-DP": "bert", "GPT-3-DP": "bert", "DLRM": "ncf",
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
