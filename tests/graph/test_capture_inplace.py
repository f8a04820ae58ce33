"""In-place ops inside a compiled function: on a pending value they stay in the graph
(as torch.compile's functionalisation keeps them), with eager's values, gradients,
versions and errors; where another tensor would see the write, the graph ends there and
eager's in-place path runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import nn


def _run(f, *shapes, grad=True, seed=0):
    """(compiled result, eager result, compiled grads, eager grads, compiled function)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    cf = ember.compile(f)
    outs, grads = [], []
    for fn in (cf, f):
        xs = [ember.tensor(a, requires_grad=grad) for a in arrays]
        y = fn(*xs)
        if grad:
            y.sum().backward()
        outs.append(y.detach().numpy())
        grads.append([x.grad.numpy() if grad else None for x in xs])
    return outs[0], outs[1], grads[0], grads[1], cf


def _pointwise(x):
    y = x * 2.0
    y += 1.0
    y.relu_()               # saves its output, y: y is not written after this
    z = y * x
    z.sub_(x, alpha=2)
    return z.clamp_(-1.0, 3.0)


def _saved_old_value(x):
    y = x + 1.0
    y.mul_(x)               # the product's derivative reads y's old value (saved as a copy)
    y.abs_()
    return y


CASES = {"pointwise chain": (_pointwise, [(3, 4)]), "saved old value": (_saved_old_value, [(5,)])}


@pytest.mark.parametrize("name", list(CASES))
def test_inplace_on_a_pending_value_stays_in_the_graph(name):
    f, shapes = CASES[name]
    got, want, g, gw, cf = _run(f, *shapes)
    np.testing.assert_array_equal(got, want)  # the same ops in the same order
    for a, b in zip(g, gw):
        np.testing.assert_array_equal(a, b)
    assert cf.breaks == [] or all(b.reason != "eager op" for b in cf.breaks)


def test_fullgraph_with_inplace_relu_trains_as_torch():
    """torch.compile(fullgraph=True) accepts nn.ReLU(inplace=True) and `+=`: so does ember,
    with torch's numbers (same initial weights, five SGD steps)."""
    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4),
                                 lib.nn.ReLU(inplace=True), lib.nn.Flatten(),
                                 lib.nn.Linear(4 * 6 * 6, 2))

    x = np.random.default_rng(1).standard_normal((4, 3, 8, 8)).astype(np.float32)
    losses = {}
    for lib in (torch, ember):
        model = build(lib)
        if lib is ember:
            model.load_state_dict({k: ember.tensor(v.numpy())
                                   for k, v in build(torch).state_dict().items()})
        step = lib.compile(model, fullgraph=True) if lib is ember else model
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        xs = lib.tensor(x)
        losses[lib.__name__] = []
        for _ in range(5):
            opt.zero_grad()
            out = step(xs)
            out += 1.0
            loss = (out * out).mean()
            loss.backward()
            opt.step()
            losses[lib.__name__].append(loss.item())
    # BatchNorm's and the products' sums round in another order than torch's kernels
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-5)


WRITES_AFTER_SAVE = {
    "input saved": lambda x: (lambda y: (y * y, y.add_(3.0))[0])(x + 1.0),
    "output saved": lambda x: (lambda y: y.add_(1.0))((x * 2.0).exp()),
    "in-place output saved": lambda x: (lambda y: (y.relu_(), y.mul_(2.0))[1])(x * 2.0),
    "in-place output saved, used first": lambda x: (lambda y: (y.tanh_(), y * 1.0,
                                                               y.add_(1.0))[1])(x * 2.0),
}


@pytest.mark.parametrize("name", list(WRITES_AFTER_SAVE))
def test_a_value_autograd_saved_then_written_refuses_backward_as_torch(name):
    """eager, compiled and torch: the same refusal with the same message (an in-place op's
    output is the tensor itself, so writing into it later invalidates what it saved)."""
    f = WRITES_AFTER_SAVE[name]
    messages = []
    for lib, fn in ((torch, f), (ember, f), (ember, ember.compile(f))):
        x = lib.randn(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            fn(x).sum().backward()
        messages.append(str(e.value).split("Hint")[0])
    assert messages[1] == messages[2] == messages[0]


def test_a_view_of_the_written_value_sees_the_write():
    def f(x):
        y = x * 2.0
        v = y[0]          # a view of y: the write must show through it
        y.add_(1.0)
        return v * 1.0 + y.sum()

    got, want, g, gw, cf = _run(f, (3, 4))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(g[0], gw[0])
    assert any(b.reason == "eager op" for b in cf.breaks)  # (that write ended the graph)


def test_a_detached_alias_sees_the_write():
    def f(x):
        y = x * 2.0
        d = y.detach()
        y.add_(1.0)
        return d + 0.0

    got, want, *_ = _run(f, (4,), grad=False)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.asarray(want))


def test_errors_are_eagers():
    def broadcast(x):
        y = x * 1.0
        y.add_(ember.ones(2, 3))   # (3,) += (2, 3): the result does not fit y
        return y

    def leaf(x):
        x.add_(1.0)
        return x

    for f, exc, match in [(broadcast, RuntimeError, "doesn't match the broadcast shape"),
                          (leaf, RuntimeError, "leaf Variable that requires grad")]:
        for fn in (f, ember.compile(f)):
            with pytest.raises(exc, match=match):
                fn(ember.randn(3, requires_grad=True))


def test_no_grad_inference_with_inplace_ops_is_one_graph():
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(inplace=True), nn.Linear(8, 2),
                          nn.Hardtanh(inplace=True))
    model.eval()
    cm = ember.compile(model, fullgraph=True)
    x = ember.randn(5, 6)
    with ember.no_grad():
        got = cm(x)
        want = model(x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert cm._compiled_fn.breaks == [] and len(cm._compiled_fn.graphs) == 1
