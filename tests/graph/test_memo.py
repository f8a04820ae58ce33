"""Built-in modules' calls inside a compiled call are taken from the followed graph
(graph/memo.py) while what they depend on stays as it was. Each case runs a training step
eagerly and compiled side by side on twin models, changes something between calls (to
both twins, the same way), and asserts the compiled step's losses, gradients and
parameters are eager's bits (the model computes no transcendental, so compiled code is
eager's arithmetic); `fn.call_memo_hits` says whether memos were taken. The steps are
compiled with `pure=False`: the memos serve calls whose Python runs (a step default mode
proves free of Python effects replays whole instead: tests/graph/test_proof.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import functional as F

PYTHON = {"pure": False}  # (the Python runs on every call: what the memos serve)


def _model(seed=0):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.1), nn.Linear(16, 16), nn.ReLU(),
                         nn.Dropout(0.25), nn.Linear(16, 3))


def _data(step, n=8):
    rng = np.random.default_rng(step)
    return (ember.tensor(rng.standard_normal((n, 6)).astype(np.float32)),
            ember.tensor(rng.integers(0, 3, n)))


def _training_step(model, opt, crit):
    def step(x, y):
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def _sgd(model):
    return ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def _twins(change=None, steps=8, loss_fn=None, make_opt=_sgd):
    """Run the step eagerly and compiled on twin models for `steps` calls, calling
    `change(model, i)` (or `change(model, i, opt)`) before call i on each; every loss,
    gradient and parameter must be the same bits. Returns the compiled step and the list
    of what `change` returned."""
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = make_opt(model)
        crit = loss_fn() if loss_fn else nn.CrossEntropyLoss()
        step = _training_step(model, opt, crit)
        fn = ember.compile(step, options=PYTHON) if compiled else step
        got, seen = [], []
        for i in range(steps):
            if change is not None:
                seen.append(change(model, i) if change.__code__.co_argcount == 2 else
                            change(model, i, opt))
            ember.manual_seed(100 + i)  # (dropout draws the same numbers in both runs)
            got.append(fn(*_data(i)).numpy())
            got += [p.grad.numpy().copy() for p in model.parameters() if p.grad is not None]
        got += [p.detach().numpy().copy() for p in model.parameters()]
        runs.append((fn, got, seen))
    (_, eager, seen_e), (fn, comp, seen_c) = runs
    assert len(eager) == len(comp)
    for a, b in zip(eager, comp):
        np.testing.assert_array_equal(a, b)
    assert seen_e == seen_c
    return fn, seen_c


def test_a_repeating_step_takes_its_module_calls_from_the_graph():
    fn, _ = _twins()
    assert fn.call_memo_hits >= 2 * 6  # (the model and the loss, from the third call on)


def test_eval_and_train_switch_between_calls():
    fn, _ = _twins(lambda m, i: m.train(i % 3 != 1) and None)
    assert fn.call_memo_hits > 0


def test_a_config_attribute_set_between_calls_is_read():
    def change(m, i):
        m[1].negative_slope = 0.1 + 0.05 * (i // 3)
        m[4].p = 0.5 if i >= 5 else 0.25

    fn, _ = _twins(change)
    assert fn.call_memo_hits > 0


def test_a_parameter_replaced_or_swapped_in_its_dict_is_the_one_used():
    def change(m, i):
        if i == 3:  # through __setattr__
            with ember.no_grad():
                m[0].weight = nn.Parameter(m[0].weight * 0.5)
        if i == 5:  # behind __setattr__'s back: only the dict changes
            with ember.no_grad():
                m[2]._parameters["bias"] = nn.Parameter(m[2].bias + 1.0)

    _twins(change)


def test_a_child_replaced_and_a_hook_added_between_calls():
    def change(m, i):
        if i == 3:
            m[3] = nn.LeakyReLU(0.2)
        if i == 5:
            calls = []
            m[2].register_forward_hook(lambda mod, args, out: calls.append(out.shape))
            m.calls = calls
        return len(getattr(m, "calls", ()))

    _, seen = _twins(change)
    assert seen == [0] * 6 + [1, 2]  # (the hook ran on every call after it was added)


def test_a_monkeypatched_forward_runs(monkeypatch):
    original = nn.Linear.forward

    def halved(self, x):
        return F.linear(x, self.weight, self.bias) * 0.5

    def change(m, i):  # (each run starts with the class as it was)
        monkeypatch.setattr(nn.Linear, "forward", halved if i >= 4 else original)

    _twins(change)


def test_requires_grad_and_grad_mode_changes_between_calls():
    def change(m, i):
        m[0].weight.requires_grad_(i not in (3, 4))
        if i == 4:
            m[0].weight.grad = None

    fn, _ = _twins(change)
    assert fn.call_memo_hits > 0


@pytest.mark.parametrize("loss", [nn.MSELoss, nn.L1Loss])
def test_other_losses_against_a_float_target(loss):
    def _float_data(step, n=8):
        rng = np.random.default_rng(step)
        return (ember.tensor(rng.standard_normal((n, 6)).astype(np.float32)),
                ember.tensor(rng.standard_normal((n, 3)).astype(np.float32)))

    global _data
    saved, _data = _data, _float_data
    try:
        fn, _ = _twins(loss_fn=loss)
    finally:
        _data = saved
    assert fn.call_memo_hits > 0


def test_an_input_laid_out_differently_is_not_taken_from_the_memo():
    model = _model()
    model.eval()
    fn = ember.compile(lambda x: model(x), options=PYTHON)
    x = ember.tensor(np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32))
    with ember.no_grad():
        for _ in range(3):
            np.testing.assert_array_equal(fn(x.t().contiguous()).numpy(),
                                          model(x.t()).numpy())
        hits = fn.call_memo_hits
        assert hits > 0
        np.testing.assert_array_equal(fn(x.t()).numpy(), model(x.t()).numpy())  # transposed
    assert fn.call_memo_hits == hits


def test_outputs_are_the_calls_own_and_pending_until_read():
    """What a memoised call returns is a fresh pending tensor with autograd's node, as the
    op would give: its grad_fn is eager's class, and backward reaches the parameters."""
    model = _model()
    model.eval()
    seen = []

    @ember.compile
    def f(x):
        out = model(x)
        seen.append((type(out.grad_fn).__name__, out.requires_grad))
        return out.sum()

    x = _data(0)[0]
    for _ in range(3):
        f(x).backward()
    assert f.call_memo_hits > 0
    eager = model(x)
    assert seen == [(type(eager.grad_fn).__name__, True)] * 3


