"""ember.profiler against torch.profiler on the same programs: the keys and call counts of a
training step, where each event sits (its parent), record_function ranges, schedules."""

import warnings

import numpy as np
import pytest
import torch
import torch.profiler as tprof

import ember
import ember.profiler as eprof
from ember._core import dispatch
from ember._core.ranges import ranges


def _train_step(lib, prof_mod, steps=1, **kwargs):
    """A two-layer MLP's training step under `prof_mod.profile`, inside a `step` range."""
    rng = np.random.default_rng(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    y = lib.tensor([0, 1, 1])
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], **kwargs) as prof:
        for _ in range(steps):
            with prof_mod.record_function("step"):
                loss = nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
    return prof


def _counts(prof) -> dict:
    return {e.key: e.count for e in prof.key_averages()}


def _parents(prof) -> dict:
    """name -> the set of names of its parents."""
    out: dict = {}
    for e in prof.events():
        out.setdefault(e.name, set()).add(e.cpu_parent.name if e.cpu_parent else None)
    return out


# ember runs one kernel where PyTorch's profiler shows a composite around its kernel and
# helpers inside it; these keys are ember's own, each for the reason given.
EMBER_ONLY = {
    "aten::_fused_sgd_": "one fused update per parameter: PyTorch's fused=True SGD kernel's "
                         "name (torch's default for-loop SGD shows aten::add_)",
    "aten::clone": "AccumulateGrad copies a transposed gradient into a contiguous .grad (the "
                   "layout contract); torch's TBackward0 hands it a contiguous one",
    "aten::ones": "ones_like makes its tensor with the ones factory (torch: empty_like + fill_)",
}

# The keys of work both do, which must match in name and number of calls.
SAME_COUNTS = [
    "step", "aten::addmm", "aten::mm", "aten::relu", "aten::_log_softmax", "aten::nll_loss",
    "aten::ones_like", "aten::nll_loss_backward", "aten::_log_softmax_backward_data",
    "aten::threshold_backward", "aten::sum",
    "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad",
    "autograd::engine::evaluate_function: NllLossBackward0", "NllLossBackward0",
    "autograd::engine::evaluate_function: LogSoftmaxBackward0", "LogSoftmaxBackward0",
    "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0",
    "autograd::engine::evaluate_function: ReluBackward0", "ReluBackward0",
    "autograd::engine::evaluate_function: TBackward0", "TBackward0",
    "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
    "torch::autograd::AccumulateGrad",
]


def test_training_step_keys_are_torchs_and_counts_match():
    e, t = _counts(_train_step(ember, eprof)), _counts(_train_step(torch, tprof))
    assert set(e) - set(t) == set(EMBER_ONLY), "ember names a key torch does not have"
    for key in SAME_COUNTS:
        assert e[key] == t[key], key
    # torch's extra keys are the composites around ember's kernels and their helpers
    assert {"aten::linear", "aten::cross_entropy_loss", "aten::empty_strided"} <= set(t) - set(e)


def test_training_step_events_sit_where_torchs_do():
    """Each op runs inside the same range as in torch: the backward's products inside
    their node, the node inside the engine's evaluate_function, the update inside the
    optimizer's step, the forward's ops inside the user's range."""
    e, t = _parents(_train_step(ember, eprof)), _parents(_train_step(torch, tprof))
    assert e["aten::mm"] == t["aten::mm"] == {"AddmmBackward0"}
    for node in ("AddmmBackward0", "ReluBackward0", "NllLossBackward0", "TBackward0",
                 "torch::autograd::AccumulateGrad"):
        assert e[node] == t[node] == {f"autograd::engine::evaluate_function: {node}"}
    assert e["aten::threshold_backward"] == t["aten::threshold_backward"] == {"ReluBackward0"}
    assert e["aten::_fused_sgd_"] == t["aten::add_"] == {"Optimizer.step#SGD.step"}
    assert e["aten::relu"] == t["aten::relu"] == {"step"}
    assert e["Optimizer.step#SGD.step"] == t["Optimizer.step#SGD.step"] == {"step"}
    assert e["step"] == t["step"] == {None}


