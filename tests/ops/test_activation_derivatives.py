"""The fused derivatives of sigmoid, tanh, SiLU and hardsigmoid (ops/activation_backward.py)
against PyTorch's sigmoid_backward, tanh_backward, silu_backward and hardsigmoid_backward: the
same arithmetic in the same order, so bit for bit given the same output (16-bit floats too:
float16's sigmoid_backward rounds after each op, the others once); the graphs create_graph
builds (nodes and values, hardsigmoid's refusal), forward mode and vmap."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops import activation_backward as ab
from ember.ops import gelu as ab_gelu
from native._differential import assert_bits

from helpers import same_message

DTYPES = ["float32", "float64", "bfloat16", "float16"]


def _data(dtype, n=20_000):
    rng = np.random.default_rng(3)
    x = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, -100.0, 100.0],
                        rng.standard_normal(n) * 4])
    g = np.concatenate([[1.0, -1.0, 2.0, 0.5, 1.0, np.inf, -3.0], rng.standard_normal(n)])
    t = getattr(torch, dtype)
    return torch.tensor(x, dtype=t), torch.tensor(g, dtype=t)


def _array(t: torch.Tensor, dtype: str) -> np.ndarray:
    """torch's tensor as the array ember's kernels take (16-bit floats through float32)."""
    wide = t.float() if t.dtype in (torch.float16, torch.bfloat16) else t
    return ember.tensor(wide.numpy(), dtype=getattr(ember, dtype))._array()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_kernel_is_torchs_bit_for_bit_given_its_output(name, dtype):
    x, g = _data(dtype)
    y = getattr(torch, name)(x)
    want = getattr(torch.ops.aten, f"{name}_backward")(g, y)
    member = getattr(ab, f"{name}_backward_p")
    with np.errstate(all="ignore"):
        got = member.kernel(*(_array(t, dtype) for t in (g, y)))
    assert_bits(np.asarray(got).astype(np.float64), want.double().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_silu_kernel_within_an_ulp_or_two_of_torchs(dtype):
    x, g = _data(dtype)
    want = torch.ops.aten.silu_backward(g, x).double().numpy()
    with np.errstate(all="ignore"):
        got = ab.silu_backward_p.kernel(*(_array(t, dtype) for t in (g, x))).astype(np.float64)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # (the exp's last bits differ; the terms are about g (1 + |x|): cancellation near the
    # derivative's zero is measured against them)
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    size = (g.double().abs() * (1 + x.double().abs())).numpy()
    assert (np.abs(got[finite] - want[finite]) <= 2 * eps * size[finite]).all()


def _fn(lib, name: str):
    if name == "gelu_tanh":
        return lambda t: lib.nn.functional.gelu(t, approximate="tanh")
    return lib.nn.functional.silu if name == "silu" else getattr(lib, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gelu_tanh_kernel_within_a_few_ulps_of_torchs(dtype):
    """PyTorch's order, NumPy's tanh for its vectorised one: a few ulps of the terms'
    size g (1 + |x|) (measured 3.5 in float32, 5.4 in float64 on 100,000 draws), 16-bit
    results rounded once from float32 as its kernel's: within one of their ulps."""
    x, g = _data(dtype)
    want = torch.ops.aten.gelu_backward(g, x, approximate="tanh").double().numpy()
    with np.errstate(all="ignore"):
        got = ab_gelu.gelu_tanh_backward_p.kernel(
            *(_array(t, dtype) for t in (g, x))).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    size = (g.double().abs() * (1 + x.double().abs())).numpy()
    ulps = 6 if dtype in ("float32", "float64") else 1
    assert (np.abs(got[finite] - want[finite]) <= ulps * eps * size[finite]).all()


