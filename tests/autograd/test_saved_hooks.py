"""saved_tensors_hooks and save_on_cpu against torch: how often pack and unpack run, that
what unpack returns is what backward uses, and that a packed tensor skips the version check.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _run(lib, build, backwards=1):
    """Counts of pack/unpack calls and the gradient of `build(lib, x)` under clone hooks."""
    counts = {"pack": 0, "unpack": 0}

    def pack(t):
        counts["pack"] += 1
        return t.clone()

    def unpack(t):
        counts["unpack"] += 1
        return t

    x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = build(lib, x)
    for i in range(backwards):
        y.backward(retain_graph=i < backwards - 1)
    return counts, x.grad.numpy()


class Square:
    """A custom Function (new style) that saves its input and its output."""

    @staticmethod
    def make(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0], output)

            @staticmethod
            def backward(ctx, g):
                x, _ = ctx.saved_tensors
                return 2 * x * g

        return Sq


CASES = {
    "exp_times_sin": lambda lib, x: (x.exp() * x.sin()).sum(),  # saves a result and inputs
    "matmul": lambda lib, x: (x.reshape(3, 1) @ x.reshape(1, 3)).sum(),
    "sum_only": lambda lib, x: (x + 1).sum(),  # nothing saved: no pack at all
    "function": lambda lib, x: Square.make(lib).apply(x).sum(),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("backwards", [1, 2])
def test_pack_unpack_counts_and_grads(name, backwards):
    got = _run(ember, CASES[name], backwards)
    want = _run(torch, CASES[name], backwards)
    assert got[0] == want[0]
    # (exp, sin: transcendentals, not correctly rounded: a few ulps of slack)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-14)


def test_unpacked_value_is_what_backward_uses():
    # the unpack hook doubles the saved input of sin: cos(2x) instead of cos(x)
    def grad(lib):
        x = lib.tensor([0.25, 1.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
            x.sin().sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(grad(ember), grad(torch), rtol=1e-14)  # (cos: not exact)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_packed_tensor_skips_version_check(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        c = b.sin()
    b.mul_(2)  # would raise at backward without the hooks
    c.sum().backward()
    assert a.grad.shape == (2,)
    d = b.sin()
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        d.sum().backward()


def test_innermost_hooks_win_and_stack_unwinds():
    def calls(lib):
        seen = []
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append("outer") or t,
                                                    lambda t: t):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append("inner") or t,
                                                        lambda t: t):
                y = x.sin()
            z = x.cos()
        w = x.exp()
        (y + z + w).sum().backward()
        return seen

    assert calls(ember) == calls(torch) == ["inner", "outer"]


def test_save_on_cpu():
    def grad(lib):
        x = lib.tensor([0.5, -0.5, 3.0], requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (x * x).tanh().sum()
        return lib.autograd.grad(y, x)[0].numpy()

    np.testing.assert_allclose(grad(ember), grad(torch), rtol=1e-6)  # (tanh: not exact)


def _disable_errors(lib):
    graph = lib.autograd.graph
    out = []
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        try:
            with graph.disable_saved_tensors_hooks("no hooks here"):
                pass
        except RuntimeError as e:
            out.append(str(e))
    with graph.disable_saved_tensors_hooks("outer"):
        with graph.disable_saved_tensors_hooks("inner"):
            try:
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as e:
                out.append(str(e))
        try:
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        except RuntimeError as e:
            out.append(str(e))
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again
        out.append("ok")
    return out


def test_disable_saved_tensors_hooks():
    assert _disable_errors(ember) == _disable_errors(torch) == [
        "no hooks here", "inner", "outer", "ok"]