def test_times_add_up_as_torchs_do():
    """An event's total includes its children's totals; its self time does not."""
    prof = _train_step(ember, eprof)
    for ev in prof.events():
        assert ev.end_ns >= ev.start_ns
        children = sum(c.cpu_time_total for c in ev.cpu_children)
        assert ev.self_cpu_time_total == pytest.approx(ev.cpu_time_total - children)
        for c in ev.cpu_children:
            assert ev.start_ns <= c.start_ns <= c.end_ns <= ev.end_ns
    avg = {a.key: a for a in prof.key_averages()}
    step = avg["step"]
    assert step.cpu_time_total == pytest.approx(sum(
        a.self_cpu_time_total for a in avg.values()))
    mm = [ev for ev in prof.events() if ev.name == "aten::mm"]
    assert avg["aten::mm"].cpu_time_total == pytest.approx(sum(m.cpu_time_total for m in mm))
    assert avg["aten::mm"].cpu_time == pytest.approx(avg["aten::mm"].cpu_time_total / 3)


@pytest.mark.parametrize("lib,prof_mod", [(ember, eprof), (torch, tprof)],
                         ids=["ember", "torch"])
def test_record_function_ranges_nest(lib, prof_mod):
    @prof_mod.record_function("decorated")
    def inner(x):
        return x * 2

    x = lib.ones(3)
    with prof_mod.profile() as prof:
        with prof_mod.record_function("outer"):
            with prof_mod.record_function("middle"):
                inner(x)
            x + 1
        inner(x)
    events = {}
    for ev in prof.events():
        events.setdefault(ev.name, []).append(ev)
    chain = [ev.name for ev in _ancestors(events["aten::mul"][0])]
    assert chain == ["decorated", "middle", "outer"]
    assert [ev.name for ev in _ancestors(events["aten::mul"][1])] == ["decorated"]
    assert [ev.name for ev in _ancestors(events["aten::add"][0])] == ["outer"]
    assert len(events["decorated"]) == 2


def _ancestors(ev):
    out = []
    while ev.cpu_parent is not None:
        ev = ev.cpu_parent
        out.append(ev)
    return out


def test_record_function_without_a_profiler_does_nothing():
    with eprof.record_function("nothing") as r:
        ember.ones(2) + 1
    assert r._token is None and ranges.recorder is None


def test_profiler_leaves_the_stack_as_it_found_it():
    with pytest.raises(ValueError):
        with eprof.profile():
            with eprof.record_function("open"):
                raise ValueError("boom")
    assert dispatch.current_interpreter() is None
    assert dispatch._pushed[0] == 0 and ranges.recorder is None


def test_a_second_profile_inside_the_first_is_refused():
    with eprof.profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with eprof.profile():
                pass
    assert ranges.recorder is None


SCHEDULES = [
    dict(wait=1, warmup=1, active=2),
    dict(wait=1, warmup=1, active=2, repeat=2),
    dict(wait=0, warmup=2, active=1, repeat=1, skip_first=3),
    dict(wait=2, warmup=1, active=3, skip_first=2, skip_first_wait=1),
]


@pytest.mark.parametrize("kw", SCHEDULES)
def test_schedule_actions_are_torchs(kw):
    e, t = eprof.schedule(**kw), tprof.schedule(**kw)
    assert [e(i).name for i in range(25)] == [t(i).name for i in range(25)]


def test_schedule_refuses_what_torch_refuses():
    for kw in (dict(wait=-1, warmup=1, active=1), dict(wait=0, warmup=1, active=0)):
        with pytest.raises(AssertionError):
            tprof.schedule(**kw)
        with pytest.raises(AssertionError):
            eprof.schedule(**kw)
    with pytest.warns(UserWarning, match="warmup"):
        eprof.schedule(wait=1, warmup=0, active=1)


