"""The fast paths of compiled calls keep eager's results: a recording that follows the
graph that ran at its place before (node for node, no meta rules) and leaves it where the
Python takes another path or an input comes laid out otherwise; the direct lowerings in
generated programs (NumPy views, products, elided copies) and the fused threshold
derivative, bit for bit eager's."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native, nn


def _bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))


def test_a_branch_in_the_middle_leaves_the_followed_graph():
    w = ember.randn(4, 3)

    def f(x, flag):
        z = x * 2
        if flag:
            z = z + 1  # (the second node differs between the two paths)
        return (z @ w).relu() * 3

    g = ember.compile(f)
    x = ember.randn(5, 4)
    for flag in [True, False, True, True, False, False, True]:
        _bits(g(x, flag).numpy(), f(x, flag).numpy())
    assert len(g.programs) == 2


def test_an_input_laid_out_otherwise_mid_graph_records_a_new_program():
    a = ember.randn(6, 6)

    def f(x, y):
        return (x + 1) * y  # y is first read by the second node

    g = ember.compile(f)
    x = ember.randn(6, 6)
    _bits(g(x, a).numpy(), f(x, a).numpy())
    _bits(g(x, a).numpy(), f(x, a).numpy())
    _bits(g(x, a.t()).numpy(), f(x, a.t()).numpy())  # same shape, other strides
    assert len(g.programs) == 2
    _bits(g(x, a).numpy(), f(x, a).numpy())


def test_a_shape_error_after_a_followed_prefix_is_eagers_and_the_next_call_works():
    w = ember.randn(4, 3)
    g = ember.compile(lambda x, m: (x * 2) @ m)
    x = ember.randn(3, 4)
    for _ in range(2):
        _bits(g(x, w).numpy(), ((x * 2) @ w).numpy())
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        g(x, x)
    _bits(g(x, w).numpy(), ((x * 2) @ w).numpy())


def test_a_training_step_runs_direct_lowerings_with_eagers_bits():
    def make():
        ember.manual_seed(3)
        return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    x = ember.randn(8, 16)
    y = ember.randint(0, 4, (8,))
    models = [make(), make()]
    opts = [ember.optim.SGD(m.parameters(), lr=0.1) for m in models]

    def step(model, opt):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    compiled = ember.compile(step)
    for _ in range(4):
        _bits(compiled(models[0], opts[0]).numpy(), step(models[1], opts[1]).numpy())
        for p, q in zip(models[0].parameters(), models[1].parameters()):
            _bits(p.detach().numpy(), q.detach().numpy())
    code = "\n".join(p.code for p in compiled.programs.values())
    assert ".swapaxes(" in code and "_matmul(" in code  # views and products run direct
    if native.available():
        assert "fused C loop: threshold_backward" in code


def test_elided_copies_leave_fresh_gradients():
    w = ember.randn(5, 3, requires_grad=True)
    x = ember.randn(4, 5)

    def f():
        (x @ w).sum().backward()

    g = ember.compile(f)
    g()
    first = w.grad
    w.grad = None
    g()
    assert w.grad is not first
    assert not np.shares_memory(w.grad.numpy(), first.numpy())
    _bits(w.grad.numpy(), first.numpy())
