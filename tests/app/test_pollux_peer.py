"""The Pollux page's generated peer-check section, from bench rows made by hand."""

from __future__ import annotations

from placement.app.bench.pollux import THEIR_TIRESIAS, peer_fragment


def _row(w, pol, ours, theirs):
    return {"workload": w, "policy": pol, "mean_jct_ours_s": ours, "mean_jct_theirs_s": theirs,
            "error_%": round(100 * (ours / theirs - 1), 1), "p50_ours/theirs": "10/11", "p90_ours/theirs": "20/22",
            "restarts": 7, "replay_violations": 0, "wall_s": 3.0}


def test_the_fragment_has_a_row_per_workload_and_the_mean_of_them():
    rows = [_row(1, "pollux", 1100, 1000), _row(1, "tiresias", 1800, 2000),
            _row(2, "pollux", 2100, 2000), _row(2, "tiresias", 3600, 4000)]
    text = peer_fragment(rows)
    lines = text.splitlines()
    assert "| 1 | 1,100 | 1,000 | +10.0% | 1,800 | 2,000 | -10.0% | 10/11 / 20/22 | 7 | 3 / 3 |" in lines
    # means: Pollux 1,600 vs 1,500 (+6.7%), Tiresias 2,700 vs 3,000 (-10.0%)
    assert "| mean of 2 | 1,600 | 1,500 | +6.7% | 2,700 | 3,000 | -10.0% | | | |" in lines
    assert "+5.0% to +10.0% per workload" in text and "Replay violations (`replay_check` + `goodput_check`): 0 in 4 runs" in text
    assert "beats our Tiresias by 41% on the mean (theirs by 50%)" in text


def test_their_tiresias_is_the_pollux_simulators():
    assert THEIR_TIRESIAS == {"queue_limits": (16 * 3600.0,), "round_interval": 60.0, "queue_order": "lists"}
