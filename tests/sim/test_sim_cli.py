"""The simulator through the CLI: simulate writes its outputs, evaluate replays them,
generate trace writes an instance, and bad input is one error line, exit 2, nothing written."""

from __future__ import annotations

import csv
import json

import pytest

from placement.app.cli import main
from placement.sim import read_log, replay_check
from placement.sim.instance import load_instance, load_solution


def test_generate_simulate_evaluate(tmp_path, capsys):
    inst = tmp_path / "t.json"
    assert main(["generate", "trace", "--kind", "poisson", "--jobs", "60", "--max-gpus", "8",
                 "--cluster", "1x1x2x2x4", "--seed", "5", "-o", str(inst)]) == 0
    out = tmp_path / "run"
    assert main(["simulate", str(inst), "--policy", "fifo", "-o", str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"instance.json", "log.json", "log.csv", "jobs.csv", "timeseries.csv", "summary.json",
            "utilization_queue.png", "slo_violations.png", "jct_cdf.png"} <= names
    summary = json.loads((out / "summary.json").read_text())
    assert summary["replay_ok"] and summary["jobs"] == 60 and summary["gpus"] == 16
    # per-job CSV agrees with the log read back independently
    sim = load_instance(json.loads((out / "instance.json").read_text()))
    log = read_log(out / "log.csv")
    assert replay_check(sim.trace, sim.cluster, log, perf=sim.perf_model()) == []
    assert load_solution(sim, json.loads((out / "log.json").read_text())).to_csv() == log.to_csv()
    with open(out / "jobs.csv") as f:
        jobs = list(csv.DictReader(f))
    finish = {r.job: r.time for r in log if r.event == "finish"}
    assert len(jobs) == 60
    assert all(float(j["jct"]) == pytest.approx(finish[j["job"]] - float(j["submit"])) for j in jobs)
    assert summary["metrics"]["mean_jct_s"] == pytest.approx(
        sum(float(j["jct"]) for j in jobs) / 60)
    capsys.readouterr()
    assert main(["evaluate", str(out / "instance.json"), str(out / "log.json")]) == 0
    assert "violations: none" in capsys.readouterr().out
    # a broken log: evaluate reports the violation and exits 1
    doc = json.loads((out / "log.json").read_text())
    last_finish = max(i for i, r in enumerate(doc["log"]) if r[1] == "finish")
    del doc["log"][last_finish]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    assert main(["evaluate", str(out / "instance.json"), str(tmp_path / "bad.json")]) == 1
    assert "violations (" in capsys.readouterr().out


def test_simulate_same_seed_same_outputs(tmp_path):
    args = ["simulate", "philly", "--start", "1200", "--hours", "2", "--sample", "80",
            "--cluster", "1x1x1x2x8"]
    assert main(args + ["-o", str(tmp_path / "a")]) == 0
    assert main(args + ["-o", str(tmp_path / "b")]) == 0
    for name in ("log.csv", "jobs.csv", "timeseries.csv", "instance.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("argv, field", [
    (["simulate", "philly", "--policy", "nope"], "--policy"),
    (["simulate", "philly", "--cluster", "2x2"], "--cluster"),
    (["simulate", "philly", "--hours", "-1"], "--hours"),
    (["simulate", "philly", "--sample", "0"], "--sample"),
    (["simulate", "missing.csv"], "missing.csv"),
    (["simulate", "philly", "--option", "colour=1", "--hours", "1"], "--option"),
])
def test_bad_input_one_line_exit_2(tmp_path, capsys, argv, field):
    out = tmp_path / "o"
    assert main(argv + ["-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and field in err[0]
    assert not out.exists()


def test_bad_trace_row_and_cluster_spec(tmp_path, capsys):
    t = tmp_path / "p.csv"
    t.write_text("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,x,66.0,aa\n")
    assert main(["simulate", str(t), "-o", str(tmp_path / "o")]) == 2
    assert "row 2 column 'num_gpus'" in capsys.readouterr().err
    spec = tmp_path / "c.yaml"
    spec.write_text("regions:\n- name: r\n  clusters:\n  - name: c\n    racks:\n    - name: k\n"
                    "      machines:\n      - {name: m, gpus: 0, gpu_type: V100}\n")
    assert main(["simulate", "philly", "--hours", "1", "--cluster", str(spec), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "regions[0].clusters[0].racks[0].machines[0].gpus" in err and str(spec) in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"", b"a,b\n1,2\n",
                                     b"# placement-trace v1\nid,submit,gpus,duration\n" + b"x" * 200_000 + b",1,1,1\n"])
def test_unreadable_trace_files(tmp_path, capsys, content):
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    assert main(["simulate", str(p), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {p}")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_whole_philly_trace_through_fifo_passes_replay():
    from placement.instances.traces import trace_path
    from placement.solvers.online.fifo import FIFO

    from placement.sim import Cluster, load_philly, simulate

    trace = load_philly(trace_path("philly.csv"))
    cluster = Cluster.uniform(racks=8, machines=8, gpus_per_machine=8)
    res = simulate(trace, cluster, FIFO(backfill=True))
    assert res.unfinished == () and res.stats["starts"] == len(trace) == 82247
    assert replay_check(trace, cluster, res.log) == []


def test_an_empty_window_is_one_line_naming_the_trace_span(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["simulate", "philly", "--start", "99999", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --start: the window") and "span" in err[0]
    assert not out.exists()


def test_what_simulate_accepts_evaluate_reads_back(tmp_path, capsys):
    """An openb node list: names and CPUs are checked as a cluster spec checks them, and the
    cluster's name is one a spec accepts, so the written instance.json reads back."""
    from placement.instances.traces import trace_path

    lines = trace_path("openb_node_list_gpu_node.csv").read_text().splitlines()[:30]
    odd = tmp_path / "my nodes (v2).csv"
    odd.write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    assert main(["simulate", "philly", "--start", "1200", "--hours", "1", "--cluster", str(odd), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(out / "instance.json"), str(out / "log.json")]) == 0
    capsys.readouterr()
    for col, value, expect in [(0, "n" * 150, "column 'sn': must be a name of 1-100"),
                               (1, str(10**9), "column 'cpu_milli': must be at most")]:
        rows = [line.split(",") for line in lines]
        rows[1][col] = value
        bad = tmp_path / "bad.csv"
        bad.write_text("\n".join(",".join(r) for r in rows) + "\n")
        assert main(["simulate", "philly", "--hours", "1", "--cluster", str(bad), "-o", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expect in err, err
