"""The performance models' data checked before a run: no job runs at full speed for a model the
model does not know without the caller being told; nothing outside the goodput measurements
reaches the run as a traceback."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import placement
from placement.app.cli import main
from placement.app.run import perf_note
from placement.errors import InstanceError
from placement.sim.cluster import Cluster
from placement.sim.instance import SimInstance
from placement.sim.perf import DallyPerf, near_miss
from placement.sim.trace import Job, Trace, write_trace_csv


def _df(models):
    n = len(models)
    return pd.DataFrame({"id": [f"j{i}" for i in range(n)], "submit": [float(i) for i in range(n)],
                         "gpus": [16] * n, "duration": [3600.0] * n, "model": models})


def _one_line(capsys, expect: str):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    assert expect in err, err


@pytest.mark.parametrize("given,meant", [("resnet18", "ResNet18"), ("ResNet-18", "ResNet18"),
                                         ("bert-large", "BERT-large"), ("VGG-11", "VGG11")])
def test_a_miscased_dally_model_is_refused_with_the_name_meant(given, meant):
    # Before: the job ran at full speed (rate 1.0) with no word, as DallyPerf has no row for it.
    assert DallyPerf().rate(Job("a", 0.0, 16, 1.0, model=given), "network") == 1.0
    with pytest.raises(InstanceError) as e:
        placement.simulate(_df(["ResNet18", given]), perf="dally", progress=False)
    msg = str(e.value)
    assert "'j1' model" in msg and f"did you mean {meant!r}?" in msg and "\n" not in msg
    with pytest.raises(InstanceError, match="did you mean"):
        placement.simulate(_df([given]), perf="dally-machine", progress=False)


def test_near_miss_prefers_the_same_letters_and_gives_nothing_for_a_stranger():
    assert near_miss("alexnet", ["AlexNet", "ResNet50"]) == "; did you mean 'AlexNet'?"
    assert near_miss("zzz", ["AlexNet", "ResNet50"]) == ""


def test_jobs_without_a_model_under_dally_warn_and_known_models_do_not():
    df = _df(["ResNet18", "ResNet18"]).drop(columns="model")
    with pytest.warns(UserWarning, match="2 of 2 multi-GPU jobs name no model"):
        run = placement.simulate(df, perf="dally", progress=False)
    assert run.metrics["finished"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = placement.simulate(_df(["ResNet18", "AlexNet"]), perf="dally", progress=False)
    assert run.metrics["finished"] == 2
    with warnings.catch_warnings():   # under ideal the model never matters: no warning
        warnings.simplefilter("error")
        placement.simulate(df, perf="ideal", progress=False)


def test_the_command_line_notes_jobs_without_a_model(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # the table and files, not the plots
    f = tmp_path / "t.csv"
    write_trace_csv(Trace.from_dataframe(_df(["x", "y"]).drop(columns="model")), f)
    assert main(["simulate", str(f), "--perf", "dally", "--cluster", "1x1x2x2x8", "-o", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: 2 of 2 multi-GPU jobs name no model") and "Traceback" not in err


def test_an_unknown_model_on_the_command_line_is_one_line_and_writes_nothing(tmp_path, capsys):
    f = tmp_path / "t.csv"
    write_trace_csv(Trace.from_dataframe(_df(["ResNet18", "Resnet50"])), f)
    out = tmp_path / "o"
    assert main(["simulate", str(f), "--perf", "dally", "-o", str(out)]) == 2
    _one_line(capsys, "did you mean 'ResNet50'?")
    assert not out.exists()


def test_goodput_refuses_models_it_has_not_measured_naming_the_applications():
    tr = Trace("t", (Job("a", 0.0, 2, 10.0, model="AlexNet"),))
    with pytest.raises(InstanceError, match="is not a model perf 'goodput' knows .*cifar10"):
        placement.simulate(tr, cluster="1x1x1x4x4", perf="goodput", progress=False)
    tr = Trace("t", (Job("a", 0.0, 2, 10.0, model=None),))
    with pytest.raises(InstanceError, match="model: None is not a model perf 'goodput' knows"):
        placement.simulate(tr, cluster="1x1x1x4x4", perf="goodput", progress=False)
    with pytest.raises(InstanceError, match="did you mean 'cifar10'"):
        placement.simulate(Trace("t", (Job("a", 0.0, 2, 10.0, model="CIFAR10"),)), cluster="1x1x1x4x4",
                           perf="goodput", progress=False)


def test_goodput_refuses_machines_and_jobs_beyond_the_measurements_before_the_run():
    ok = Trace("t", (Job("a", 0.0, 2, 10.0, model="cifar10"),))
    with pytest.raises(InstanceError) as e:
        perf_note(SimInstance(ok, Cluster.uniform(machines=2, gpus_per_machine=8), "goodput"))
    assert e.value.field == "--cluster" and "at most 4 GPUs" in e.value.message
    assert perf_note(SimInstance(ok, Cluster.uniform(machines=2, gpus_per_machine=4), "goodput")) is None
    big = Trace("t", (Job("a", 0.0, 65, 10.0, model="cifar10"),))
    with pytest.raises(InstanceError, match="'a' gpus: is 65; perf 'goodput' is measured on at most 64"):
        perf_note(SimInstance(big, Cluster.uniform(machines=20, gpus_per_machine=4), "goodput"))


def test_the_pollux_workload_on_eight_gpu_machines_is_refused_before_the_run(tmp_path, capsys):
    # Before: ValueError 'cifar10: no throughput for placement (8,)' after 15 s of simulation.
    out = tmp_path / "p1"
    argv = ["simulate", "pollux-workload-6", "--policy", "pollux", "--cluster", "1x1x2x4x8", "--hours", "0.1",
            "-o", str(out)]
    assert main(argv) == 2
    _one_line(capsys, "error: --cluster: 'uniform-1x1x2x4x8' has machines of 8 GPUs; perf 'goodput' is "
                      "measured on nodes of at most 4 GPUs")
    assert not out.exists()
    with pytest.raises(InstanceError, match="cluster: .*at most 4 GPUs"):
        placement.simulate("pollux-workload-6", cluster="1x1x2x4x8", policy="tiresias", hours=0.1, progress=False)


def test_a_philly_file_under_goodput_is_one_line(tmp_path, capsys):
    # Before: ValueError "model 'AlexNet' is none of the applications" from inside the run
    # (`placement simulate philly --perf goodput`; here three rows of the same format).
    f = tmp_path / "philly.csv"
    f.write_text("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-03 10:00:00,60,2,120,vc1\n"
                 "2017-10-03 10:01:00,60,1,60,vc1\n2017-10-03 10:02:00,30,4,120,vc2\n")
    assert main(["simulate", str(f), "--perf", "goodput", "-o", str(tmp_path / "o")]) == 2
    _one_line(capsys, "is not a model perf 'goodput' knows (bert, cifar10, deepspeech2, imagenet, ncf, yolov3)")