def _stepping(lib, prof_mod, kw, steps):
    """(step at which on_trace_ready ran, the ProfilerStep ranges and adds it saw)."""
    seen = []

    def ready(prof):
        names = [ev.name for ev in prof.events()]
        seen.append((prof.step_num, sorted(n for n in names if n.startswith("ProfilerStep")),
                     names.count("aten::add")))

    x = lib.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with prof_mod.profile(schedule=prof_mod.schedule(**kw), on_trace_ready=ready) as prof:
            for _ in range(steps):
                x + 1
                prof.step()
    return seen


@pytest.mark.parametrize("kw", SCHEDULES[:3])
def test_schedules_step_as_torchs(kw):
    assert _stepping(ember, eprof, kw, 12) == _stepping(torch, tprof, kw, 12)


def test_on_trace_ready_without_a_schedule_runs_at_exit():
    calls = []
    with eprof.profile(on_trace_ready=calls.append) as prof:
        ember.ones(2) * 3
    assert calls == [prof]


def test_autograd_profiler_names():
    from ember.autograd import profiler

    x = ember.ones(2)
    with profiler.profile(record_shapes=True) as prof:
        with profiler.record_function("block"):
            x * x
    names = [ev.name for ev in prof.function_events]
    assert names == ["block", "aten::mul"]
    assert "aten::mul" in prof.key_averages().table()
    assert prof.function_events[1].input_shapes == [[2], [2]]


def test_profile_memory_counts_what_an_op_allocates():
    def run(lib, prof_mod):
        with prof_mod.profile(profile_memory=True) as prof:
            x = lib.ones(1000)
            y = x * x
            del y
        return {a.key: (a.cpu_memory_usage, a.self_cpu_memory_usage)
                for a in prof.key_averages()}

    e, t = run(ember, eprof), run(torch, tprof)
    assert e["aten::mul"] == t["aten::mul"] == (4000, 4000)
    # (torch's ones allocates in its aten::empty child: its own self memory is 0)
    assert e["aten::ones"][0] == t["aten::ones"][0] == 4000


def test_with_stack_names_the_caller():
    def here():
        return ember.ones(2) + 1

    with eprof.profile(with_stack=True) as prof:
        here()
    add = next(ev for ev in prof.events() if ev.name == "aten::add")
    assert "here" in add.stack[0] and __file__ in add.stack[0]
    assert "Source Location" in prof.key_averages(group_by_stack_n=1).table()


def test_transforms_run_unchanged_under_the_profiler():
    """The recorder observes: vmap, grad and jvp give what they give without it (grad's
    result detached as outside any transform), and their ops are recorded."""
    from ember.func import grad, jvp, vmap

    x = ember.randn(4, 3)

    def f(v):
        return (v.sin() * 2).sum()

    plain = (vmap(grad(f))(x), jvp(f, (x[0],), (ember.ones(3),))[1], grad(f)(x[0]))
    with eprof.profile() as prof:
        seen = (vmap(grad(f))(x), jvp(f, (x[0],), (ember.ones(3),))[1], grad(f)(x[0]))
    for a, b in zip(plain, seen):
        assert ember.equal(a, b)
    assert not seen[2].requires_grad
    assert {"aten::sin", "aten::cos", "SinBackward0"} <= {e.key for e in prof.key_averages()}


@pytest.mark.parametrize("lib,prof_mod", [(ember, eprof), (torch, tprof)],
                         ids=["ember", "torch"])
def test_dataloader_batches_are_ranges(lib, prof_mod):
    data = lib.utils.data.TensorDataset(lib.arange(10.0))
    loader = lib.utils.data.DataLoader(data, batch_size=4)
    with prof_mod.profile() as prof:
        for (batch,) in loader:
            batch * 2
    counts = _counts(prof)
    # three batches, and the fourth call that ends the loop
    assert counts["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"] == 4
    assert counts["aten::mul"] == 3


def test_asking_for_cuda_warns_as_the_cpu_build_does():
    def messages(prof_mod):
        with pytest.warns(UserWarning) as record:
            with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU,
                                              prof_mod.ProfilerActivity.CUDA]):
                pass
        return [str(w.message) for w in record]

    assert messages(eprof) == messages(tprof) == [
        "CUDA is not available, disabling CUDA profiling"]
