"""ember.func's reverse transforms keep the caller's graph where torch.func does: a function
that closes over a parameter gives Jacobians and gradients that are differentiable in it."""

import pytest
import torch

import ember

W = [[1.0, 2.0], [0.5, 1.0]]
X = [[0.3, -0.2], [-0.7, 0.4]]

TRANSFORMS = {
    "jacrev": lambda F, f, x: F.jacrev(f)(x[0]),
    "jacfwd": lambda F, f, x: F.jacfwd(f)(x[0]),
    "grad": lambda F, f, x: F.grad(lambda v: f(v).sum())(x[0]),
    "vjp": lambda F, f, x: F.vjp(f, x[0])[1](x[1])[0],
    "vmap(jacrev)": lambda F, f, x: F.vmap(F.jacrev(f))(x),
    "vmap(grad)": lambda F, f, x: F.vmap(F.grad(lambda v: f(v).sum()))(x),
    "hessian": lambda F, f, x: F.hessian(lambda v: f(v).sum())(x[0]),
}


def _run(L, name, closed_over: bool):
    w = L.tensor(W, requires_grad=True)
    x = L.tensor(X)
    f = (lambda v: L.tanh(v @ w)) if closed_over else (lambda v: L.tanh(v @ w.detach()))
    out = TRANSFORMS[name](L.func, f, x)
    grad = None
    if out.requires_grad:
        (out * L.arange(out.numel()).reshape(out.shape)).sum().backward()
        grad = w.grad
    return out, grad


@pytest.mark.parametrize("name", TRANSFORMS)
def test_results_stay_differentiable_in_a_closed_over_parameter(name):
    e, ge = _run(ember, name, True)
    t, gt = _run(torch, name, True)
    assert e.requires_grad and t.requires_grad
    torch.testing.assert_close(torch.tensor(e.detach().numpy()), t.detach())
    torch.testing.assert_close(torch.tensor(ge.numpy()), gt)


@pytest.mark.parametrize("name", TRANSFORMS)
def test_results_carry_no_graph_without_one(name):
    e, _ = _run(ember, name, False)
    t, _ = _run(torch, name, False)
    assert e.requires_grad == t.requires_grad == False  # noqa: E712


@pytest.mark.parametrize("L", [ember, torch], ids=["ember", "torch"])
def test_no_grad_around_the_transform_drops_the_graph(L):
    w = L.tensor(W, requires_grad=True)
    with L.no_grad():
        j = L.func.jacrev(lambda v: L.tanh(v @ w))(L.tensor(X[0]))
    assert not j.requires_grad


def _graph_flags(L):
    """requires_grad of what grad_and_value / vjp hand back, output by output: each keeps a
    graph only if it reaches a tensor requiring grad from outside the call."""
    L.manual_seed(0)
    w = L.randn(3, requires_grad=True)
    wd = w.detach()
    x = L.randn(3)
    F = L.func

    def flags(tree):
        return [t.requires_grad for t in L.utils._pytree.tree_flatten(tree)[0]]

    out = []
    out += flags(F.grad(lambda t: ((t * w).sum(), (t * 2).sum()), has_aux=True)(x))
    out += flags(F.grad_and_value(lambda t: ((t * wd).sum(), (t * 2, (t * w).sum())),
                                  has_aux=True)(x))
    out += flags(F.vjp(lambda t: (t * w, t * 2, t.sin()), x)[0])
    out += flags(F.vjp(lambda t: ((t * 2).sum(), (t * w, t.exp())), x, has_aux=True)[2])
    out += flags(F.vmap(F.grad_and_value(lambda t: (t * wd).sum()))(x.expand(2, 3)))
    out += flags(F.vmap(F.grad(lambda t: ((t * wd).sum(), t.cos()), has_aux=True))(
        x.expand(2, 3)))
    return out


def test_results_keep_a_graph_only_where_they_reach_an_outer_one():
    # grad(f, has_aux=True)(x) with f closing over a parameter w: the gradient and value
    # depend on w and stay in its graph; an aux computed from x alone is a plain tensor
    assert _graph_flags(ember) == _graph_flags(torch)
