"""A backward pass inside a compiled call replays the one recorded at the same place
(graph/backward.py) when the autograd graph repeats, and otherwise runs the engine: each
case below compares a compiled training step with the same step run eagerly, call after
call, bit for bit (the model fuses no transcendental, so compiled is eager's arithmetic),
and checks which way the backward went (`fn.backward_replays`)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import functional as F


def _model(seed=0):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 3))


def _data(step, n=8):
    rng = np.random.default_rng(step)
    return (ember.tensor(rng.standard_normal((n, 6)).astype(np.float32)),
            ember.tensor(rng.integers(0, 3, n)))


def _pair(make_step, steps=8):
    """Run `make_step(model, opt)` eagerly and compiled, side by side, `steps` times on the
    same data; every loss and final parameter the same bits. Returns the compiled step."""
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = ember.optim.Adam(model.parameters(), lr=1e-2)
        fn = make_step(model, opt)
        fn = ember.compile(fn) if compiled else fn
        losses = [fn(*_data(i), i) for i in range(steps)]
        runs.append((fn, [float(v) for v in losses],
                     [p.detach().numpy().copy() for p in model.parameters()],
                     [None if p.grad is None else p.grad.numpy().copy()
                      for p in model.parameters()]))
    (_, le, pe, ge), (fn, lc, pc, gc) = runs
    assert lc == le
    for a, b in zip(pc + gc, pe + ge):
        assert (a is None and b is None) or np.array_equal(a, b)
    return fn


def test_a_repeating_step_replays_its_backward():
    def make(model, opt):
        def step(x, y, i):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()
        return step

    fn = _pair(make)
    # calls 1 and 2 record (the second one against the first's graph), the rest replay
    assert fn.backward_replays == 6


def test_accumulating_into_existing_grads_runs_the_engine():
    def make(model, opt):
        def step(x, y, i):
            if i % 2 == 0:
                opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            if i % 2 == 1:
                opt.step()
            return loss.detach()
        return step

    _pair(make)  # (the two kinds of call alternate: each follows the other's graph, and
    # the engine runs every backward; what is checked is that the results stay eager's)


def test_a_hook_in_some_calls_runs_the_engine_there():
    def make(model, opt):
        def step(x, y, i):
            opt.zero_grad()
            h = model[0](x)
            if i % 3 == 2:
                h.register_hook(lambda g: g * 2)
            loss = F.cross_entropy(model[1:](h), y)
            loss.backward()
            opt.step()
            return loss.detach()
        return step

    _pair(make)


def test_a_frozen_layer_and_a_no_grad_prefix_change_the_autograd_graph_only():
    """Freezing a layer, or computing a prefix under no_grad, leaves the recorded ops as
    they were up to the backward; the autograd graph differs, and the replay of the pass
    remembered from the calls before (which trained the first layer) must not be used."""
    def make(model, opt):
        def step(x, y, i):
            opt.zero_grad()
            model[0].weight.requires_grad_(i != 10)
            if i == 6:
                with ember.no_grad():
                    h = model[0](x)
            else:
                h = model[0](x)
            loss = F.cross_entropy(model[1:](h), y)
            loss.backward()
            opt.step()
            return loss.detach()
        return step

    fn = _pair(make, steps=14)
    assert fn.backward_replays >= 6  # (calls 2-5, and again after each odd one)


def test_a_python_number_that_changes_reaches_the_gradient():
    def make(model, opt):
        def step(x, y, i):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) * (1.0 + 0.25 * i)
            loss.backward()
            opt.step()
            return loss.detach()
        return step

    _pair(make)


def test_retain_graph_and_a_second_backward():
    def make(model, opt):
        def step(x, y, i):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward(retain_graph=True)
            (loss * 0.5).backward()
            opt.step()
            return loss.detach()
        return step

    fn = _pair(make)
    assert fn.backward_replays > 0


@pytest.mark.parametrize("mistake", ["second backward", "in-place on a saved tensor"])
def test_a_replayed_pass_frees_and_checks_as_the_engine(mistake):
    """After calls that replay, the same mistakes raise PyTorch's errors as eagerly."""
    model = _model()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y, i):
        opt.zero_grad()
        h = model[:2](x)  # (ReLU's node keeps its output)
        loss = F.cross_entropy(model[2:](h), y)
        if mistake == "in-place on a saved tensor" and i == 5:
            with ember.no_grad():
                h.mul_(2)
        loss.backward()
        if mistake == "second backward" and i == 5:
            loss.backward()
        opt.step()
        return loss.detach()

    fn = ember.compile(step)
    for i in range(5):
        fn(*_data(i), i)
    assert fn.backward_replays == 3
    with pytest.raises(RuntimeError) as got:
        fn(*_data(5), 5)
    with pytest.raises(RuntimeError) as want:
        step(*_data(5), 5)
    assert str(got.value) == str(want.value)


