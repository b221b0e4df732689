"""CASSINI §5.1's workload as simulator traces: the Poisson trace, its model-parallel mix (Fig. 12)
and the DLRM + ResNet50 stress test (Fig. 13).

§5.1: "All models have an equal probability of occurrence and the training duration time is
randomly selected between 200 - 1,000 iterations"; a job's initial worker count is uniform in
1-12; arrivals are Poisson with the rate set by the *load*, "the average fraction of GPUs that
are serving active jobs" (80-100%). Here:

- models: the 13 of §5.1, drawn uniformly; on the Poisson trace (Fig. 11) only DLRM is
  model-parallel (§5.2: "we use model parallelism for the DLRM model ... and data parallelism
  for all the other DNN models"): GPT-1 is data-parallel as in Fig. 1(a), GPT-2 and GPT-3 are
  the catalogue's data-parallel ``GPT-2-DP`` and ``GPT-3-DP``; the model-parallel mix (Fig. 12)
  is GPT-1 (Fig. 1(a)), GPT-2 (pipeline, Fig. 1(b)), GPT-3 (hybrid, Fig. 1(d)) and DLRM;
- iterations: uniform integers in 200-1,000; a job's ``duration`` is its iterations times its
  profile's ideal iteration (s), so at 120-240 ms an iteration a job runs 24-240 s alone;
- arrival rate ``load * G / (E[workers] * E[duration])`` with ``E[workers] = 6.5`` and
  ``E[duration]`` the mean over the models of ``600 * iteration``: at load 1 on 24 GPUs about
  120 arrivals an hour and, by Little's law, about 3.7 jobs running at once;
- workers: uniform 1-12 (``workers`` may change the range, a regime-map knob).

Every field is labelled synthetic in the trace. Deterministic for a seed.
"""

from __future__ import annotations

import numpy as np

from ..cassini.catalogue import PROFILES
from .trace import Job, Trace

__all__ = ["ALL_MODELS", "MODEL_PARALLEL", "DATA_PARALLEL", "poisson_trace", "stress_trace", "multigpu_trace",
           "mp_dynamic_trace", "mean_duration_s"]

ALL_MODELS = ("VGG11", "VGG16", "VGG19", "ResNet50", "WideResNet101", "BERT", "RoBERTa", "XLM", "CamemBERT",
              "GPT-1", "GPT-2-DP", "GPT-3-DP", "DLRM")          # Fig. 11's 13 models (module docstring)
MODEL_PARALLEL = ("GPT-1", "GPT-2", "GPT-3", "DLRM")            # Fig. 12's mix
DATA_PARALLEL = tuple(m for m in ALL_MODELS if PROFILES[m][0] == "data_parallel")
_SYNTH = frozenset({"submit", "gpus", "duration", "model"})


def mean_duration_s(models, iterations: tuple[int, int] = (200, 1000)) -> float:
    """Mean ideal duration (s) of a job drawn from ``models`` with uniform ``iterations``."""
    return float(np.mean([PROFILES[m][1] for m in models])) * (iterations[0] + iterations[1]) / 2 / 1000.0


def poisson_trace(seed: int, *, gpus: int = 24, hours: float = 1.0, load: float = 1.0,
                  models=ALL_MODELS, iterations: tuple[int, int] = (200, 1000),
                  workers: tuple[int, int] = (1, 12)) -> Trace:
    """§5.1's Poisson trace (module docstring): ``hours`` of arrivals at ``load``."""
    if not (load > 0 and hours > 0):
        raise ValueError(f"load and hours: must be > 0, got {load}, {hours}")
    lo, hi = int(workers[0]), min(int(workers[1]), gpus)
    if not 1 <= lo <= hi:
        raise ValueError(f"workers: need 1 <= low <= high <= gpus, got {workers}")
    models = tuple(models)
    rng = np.random.default_rng(seed)
    rate = load * gpus / ((lo + hi) / 2 * mean_duration_s(models, iterations))   # jobs per second
    t, out = 0.0, []
    while True:
        t += float(rng.exponential(1.0 / rate))
        if t >= hours * 3600.0:
            break
        m = models[int(rng.integers(len(models)))]
        n_it = int(rng.integers(iterations[0], iterations[1] + 1))
        w = int(rng.integers(lo, hi + 1))
        out.append(Job(f"j{len(out)}-{m}", round(t, 3), w, n_it * PROFILES[m][1] / 1000.0, model=m,
                       synthetic=_SYNTH))
    return Trace(f"cassini-poisson-{seed}", tuple(out),
                 f"CASSINI §5.1 Poisson trace (synthetic): load {load}, {iterations[0]}-{iterations[1]} "
                 f"iterations, workers {lo}-{hi}, {len(models)} models")


