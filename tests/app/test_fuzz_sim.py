"""Fuzzing the simulator's commands: exit 0 or 1, or exit 2 with one line; never a traceback.

Hypothesis builds ``simulate`` command lines from small traces in our CSV format with cells
replaced by strange values, cluster shorthands and spec documents with wrong values, every
registered policy with options of every JSON kind (right and wrong keys), and windows; then
``evaluate`` on what simulate wrote, ``generate trace`` with strange counts, and ``sweep``
specs. Any exception escaping the CLI is a failure, and a refused command writes nothing.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.app.cli import main
from placement.sim.policies import policy_names

CELL = st.one_of(
    st.integers(-5, 40).map(str), st.just(""), st.just("abc"), st.just("1e400"), st.just("nan"), st.just("-0"),
    st.just("9" * 5000), st.just("2.5"), st.just("x" * 300), st.sampled_from(["V100", "T4", "A100"]),
)
JSON = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.just(10**40), st.floats(allow_nan=False),
    st.text(max_size=6), st.just([1, 2]), st.just([3250, 7200]), st.just({"t0": [0, 0, 0, 2]}), st.just({}),
    st.just({"w_age": 2}), st.just([[1]]), st.just("x" * 300), st.just([0, 0]),
)
KEYS = st.sampled_from(["backfill", "preempt", "timers", "history", "window", "queue_limits", "high_skew",
                        "migration_cost", "gms", "quota_share", "quotas", "data", "data_seed", "n_tables",
                        "prefilter_min", "replication_delay", "assignment", "order", "levels", "bogus", "seed"])
CLUSTER = st.one_of(
    st.sampled_from(["1x1x2x2x8", "1x1x1x2x4:T4", "2x1x1x2x8", "1x1x2x8x8"]),
    st.builds(lambda a, b, c: f"{a}x1x{b}x{c}x8", st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
    st.sampled_from(["", "x", "1x1x1x1x0", "1x1x1x1x99999999999", "-1x1x1x1x8", "1x1x1x1x8:" + "T" * 200]),
)


@st.composite
def trace_csv(draw):
    rows = []
    for i in range(draw(st.integers(1, 12))):
        row = [f"j{i}", str(draw(st.integers(0, 50))), str(draw(st.sampled_from([1, 2, 4, 8]))),
               str(draw(st.integers(1, 100))), draw(st.sampled_from(["a", "b"])), "0",
               draw(st.sampled_from(["", "", "V100", "T4"]))]
        if draw(st.integers(0, 4)) == 0:
            row[draw(st.integers(0, len(row) - 1))] = draw(CELL)
        rows.append(",".join(row))
    return "# placement-trace v1\nid,submit,gpus,duration,tenant,priority,gpu_type\n" + "\n".join(rows) + "\n"


def _run(capsys, argv):
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc in (0, 1, 2), (argv, rc, err)
    if rc == 2:
        lines = err.strip().splitlines()
        assert lines and lines[-1].startswith("error: ") and "Traceback" not in err, (argv, err)
    return rc


FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(csv=trace_csv(), cluster=CLUSTER, policy=st.sampled_from(policy_names()),
       options=st.lists(st.tuples(KEYS, JSON), max_size=2), window=st.sampled_from([[], ["--hours", "0.01"],
                                                                                     ["--start", "1e9"]]))
def test_simulate_and_evaluate_never_raise(tmp_path_factory, capsys, csv, cluster, policy, options, window, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # what is refused, not plots
    d = tmp_path_factory.mktemp("fz")
    (d / "t.csv").write_text(csv)
    out = d / "out"
    argv = ["simulate", str(d / "t.csv"), "--cluster", cluster, "--policy", policy, *window, "-o", str(out)]
    for k, v in options:
        argv += ["--option", f"{k}={json.dumps(v)}"]
    rc = _run(capsys, argv)
    if rc == 2:
        assert not out.exists()
    else:
        _run(capsys, ["evaluate", str(out / "instance.json"), str(out / "log.json")])


@FUZZ
@given(doc=st.fixed_dictionaries({"name": st.one_of(st.just("c"), JSON), "regions": st.one_of(
    JSON, st.just([{"name": "r", "clusters": [{"name": "c", "racks": [{"name": "k", "machines": [
        {"name": "m", "gpus": 8, "gpu_type": "V100", "count": 2}]}]}]}]))}),
    field=st.sampled_from(["gpus", "count", "cpus", "gpu_type", "name"]), value=JSON)
def test_cluster_specs_never_raise(tmp_path_factory, capsys, doc, field, value, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # what is refused, not plots
    d = tmp_path_factory.mktemp("fc")
    try:
        doc["regions"][0]["clusters"][0]["racks"][0]["machines"][0][field] = value
    except (TypeError, KeyError, IndexError):
        pass
    (d / "c.json").write_text(json.dumps(doc))
    _run(capsys, ["simulate", "philly", "--start", "1200", "--hours", "0.5", "--cluster", str(d / "c.json"),
                  "-o", str(d / "o")])


@FUZZ
@given(spec=st.sampled_from(["cassini-testbed.json", "cassini-testbed-clos.json"]),
       field=st.sampled_from(["kind", "racks", "servers_per_rack", "gpus_per_server", "server_capacity",
                              "oversubscription", "racks_per_pod", "uplinks_per_rack", "cores", "link_capacity",
                              "bogus"]),
       value=st.one_of(JSON, st.sampled_from(["tree", "clos", 3, 1, 0, 10**9])),
       policy=st.sampled_from(["themis", "themis+cassini", "tiresias+cassini"]))
def test_network_sections_never_raise(tmp_path_factory, capsys, spec, field, value, policy, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # what is refused, not plots
    from pathlib import Path

    d = tmp_path_factory.mktemp("fn")
    doc = json.loads((Path(__file__).resolve().parents[2] / "instances" / "clusters" / spec).read_text())
    doc["network"][field] = value
    (d / "c.json").write_text(json.dumps(doc))
    trace = ("# placement-trace v1\nid,submit,gpus,duration,tenant,priority,gpu_type,model\n"
             "a,0,3,60,t,0,,VGG16\nb,0,3,60,t,0,,VGG16\nc,5,6,30,t,0,,DLRM\n")
    (d / "t.csv").write_text(trace)
    rc = _run(capsys, ["simulate", str(d / "t.csv"), "--cluster", str(d / "c.json"), "--policy", policy,
                       "-o", str(d / "o")])
    assert (rc == 2) == (not (d / "o").exists())


@FUZZ
@given(kind=st.sampled_from(["batch", "poisson", "dally-batch", "dally-poisson", "cassini"]),
       flag=st.sampled_from(["--jobs", "--tenants", "--max-gpus", "--jobs-per-hour", "--seed"]),
       value=st.one_of(st.integers(-3, 10**25).map(str), st.sampled_from(["0", "1e400", "nan", "abc", "9" * 5000])))
def test_generate_trace_never_raises(tmp_path_factory, capsys, kind, flag, value):
    d = tmp_path_factory.mktemp("fg")
    jobs = [] if flag == "--jobs" else ["--jobs", "20"]
    rc = _run(capsys, ["generate", "trace", "--kind", kind, *jobs, flag, value, "-o", str(d / "t.json")])
    assert (rc == 0) == (d / "t.json").exists()


@FUZZ
@given(policies=st.lists(st.sampled_from([*policy_names(), "nope"]), min_size=1, max_size=2, unique=True),
       cluster=CLUSTER, options=st.dictionaries(st.sampled_from(["fifo", "private", "mast", "tiresias"]),
                                                st.dictionaries(KEYS, JSON, max_size=1), max_size=1))
def test_sweep_specs_never_raise(tmp_path_factory, capsys, policies, cluster, options, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # what is refused, not plots
    d = tmp_path_factory.mktemp("fs")
    spec = {"kind": "simulate", "policies": policies, "traces": [{"trace": "philly", "start": 1200, "hours": 0.2}],
            "clusters": [cluster], "seeds": [0], "options": options}
    (d / "s.json").write_text(json.dumps(spec))
    rc = _run(capsys, ["sweep", str(d / "s.json"), "-o", str(d / "o"), "--workers", "0"])
    if rc == 2:
        assert not (d / "o").exists()