# -- optimizer steps ---------------------------------------------------------------------

def _adamw(model):
    head = list(model[-1].parameters())
    body = [p for p in model.parameters() if all(p is not q for q in head)]
    return ember.optim.AdamW([{"params": body}, {"params": head, "lr": 3e-3}], lr=1e-2)


def test_a_repeating_step_takes_its_updates_from_the_graph():
    fn, _ = _twins(make_opt=_adamw)
    # (the model, the loss and the step, from the third call on)
    assert fn.call_memo_hits >= 3 * 6


def test_hyperparameters_changed_between_steps_are_used():
    def change(m, i, opt):
        opt.param_groups[0]["lr"] = 1e-2 / (1 + i // 3)  # (a scheduler, every 3 steps)
        if i == 5:
            opt.param_groups[1]["weight_decay"] = 0.5
            opt.param_groups[1]["betas"] = (0.8, 0.99)

    _twins(change, make_opt=_adamw)


def test_state_replaced_and_a_parameter_dropped_between_steps():
    def change(m, i, opt):
        if i == 3:  # (a new tensor in a parameter's state: its moment restarted)
            st = opt.state[m[0].weight]
            st["exp_avg"] = ember.zeros_like(st["exp_avg"])
        if i == 5:  # (the head's bias no longer stepped)
            opt.param_groups[1]["params"].pop()

    _twins(change, make_opt=_adamw)


def test_a_parameter_without_gradient_is_left_out_of_the_step():
    def change(m, i, opt):
        m[2].weight.requires_grad_(i % 4 != 2)
        if i % 4 == 2:
            m[2].weight.grad = None

    _twins(change, make_opt=_adamw)


def test_a_step_under_a_profiler_or_outside_a_recording_runs_as_usual():
    model = _model()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data(0)

    @ember.compile
    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    hits = step.call_memo_hits
    with ember.profiler.profile() as prof:
        step()
    assert step.call_memo_hits == hits  # (each op seen by the profiler)
    names = [e.name for e in prof.events()]
    assert any("sgd" in n for n in names) and any("addmm" in n for n in names)


def test_a_call_that_draws_random_numbers_is_never_taken_from_a_memo():
    """A Sequential that draws (its dropout) after the call drew already (another dropout
    first): it must draw anew each call, even while the masks of earlier calls are alive
    (the results kept, never backpropagated)."""
    def run(compiled) -> list:
        ember.manual_seed(0)
        drop = nn.Dropout(0.5)
        model = nn.Sequential(nn.Dropout(0.5), nn.Linear(6, 16), nn.Linear(16, 4))
        fn = (lambda x: model(drop(x)).sum())
        fn = ember.compile(fn, options=PYTHON) if compiled else fn
        x = _data(0)[0].requires_grad_()  # (autograd keeps each call's masks)
        kept = [fn(x) for _ in range(5)]
        return [float(k.detach()) for k in kept]

    eager = run(False)
    assert run(True) == eager and len(set(eager)) == 5


def test_a_first_step_that_records_otherwise_does_not_keep_the_memos_away():
    """SGD with momentum records its first step otherwise (it makes the buffers): the
    graph of the first call stays among the graphs seen, and the memos must be looked up
    on the graph the call follows, so that from the third call on the model, the loss
    and the step are all taken from memos."""
    def run(compiled):
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        step = _training_step(model, opt, nn.CrossEntropyLoss())
        fn = ember.compile(step, options=PYTHON) if compiled else step
        hits, losses = [], []
        for i in range(8):
            losses.append(fn(*_data(i)).item())
            hits.append(getattr(fn, "call_memo_hits", 0))
        return losses + [p.detach().numpy().tolist() for p in model.parameters()], hits

    (eager, _), (comp, hits) = run(False), run(True)
    assert comp == eager
    assert [b - a for a, b in zip(hits[2:], hits[3:])] == [3] * 5
