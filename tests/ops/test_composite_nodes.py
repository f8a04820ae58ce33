"""Ops ember composes from several ops but PyTorch runs as one kernel: the graph node users
see as grad_fn must carry PyTorch's name (its in-place form too, not a copy's), and the
gradient through it must match."""

import math

import numpy as np
import pytest
import torch

import ember

D = torch.tensor(np.linspace(0.2, 0.9, 12, dtype=np.float32).reshape(3, 4))

CASES = {
    "dist": lambda m, t: m.dist(t, t.detach() + 1.0),
    "dist_inf": lambda m, t: m.dist(t, t.detach() * 0.5, math.inf),
    "pdist": lambda m, t: m.nn.functional.pdist(t),
    "renorm": lambda m, t: m.renorm(t, 2, 0, 1.0),
    "deg2rad": lambda m, t: t.deg2rad(),
    "rad2deg": lambda m, t: t.rad2deg(),
    "logaddexp": lambda m, t: t.logaddexp(t.detach() * 2),
    "logaddexp2": lambda m, t: t.logaddexp2(t.detach() * 2),
    "xlogy_number_other": lambda m, t: t.xlogy(2.0),
    "xlogy_number_input": lambda m, t: m.xlogy(2.0, t),
    "xlogy_tensors": lambda m, t: t.xlogy(t.detach()),
    "copysign_number": lambda m, t: t.copysign(-1.0),
    "copysign_tensor": lambda m, t: t.copysign(-t.detach()),
    "sinc": lambda m, t: t.sinc(),
}


def _both(fn):
    a = D.numpy()
    t = torch.tensor(a, requires_grad=True)
    e = ember.tensor(a, requires_grad=True)
    return (t, fn(torch, t)), (e, fn(ember, e))


@pytest.mark.parametrize("name", list(CASES))
def test_node_name_and_gradient(name):
    (t, rt), (e, re) = _both(CASES[name])
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    rt.sum().backward()
    re.sum().backward()
    # (transcendentals and vectorised reductions: a few float32 ulps, not bit for bit)
    np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("call", [("deg2rad_",), ("rad2deg_",), ("xlogy_", 2.0),
                                  ("copysign_", -1.0), ("sinc_",), ("renorm_", 2, 0, 1.0)],
                         ids=lambda c: c[0])
def test_inplace_node_is_the_ops_not_a_copy(call):
    name, *args = call

    def run(m, t):
        y = t * 1
        return getattr(y, name)(*args), y

    (t, (rt, _)), (e, (re, _)) = _both(run)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    rt.sum().backward()
    re.sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_inplace_on_a_view_keeps_the_view_nodes():
    def run(m, t):
        y = t * 1
        v = y[0]
        v.sinc_()
        return v, y

    (_, (vt, yt)), (_, (ve, ye)) = _both(run)
    assert type(ve.grad_fn).__name__ == type(vt.grad_fn).__name__ == "AsStridedBackward0"
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__


@pytest.mark.parametrize("name,want", [("complex", "ComplexBackward0"),
                                       ("polar", "PolarBackward0")])
def test_complex_from_parts_node_and_gradient(name, want):
    # torch.complex / torch.polar are one kernel in PyTorch (ember stacks the parts and
    # views them as complex): grad_fn carries PyTorch's name, the gradient reaches both parts
    a, b = D.numpy(), D.numpy()[::-1].copy()
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    rt, re = getattr(torch, name)(ta, tb), getattr(ember, name)(ea, eb)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == want
    (rt * (1 - 2j)).real.sum().backward()
    (re * (1 - 2j)).real.sum().backward()
    # (cos / sin of float32 in polar: a few ulps, not bit for bit)
    np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-6)
