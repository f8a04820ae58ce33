"""Second derivatives (create_graph=True) against torch.autograd.grad, by op family, plus
Hessian-vector products and a gradient penalty."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array

# Each case: (fn(m, *xs), input shapes, low, high). Inputs are float64.
CASES = {
    # elementwise
    "mul": (lambda m, a, b: a * b * a, [(3, 4), (3, 4)], -2, 2),
    "div": (lambda m, a, b: a / b, [(3, 4), (3, 4)], 0.5, 2),
    "pow_scalar": (lambda m, a: a ** 3, [(3, 4)], -2, 2),
    "pow_tensor": (lambda m, a, b: a ** b, [(3, 4), (3, 4)], 0.5, 2),
    "exp": (lambda m, a: a.exp(), [(5,)], -2, 2),
    "log": (lambda m, a: a.log(), [(5,)], 0.5, 3),
    "sin_cos": (lambda m, a: a.sin() * a.cos(), [(5,)], -2, 2),
    "tanh": (lambda m, a: a.tanh(), [(5,)], -2, 2),
    "sigmoid": (lambda m, a: a.sigmoid(), [(5,)], -2, 2),
    "relu_times_x": (lambda m, a: a.relu() * a, [(6,)], -2, 2),
    "broadcast_add_mul": (lambda m, a, b: (a + b) * (a - b), [(3, 1), (4,)], -2, 2),
    "where": (lambda m, a, b: m.where(a > 0, a * b, b.exp()), [(3, 4), (3, 4)], -2, 2),
    # reductions
    "sum_dim": (lambda m, a: a.sum(1) ** 2, [(3, 4)], -2, 2),
    "mean": (lambda m, a: a.mean(0, keepdim=True) * a, [(3, 4)], -2, 2),
    "amax": (lambda m, a: a.amax(1) * a.sum(1), [(3, 4)], -2, 2),
    "max_dim": (lambda m, a: a.max(0)[0] ** 2, [(3, 4)], -2, 2),
    # matmul
    "matmul": (lambda m, a, b: (a @ b).tanh(), [(3, 4), (4, 2)], -1, 1),
    "batched_matmul": (lambda m, a, b: (a @ b) ** 2, [(2, 3, 4), (4, 2)], -1, 1),
    "matvec": (lambda m, a, b: (a @ b).exp(), [(3, 4), (4,)], -1, 1),
    # views and indexing
    "view_t": (lambda m, a: (a.view(4, 3).t() * a) ** 2, [(3, 4)], -2, 2),
    "permute_expand": (lambda m, a: a.permute(1, 0).unsqueeze(0).expand(2, 4, 3).exp(),
                       [(3, 4)], -1, 1),
    "slices": (lambda m, a: a[1:, ::2] * a[:2, 1::2], [(3, 4)], -2, 2),
    "select_squeeze": (lambda m, a: a[1] * a[:, None, 2].squeeze(1).sum(), [(3, 4)], -2, 2),
    "advanced_index_repeated": (lambda m, a: a[[0, 2, 2, 0]] ** 2, [(3, 4)], -2, 2),
    "diagonal": (lambda m, a: a.diagonal().exp() * a.sum(), [(3, 3)], -1, 1),
}


def _inputs(m, shapes, low, high):
    return [m.tensor(rand_array(s, np.float64, low=low, high=high, seed=i), requires_grad=True)
            for i, s in enumerate(shapes)]


def _second_order(m, fn, shapes, low, high):
    xs = _inputs(m, shapes, low, high)
    out = fn(m, *xs)
    cot = m.tensor(rand_array(tuple(out.shape), np.float64, seed=7))
    gs = m.autograd.grad(out, xs, cot, create_graph=True)
    v = [m.tensor(rand_array(tuple(g.shape), np.float64, seed=11 + i)) for i, g in enumerate(gs)]
    total = sum((g * w).sum() for g, w in zip(gs, v))
    ggs = m.autograd.grad(total, xs, allow_unused=True)
    return out, gs, ggs


@pytest.mark.parametrize("name", CASES)
def test_second_derivatives_match_torch(name):
    fn, shapes, low, high = CASES[name]
    oe, ge, gge = _second_order(ember, fn, shapes, low, high)
    ot, gt, ggt = _second_order(torch, fn, shapes, low, high)
    assert_same(oe, ot)
    assert_same(ge, gt)
    for a, b in zip(gge, ggt):
        if b is None:
            assert a is None or not a.detach().numpy().any()
        else:
            assert_same(a, b)


@pytest.mark.parametrize("name", ["mul", "pow_tensor", "matmul", "slices", "amax", "where"])
def test_second_derivatives_pass_gradgradcheck(name):
    fn, shapes, low, high = CASES[name]
    xs = _inputs(ember, shapes, low, high)
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, *a), xs)


def test_hessian_vector_product():
    def loss(m, w, x):
        return ((x @ w).tanh() ** 2).sum()

    res = {}
    for m in (ember, torch):
        w = m.tensor(rand_array((4, 3), np.float64, seed=1), requires_grad=True)
        x = m.tensor(rand_array((5, 4), np.float64, seed=2))
        v = m.tensor(rand_array((4, 3), np.float64, seed=3))
        (g,) = m.autograd.grad(loss(m, w, x), w, create_graph=True)
        (hv,) = m.autograd.grad(g, w, v)
        res[m] = hv
    assert_same(res[ember], res[torch])


def test_gradient_penalty_trains_the_weights():
    """WGAN-GP style: penalise ||d critic / d input||, then backward into the weights."""
    res = {}
    for m in (ember, torch):
        w1 = m.tensor(rand_array((4, 8), np.float64, seed=1), requires_grad=True)
        w2 = m.tensor(rand_array((8, 1), np.float64, seed=2), requires_grad=True)
        x = m.tensor(rand_array((6, 4), np.float64, seed=3), requires_grad=True)
        critic = ((x @ w1).sigmoid() @ w2).sum()
        (gx,) = m.autograd.grad(critic, x, create_graph=True)
        penalty = ((gx.pow(2).sum(1) + 1e-12).sqrt() - 1).pow(2).mean()
        penalty.backward()
        res[m] = (penalty, w1.grad, w2.grad, x.grad)
    assert_same(res[ember], res[torch])


def test_third_derivative_of_a_polynomial():
    x = ember.tensor(1.5, dtype=ember.float64, requires_grad=True)
    y = x ** 4 + 2 * x ** 3
    (d1,) = ember.autograd.grad(y, x, create_graph=True)
    (d2,) = ember.autograd.grad(d1, x, create_graph=True)
    (d3,) = ember.autograd.grad(d2, x)
    # d3/dx3 (x^4 + 2x^3) = 24x + 12
    assert d3.item() == pytest.approx(24 * 1.5 + 12)
    assert d2.item() == pytest.approx(12 * 1.5 ** 2 + 12 * 1.5)


def test_first_order_grads_are_detached_without_create_graph():
    x = ember.ones(3, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad((x ** 2).sum(), x)
    assert not g.requires_grad and g.grad_fn is None
    (g,) = ember.autograd.grad((x ** 2).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