def stress_trace(seed: int, *, iterations: int = 1000) -> Trace:
    """Fig. 13's dynamic trace on the 24-server testbed: at time 0 the cluster is busy with three
    6-worker jobs (18 GPUs; models drawn from the 11 others than ResNet50 and DLRM, ``3 *
    iterations`` each so they outlive the test), which a rack of 4 cannot hold, so they cross
    rack uplinks; 60 s later ResNet50 and DLRM arrive with 3 workers each and ``iterations``
    iterations, listed in that order (a scheduler serving ties in trace order places ResNet50
    first). Measured: the two arriving jobs' iterations (ids ``s0-ResNet50``, ``s1-DLRM``)."""
    rng = np.random.default_rng(seed)
    others = [m for m in ALL_MODELS if m not in ("ResNet50", "DLRM")]
    out = []
    for k in range(3):
        m = others[int(rng.integers(len(others)))]
        out.append(Job(f"b{k}-{m}", 0.0, 6, 3 * iterations * PROFILES[m][1] / 1000.0, model=m, synthetic=_SYNTH))
    for k, m in enumerate(("ResNet50", "DLRM")):
        out.append(Job(f"s{k}-{m}", 60.0, 3, iterations * PROFILES[m][1] / 1000.0, model=m, synthetic=_SYNTH))
    return Trace(f"cassini-stress-{seed}", tuple(out), "CASSINI Fig. 13 stress test (synthetic)")


def multigpu_trace(seed: int, *, iterations: int = 1000) -> Trace:
    """§5.6's dynamic trace on six two-GPU servers (Fig. 16): at time 0 two 3-GPU jobs run (models
    drawn from a mix of data- and model-parallel ones other than DLRM, ``3 * iterations`` each, as
    §5.6's XLM and ResNet50 beside which DLRM arrives); 60 s later DLRM and a drawn job arrive
    with 3 GPUs and ``iterations`` iterations each. Measured: every job's iterations."""
    rng = np.random.default_rng(seed)
    mix = [m for m in ALL_MODELS if m != "DLRM"] + ["GPT-2", "GPT-3"]
    out = []
    for k in range(2):
        m = mix[int(rng.integers(len(mix)))]
        out.append(Job(f"b{k}-{m}", 0.0, 3, 3 * iterations * PROFILES[m][1] / 1000.0, model=m, synthetic=_SYNTH))
    for k, m in enumerate(("DLRM", mix[int(rng.integers(len(mix)))])):
        out.append(Job(f"s{k}-{m}", 60.0, 3, iterations * PROFILES[m][1] / 1000.0, model=m, synthetic=_SYNTH))
    return Trace(f"cassini-multigpu-{seed}", tuple(out), "CASSINI §5.6 multi-GPU dynamic trace (synthetic)")


def mp_dynamic_trace(seed: int, *, iterations: int = 1000) -> Trace:
    """Fig. 14's dynamic trace with model parallelism (§5.4) on the 24-server testbed: at time 0
    three 6-worker jobs drawn from the model-parallel mix (GPT-1/2/3, DLRM; ``3 * iterations``
    each) train; 60 s later DLRM and a drawn GPT arrive with 3 workers and ``iterations``
    iterations each ("the arrival of multiple GPT and DLRM models while the cluster is training
    other model parallel jobs"). Measured: every job's iterations."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(3):
        m = MODEL_PARALLEL[int(rng.integers(len(MODEL_PARALLEL)))]
        out.append(Job(f"b{k}-{m}", 0.0, 6, 3 * iterations * PROFILES[m][1] / 1000.0, model=m, synthetic=_SYNTH))
    gpts = [m for m in MODEL_PARALLEL if m.startswith("GPT")]
    for k, m in enumerate(("DLRM", gpts[int(rng.integers(len(gpts)))])):
        out.append(Job(f"s{k}-{m}", 60.0, 3, iterations * PROFILES[m][1] / 1000.0, model=m, synthetic=_SYNTH))
    return Trace(f"cassini-mp-dynamic-{seed}", tuple(out), "CASSINI Fig. 14 dynamic model-parallel trace (synthetic)")