def test_gelu_tanh_gradient_is_one_fused_node():
    x = ember.randn(5, 7, requires_grad=True)
    y = ember.nn.functional.gelu(x, approximate="tanh")
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "GeluBackwardBackward0"
    assert [type(n).__name__ for n, _ in g.grad_fn.next_functions if n is not None] == \
        ["AccumulateGrad"]  # (the kernel's one node over x, the sum's gradient constant)


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "silu", "gelu_tanh"])
def test_create_graph_builds_torchs_nodes_and_values(name):
    x = np.array([[-1.5, 0.5, 2.0, -0.25], [0.1, -3.0, 1.0, 0.7]])
    res = []
    for lib in (torch, ember):
        f = _fn(lib, name)
        t = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(f(t).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), t)
        res.append((type(g.grad_fn).__name__, g.detach().numpy(), gg.numpy()))
    assert res[0][0] == res[1][0]  # Sigmoid/Tanh/GeluBackwardBackward0; silu's a product
    # (the forwards' last bits are the libraries' own exp and tanh: a few ulps; GELU's
    # derivative cancels to 0.01 at x = -3 from terms near 1, so ulps of 1 there)
    atol = 1e-15 if name == "gelu_tanh" else 0
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-14, atol=atol)
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-13, atol=10 * atol)


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "silu", "gelu_tanh"])
def test_double_backward_through_the_fused_kernel_by_finite_differences(name):
    # (the fused kernels' own derivatives: gradcheck of the first gradient, whose graph
    # holds sigmoid_backward / tanh_backward / gelu_tanh_backward, and silu_backward's rules
    # called directly)
    f = _fn(ember, name)
    x = ember.tensor([[-1.5, 0.5, 2.0], [0.1, -3.0, 0.7]], dtype=ember.float64,
                     requires_grad=True)
    g = ember.tensor([[0.3, -1.0, 2.0], [1.5, 0.2, -0.7]], dtype=ember.float64,
                     requires_grad=True)
    if name == "silu":
        def first(x, g):
            return ab.smooth_grad(ab.silu_backward_p, g, x)
    else:
        def first(x, g):
            return ember.autograd.grad(f(x), x, g, create_graph=True)[0]
    assert ember.autograd.gradcheck(first, (x, g))
    assert ember.autograd.gradgradcheck(first, (x, g))


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "silu", "gelu_tanh"])
def test_forward_mode_and_vmap_of_the_gradient(name):
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    t = np.cos(np.arange(12.0)).reshape(3, 4)
    res = []
    for lib in (torch, ember):
        f = _fn(lib, name)

        def grad_of(v, lib=lib, f=f):
            return lib.func.grad(lambda u: f(u).sum())(v)

        _, tangent = lib.func.jvp(grad_of, (lib.tensor(x),), (lib.tensor(t),))
        batched = lib.func.vmap(grad_of)(lib.tensor(x))
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(lib.tensor(x), lib.tensor(t))
            fwd = lib.autograd.forward_ad.unpack_dual(f(dual)).tangent
        res.append([a.numpy() for a in (tangent, batched, fwd)])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hardsigmoid_kernel_is_torchs_bit_for_bit(dtype):
    # (g / 6 by 1/6 rounded to float32, float64 too; 16-bit in float32, rounded once)
    x, g = _data(dtype)
    x = torch.cat([x, torch.tensor([-3.0, 3.0, -2.999, 2.999], dtype=x.dtype)])
    g = torch.cat([g, torch.tensor([1.0, 1.0, 1.0, -7.0], dtype=g.dtype)])
    want = torch.ops.aten.hardsigmoid_backward(g, x)
    with np.errstate(all="ignore"):
        got = ab.hardsigmoid_backward_p.kernel(*(_array(t, dtype) for t in (g, x)))
    assert_bits(np.asarray(got).astype(np.float64), want.double().numpy())


def test_hardsigmoid_has_no_second_derivative_as_in_torch():
    # PyTorch's hardsigmoid_backward has no derivative: a create_graph gradient still
    # requires grad (a NotImplemented node over the cotangent and the input), and going
    # through it again raises, in reverse and in forward mode alike
    x0 = [-4.0, -1.0, 0.5, 2.5, 3.0]
    nodes = []
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        nodes.append((g.requires_grad, g.grad_fn.name(), len(g.grad_fn.next_functions),
                      g.tolist()))
    assert nodes[0] == nodes[1]
    assert nodes[0][1] == "torch::autograd::NotImplemented"
    msg = same_message(lambda L: L.autograd.grad(
        L.autograd.grad(L.nn.functional.hardsigmoid(x := L.tensor(x0, requires_grad=True)).sum(),
                        x, create_graph=True)[0].sum(), x))
    assert msg == "derivative for aten::hardsigmoid_backward is not implemented"
    same_message(lambda L: L.func.jacfwd(L.func.jacfwd(L.nn.functional.hardsigmoid))(
        L.tensor(0.5)), NotImplementedError)
    same_message(lambda L: L.func.hessian(L.nn.functional.hardsigmoid)(L.tensor(0.5)))
