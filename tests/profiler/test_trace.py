"""The Chrome trace: valid JSON with "traceEvents", one complete event per op call, nested
in time as the profile nests; tensorboard_trace_handler's file as torch names it."""

import glob
import gzip
import json
import os
import re

import torch
import torch.profiler as tprof

import ember
import ember.profiler as eprof


def _profiled(lib, prof_mod, **kw):
    a = lib.ones(4)
    with prof_mod.profile(**kw) as prof:
        with prof_mod.record_function("five adds"):
            for _ in range(5):
                a + a
        a.relu()
    return prof


def _trace(prof, path):
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return json.load(f)


def _complete(trace, cat=None):
    return [e for e in trace["traceEvents"]
            if e.get("ph") == "X" and (cat is None or e.get("cat") == cat)]


def test_chrome_trace_is_json_with_one_event_per_op_call(tmp_path):
    e = _trace(_profiled(ember, eprof, record_shapes=True), tmp_path / "e.json")
    t = _trace(_profiled(torch, tprof, record_shapes=True), tmp_path / "t.json")
    for trace in (e, t):
        assert trace["schemaVersion"] == 1 and isinstance(trace["traceEvents"], list)
        ops = [ev["name"] for ev in _complete(trace, "cpu_op")]
        assert ops.count("aten::add") == 5 and ops.count("aten::relu") == 1
        ranges = [ev["name"] for ev in _complete(trace, "user_annotation")]
        assert ranges == ["five adds"]
    # ember's trace has exactly the ops it ran: nothing but the five adds and the relu
    assert [ev["name"] for ev in _complete(e, "cpu_op")] == ["aten::add"] * 5 + ["aten::relu"]
    add = _complete(e, "cpu_op")[0]
    assert add["args"]["Input Dims"] == [[4], [4]]
    assert set(add) >= {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"}


def test_chrome_trace_times_nest(tmp_path):
    trace = _trace(_profiled(ember, eprof), tmp_path / "e.json")
    block = _complete(trace, "user_annotation")[0]
    adds = [ev for ev in _complete(trace, "cpu_op") if ev["name"] == "aten::add"]
    for ev in adds:
        assert block["ts"] <= ev["ts"] and ev["ts"] + ev["dur"] <= block["ts"] + block["dur"]
    assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(adds, adds[1:]))


def test_chrome_trace_gz_and_metadata(tmp_path):
    prof = _profiled(ember, eprof)
    prof.add_metadata("run", "one")
    prof.add_metadata_json("cfg", '{"lr": 0.1}')
    path = str(tmp_path / "e.json.gz")
    prof.export_chrome_trace(path)
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    assert trace["run"] == "one" and trace["cfg"] == {"lr": 0.1}
    assert len(_complete(trace, "cpu_op")) == 6


def test_scheduled_steps_keep_their_numbers_in_the_trace(tmp_path):
    traces, keys = [], []

    def ready(prof):
        traces.append(_trace(prof, tmp_path / f"{len(traces)}.json"))
        keys.append({ev.key for ev in prof.events()})

    with eprof.profile(schedule=eprof.schedule(wait=0, warmup=1, active=2),
                       on_trace_ready=ready) as prof:
        for _ in range(3):
            ember.ones(2) + 1
            prof.step()
    names = [ev["name"] for ev in _complete(traces[0])]
    assert [n for n in names if n.startswith("ProfilerStep")] == ["ProfilerStep#1",
                                                                  "ProfilerStep#2"]
    assert "ProfilerStep*" in keys[0]


def test_tensorboard_trace_handler_writes_torchs_file(tmp_path):
    def run(lib, prof_mod, folder):
        with prof_mod.profile(on_trace_ready=prof_mod.tensorboard_trace_handler(
                str(folder), worker_name="worker0")):
            lib.ones(3) * 2
        return glob.glob(os.path.join(folder, "*"))

    e, t = run(ember, eprof, tmp_path / "e"), run(torch, tprof, tmp_path / "t")
    pattern = r"worker0\.\d+\.pt\.trace\.json"
    assert len(e) == len(t) == 1
    assert re.fullmatch(pattern, os.path.basename(e[0]))
    assert re.fullmatch(pattern, os.path.basename(t[0]))
    with open(e[0]) as f:
        assert "aten::mul" in [ev["name"] for ev in _complete(json.load(f))]


def test_tensorboard_trace_handler_gzip(tmp_path):
    with eprof.profile(on_trace_ready=eprof.tensorboard_trace_handler(str(tmp_path),
                                                                      use_gzip=True)):
        ember.ones(3) * 2
    (path,) = glob.glob(str(tmp_path / "*.pt.trace.json.gz"))
    with gzip.open(path, "rt") as f:
        assert json.load(f)["traceEvents"]