def test_a_transformer_step_replays_with_its_outputs_in_the_engines_order():
    """A replay makes the leaves' `.grad` in the order the engine did, so the graph it
    records is the same graph (outputs in the same order) and the next call replays too."""
    def run(compiled):
        ember.manual_seed(0)
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                           batch_first=True)
        head = nn.Linear(8, 3)
        opt = ember.optim.AdamW([*layer.parameters(), *head.parameters()], lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(head(layer(x).mean(1)), y)
            loss.backward()
            opt.step()
            return loss.detach()

        fn = ember.compile(step) if compiled else step
        rng = np.random.default_rng(0)
        losses = [float(fn(ember.tensor(rng.standard_normal((4, 5, 8)).astype(np.float32)),
                           ember.tensor(rng.integers(0, 3, 4)))) for _ in range(6)]
        return fn, losses, [p.detach().numpy() for p in layer.parameters()]

    _, le, pe = run(False)
    fn, lc, pc = run(True)
    assert lc == le and all(np.array_equal(a, b) for a, b in zip(pc, pe))
    assert fn.backward_replays == 4 and len(fn.graphs) == 1


def _model_loop(compile_model: bool, steps: int, tweak=None):
    """`torch.compile(model)` as most programs use it: the forward compiled, the loss,
    backward and step eager around it. Returns the compiled function (or None), the losses
    and the final parameters."""
    model = _model()
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    m = ember.compile(model) if compile_model else model
    losses = []
    for i in range(steps):
        x, y = _data(i)
        opt.zero_grad()
        out = m(x)
        loss = tweak(i, out, y) if tweak is not None else F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    fn = m.__dict__["_compiled_fn"] if compile_model else None
    return fn, losses, [p.detach().numpy().copy() for p in model.parameters()]


def _same_as_eager(steps=8, tweak=None):
    fn, losses, params = _model_loop(True, steps, tweak)
    _, eager_losses, eager_params = _model_loop(False, steps, tweak)
    assert losses == eager_losses
    for p, q in zip(params, eager_params):
        np.testing.assert_array_equal(p, q)
    return fn


def test_the_backward_of_a_compiled_model_replays_from_outside_it():
    """The loss and backward() run outside the compiled forward: the backward pass (through
    the loss's eager nodes and the forward's) replays once it has been seen, reading what
    the nodes saved as its inputs."""
    fn = _same_as_eager()
    assert fn.backward_replays >= 6


def test_an_outside_backward_that_changes_runs_the_engine():
    """A hook on the model's output, a retained graph, another loss: the pass differs from
    the one remembered (or cannot be replayed), and the results are still eager's."""
    def tweak(i, out, y):
        if i == 3:
            out.register_hook(lambda g: g * 2)
        if i == 5:
            return F.mse_loss(out, F.one_hot(y, 3).float())
        return F.cross_entropy(out, y)

    fn = _same_as_eager(tweak=tweak)
    assert fn.backward_replays >= 4
