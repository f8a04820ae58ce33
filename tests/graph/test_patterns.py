"""Pattern rewrites in compiled graphs (`graph/patterns.py`): cross_entropy's backward runs
as one kernel, with eager's gradients bit for bit, and only where nothing else reads the
value between the two kernels."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import native

pytestmark = pytest.mark.skipif(not native.available(), reason="no C compiler here")


def _data(rows=64, classes=10, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, classes)).astype(np.float32) * 3, \
        rng.integers(0, classes, rows)


def _grads(fn, x, y, compiled: bool, **kw):
    xe = ember.tensor(x, requires_grad=True)
    ye = ember.tensor(y)
    f = ember.compile(fn) if compiled else fn
    for _ in range(2):  # (the second call runs the cached program)
        xe.grad = None
        extra = f(xe, ye, **kw)
    return xe.grad.numpy(), extra, f


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"label_smoothing": 0.0},
                                {"ignore_index": 2}, {"weight": "w"}], ids=str)
def test_cross_entropy_backward_is_one_node_with_eager_bits(kw):
    x, y = _data()
    if kw.get("weight") == "w":
        kw = {"weight": ember.linspace(0.5, 2.0, 10)}

    def step(xe, ye, **kw):
        F.cross_entropy(xe, ye, **kw).backward()

    want, _, _ = _grads(step, x, y, False, **kw)
    got, _, f = _grads(step, x, y, True, **kw)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    (program,) = f.programs.values()
    assert "nll_log_softmax_backward" in program.code
    assert "nll_loss_backward" not in program.code.replace("nll_log_softmax_backward", "")


def test_a_gradient_read_between_the_two_kernels_keeps_them_apart():
    """`retain_grad` on the log-probabilities makes nll_loss's gradient a result of the
    graph: the two kernels stay, and both gradients are eager's."""
    x, y = _data(seed=1)

    def step(xe, ye):
        lp = F.log_softmax(xe, 1)
        lp.retain_grad()
        F.nll_loss(lp, ye).backward()
        return lp.grad

    want, want_lp, _ = _grads(step, x, y, False)
    got, got_lp, f = _grads(step, x, y, True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_lp.numpy(), want_lp.numpy())
    codes = "".join(p.code for p in f.programs.values())
    assert "nll_log_softmax_backward" not in codes and "nll_loss_backward" in codes


def test_softmax_then_log_is_not_the_pattern():
    """softmax (not log_softmax) then log and nll_loss: another backward, left as it is."""
    x, y = _data(seed=2)

    def step(xe, ye):
        F.nll_loss(F.softmax(xe, 1).log(), ye).backward()

    want, _, _ = _grads(step, x, y, False)
    got, _, f = _grads(step, x, y, True)
    np.testing.assert_array_equal(got, want)
    assert "nll_log_softmax_backward" not in "".join(p.code for p in f.programs.values())


def test_log_softmax_folds_in_only_when_the_loss_is_not_needed():
    """A step that returns its loss reads the log-probabilities: log_softmax stays a kernel
    of its own (its output feeds the loss and the fused backward); one that does not folds
    it into the backward kernel. Gradients and loss are eager's bits either way."""
    x, y = _data(seed=3)

    def returns_loss(xe, ye):
        loss = F.cross_entropy(xe, ye)
        loss.backward()
        return loss

    def returns_nothing(xe, ye):
        F.cross_entropy(xe, ye).backward()

    want, want_loss, _ = _grads(returns_loss, x, y, False)
    got, got_loss, f = _grads(returns_loss, x, y, True)
    np.testing.assert_array_equal(got, want)
    assert got_loss.item() == want_loss.item()
    (program,) = f.programs.values()
    assert "# softmax" in program.code and "nll_log_softmax_backward" in program.code
    _, _, f = _grads(returns_nothing, x, y, True)
    (program,) = f.programs.values()
    assert "# softmax" not in program.code and "logits': True" in repr(program._env)


def test_linear_bias_and_relu_fuse_into_one_loop_with_eager_bits():
    """Linear then ReLU: the product, then one loop adding the bias and applying ReLU
    (eager adds the bias into the product in place: the same additions). A Linear whose
    output is returned keeps its addmm (nothing to fuse with)."""
    rng = np.random.default_rng(4)
    x = ember.tensor(rng.standard_normal((32, 16)).astype(np.float32))
    lin1, lin2 = ember.nn.Linear(16, 24), ember.nn.Linear(24, 5)

    def forward(x):
        h = ember.relu(lin1(x))
        out = lin2(h)
        out.sum().backward()
        return out

    want = forward(x).detach().numpy()
    grads = [p.grad.numpy().copy() for p in (*lin1.parameters(), *lin2.parameters())]
    f = ember.compile(forward)
    for _ in range(2):
        for p in (*lin1.parameters(), *lin2.parameters()):
            p.grad = None
        got = f(x).detach().numpy()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    for p, g in zip((*lin1.parameters(), *lin2.parameters()), grads):
        np.testing.assert_array_equal(p.grad.numpy().view(np.uint32), g.view(np.uint32))
    (program,) = f.programs.values()
    assert "fused C loop: add, relu" in program.code
    assert program.code.count("# addmm") == 1  # (lin2's: its output is returned)
