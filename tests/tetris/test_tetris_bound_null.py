"""The NULL-demand floor of the Tetris page's "Where the gap lives at scale": a (g,k) whose ML jobs
have NULL share n pays at least w_k n^2 / (2 R') in (2) (R' regions supply its GPU type, the sigmoid
(8) is at least 1/2), and placed plus NULL demand is the instance's total, against the reference
evaluation (MAST Figure 4, expressions (1), (2), (7), (8))."""

import numpy as np
import pytest
from placement.instances import generate_tetris

from placement.tetris.evaluation import evaluate


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_null_share_floor_is_below_the_gpu_balance_term(seed):
    inst = generate_tetris(30, 60, 4, seed=seed, n_gpu_types=2, n_priorities=3)
    a = inst.arrays
    rng = np.random.default_rng(seed)
    floors = []
    for _ in range(20):
        home = rng.integers(0, inst.n_regions, size=inst.n_tables)
        ev = evaluate(inst, home)
        null = a.job_ml & (ev.job_region < 0)
        N = np.zeros(a.total_demand.shape)
        np.add.at(N, (a.job_gpu[null], a.job_prio[null]), a.job_gh[null])
        assert np.array_equal(ev.demand.sum(axis=0) + N, a.total_demand)
        # NULL jobs pay all their bytes in (1)
        assert a.job_size[null].sum() <= ev.cross_region_bytes
        floor = 0.0
        for g, k in zip(*np.nonzero(a.total_demand), strict=True):
            n = N[g, k] / a.total_demand[g, k]
            floor += a.prio_w[k] * n ** 2 / (2 * np.count_nonzero(a.supply[:, g]))
        assert floor <= ev.gpu_balance + 1e-12
        floors.append(floor)
    assert max(floors) > 0   # random homes split jobs: the floor is not vacuous
