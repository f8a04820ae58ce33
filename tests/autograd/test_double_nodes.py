"""The double-backward nodes of ops whose gradient does not read their input
(autograd/double_nodes.py): their edges, a gradient penalty through them against torch,
the cases that make none (no create_graph, a transform), and in-place writes on them."""

import numpy as np
import pytest
import torch

import ember


def _edges(node) -> list:
    return [(None if n is None else type(n).__name__, i) for n, i in node.next_functions]


def test_the_tie_node_reaches_the_input_and_the_cotangent():
    w = np.random.RandomState(0).standard_normal((2, 3, 3, 3))
    x = ember.ones(1, 3, 5, 5, dtype=ember.float64, requires_grad=True)
    g, = ember.autograd.grad(ember.nn.functional.conv2d(x, ember.tensor(w)).sum(), x,
                             create_graph=True)
    assert type(g.grad_fn).__name__ == "ConvolutionBackwardBackward0"
    assert _edges(g.grad_fn) == [(None, 0), ("AccumulateGrad", 0)]
    # a cotangent requiring grad gets its edge and its gradient through the tie
    x = ember.ones(1, 3, 4, 4, dtype=ember.float64, requires_grad=True)
    y = ember.nn.functional.avg_pool2d(x, 2)
    v = ember.full(y.shape, 2.0, dtype=ember.float64, requires_grad=True)
    g, = ember.autograd.grad(y, x, v, create_graph=True)
    gv, gx = ember.autograd.grad((g * g).sum(), (v, x))
    np.testing.assert_array_equal(gx.numpy(), 0)  # (hand-worked: g = v / 4 per window cell)
    np.testing.assert_array_equal(gv.numpy(), np.full(v.shape, 4 * 2 * (2.0 / 4) / 4))


def _penalty(M, params, x):
    """A gradient penalty (R1 / WGAN-GP style) through conv, pad, pooling and a loss."""
    w1, w2, lin = params
    F = M.nn.functional
    h = F.leaky_relu(F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), w1), 0.2)
    h = F.avg_pool2d(F.conv2d(F.max_pool2d(h, 2, 1), w2), 2)
    logits = h.flatten(1) @ lin
    out = F.nll_loss(F.log_softmax(logits, 1), M.tensor([1, 0]))
    g, = M.autograd.grad(out, x, create_graph=True)
    return g.pow(2).sum()


def test_gradient_penalty_through_linked_ops_matches_torch():
    rs = np.random.RandomState(1)
    arrays = [rs.standard_normal(s) for s in ((4, 2, 3, 3), (3, 4, 2, 2), (12, 3))]
    a = rs.standard_normal((2, 2, 7, 7))
    grads = []
    for M, need_params in ((torch, True), (ember, True), (torch, False), (ember, False)):
        params = [M.tensor(p, requires_grad=need_params) for p in arrays]
        x = M.tensor(a, requires_grad=True)
        wanted = params + [x] if need_params else [x]
        grads.append(M.autograd.grad(_penalty(M, params, x), wanted))
    for t, e in ((grads[0], grads[1]), (grads[2], grads[3])):
        for gt, ge in zip(t, e):
            # (float64 sums of products, in another order: a few ulps)
            np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-9, atol=1e-12)


def test_no_tie_without_create_graph_or_under_a_transform():
    w = np.random.RandomState(2).standard_normal((2, 2, 2, 2))
    x = ember.ones(1, 2, 4, 4, dtype=ember.float64, requires_grad=True)
    g, = ember.autograd.grad(ember.nn.functional.conv2d(x, ember.tensor(w)).sum(), x)
    assert not g.requires_grad and g.grad_fn is None

    def f(M, v):
        return M.nn.functional.avg_pool2d(M.nn.functional.conv2d(v, M.tensor(w)), 2).pow(2).sum()

    a = np.random.RandomState(3).standard_normal((1, 2, 3, 3))
    h_e = ember.func.hessian(lambda v: f(ember, v))(ember.tensor(a))
    x = torch.tensor(a, requires_grad=True)  # (torch's Hessian row by row: torch.func's
    g, = torch.autograd.grad(f(torch, x), x, create_graph=True)  # first call takes seconds)
    h_t = np.stack([torch.autograd.grad(gi, x, retain_graph=True)[0].numpy()
                    for gi in g.reshape(-1)]).reshape(h_e.shape)
    np.testing.assert_allclose(h_e.numpy(), h_t, rtol=1e-9, atol=1e-12)


def test_an_in_place_write_on_the_gradient_is_seen_by_its_graph():
    # the tied gradient is an alias of the rule's result: one version counter
    for M in (torch, ember):
        x = M.ones(1, 1, 4, dtype=M.float64, requires_grad=True)
        g, = M.autograd.grad(M.nn.functional.max_pool1d(x * 2, 2).sum(), x,
                             create_graph=True)
        g.mul_(3)
        np.testing.assert_array_equal(g.detach().numpy(), [[[6.0, 0.0, 6.0, 0.0]]])
        gx, = M.autograd.grad(g.sum(), x)
        np.testing.assert_array_equal(gx.numpy(), 0)


@pytest.mark.parametrize("op", ["softshrink", "hardshrink"])
def test_backward_through_the_gradient_accumulates_zeros(op):
    for M in (torch, ember):
        x = M.tensor([-1.0, 0.2, 0.9], dtype=M.float64, requires_grad=True)
        g, = M.autograd.grad(getattr(M.nn.functional, op)(x).sum(), x, create_graph=True)
        g.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
