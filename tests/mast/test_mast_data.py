"""Data placement for MAST's fast path: eligible regions from a Tetris solution (§3, §4.3)."""

import numpy as np
import pytest

from placement.app.policy_data import VARIANTS, tetris_placement

REGIONS = ["east", "west", "north"]
TYPES = ["A100", "V100"]
GPUS = np.array([[64, 0], [32, 32], [0, 64]])


@pytest.mark.parametrize("variant", VARIANTS)
def test_eligibility_is_all_tables_and_the_gpu_type(variant):
    dp = tetris_placement(REGIONS, TYPES, GPUS, variant=variant, n_tables=40, n_jobs=80, seed=3)
    type_regions = {g: {r for r in range(3) if GPUS[r, i] > 0} for i, g in enumerate(TYPES)}
    for i in range(60):
        g = TYPES[i % 2]
        tabs = dp.tables_of(f"job{i}", g)
        assert len(tabs) >= 1
        mask = dp.regions_holding(tabs)
        # brute force: a region holds a table when the table's mask has its bit
        expect = {r for r in range(3) if all(int(dp.present[t]) >> r & 1 for t in tabs)}
        assert {r for r in range(3) if mask >> r & 1} == expect
        assert type_regions[g]  # every type exists somewhere in this cluster
    # the same id maps to the same tables (seeded hash, independent of order)
    assert dp.tables_of("job7", "A100").tolist() == dp.tables_of("job7", "A100").tolist()


def test_slow_path_quality_shows_in_eligibility():
    rates = {}
    for v in VARIANTS:
        dp = tetris_placement(REGIONS, TYPES, GPUS, variant=v, n_tables=60, n_jobs=120, seed=1)
        type_mask = {g: sum(1 << r for r in range(3) if GPUS[r, i] > 0) for i, g in enumerate(TYPES)}
        ok = [dp.regions_holding(dp.tables_of(f"w{i}", TYPES[i % 2])) & type_mask[TYPES[i % 2]] != 0
              for i in range(300)]
        rates[v] = float(np.mean(ok))
    # replicas add copies on top of hill climbing's homes: never fewer eligible workloads
    assert rates["replicas"] >= rates["hill_climb"] - 1e-12
    assert rates["replicas"] == 1.0
    assert dp.stats["collocation_jobs"] == 1.0   # solvers/replicas.py's own measure agrees


def test_replication_adds_the_region():
    dp = tetris_placement(REGIONS, TYPES, GPUS, variant="v0", n_tables=20, n_jobs=40, seed=0)
    tabs = dp.tables_of("x", "A100")
    dp.replicate(tabs, 2)
    assert dp.regions_holding(tabs) >> 2 & 1


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="data"):
        tetris_placement(REGIONS, TYPES, GPUS, variant="magic")
