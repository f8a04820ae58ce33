"""ember.func against torch.func: the same functions and inputs give the same numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def _x(m, shape, seed=0):
    return m.tensor(rand_array(shape, np.float64, seed=seed))


def same(e, t) -> None:
    """Nested results equal: dicts by key, sequences in order, tensors by value, dtype and
    whether they carry a graph."""
    if isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t), f"{list(e)} != {list(t)}"
        for k in t:
            same(e[k], t[k])
    elif isinstance(t, (tuple, list)) and not isinstance(t, torch.Size):
        assert isinstance(e, (tuple, list)) and len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b)
    elif isinstance(t, torch.Tensor):
        assert_same(e, t)
        assert e.requires_grad == t.requires_grad, "requires_grad differs"
    else:
        assert tuple(e) == tuple(t) if isinstance(t, torch.Size) else e == t, f"{e} != {t}"


def both(fn):
    """fn(m) for ember and torch, compared."""
    same(fn(ember), fn(torch))


def f_scalar(m):
    return lambda x: (m.sin(x) * x).sum() + (x ** 3).mean()


def test_grad_of_a_scalar_function():
    both(lambda m: m.func.grad(f_scalar(m))(_x(m, (5,))))


def test_grad_and_value_argnums_and_aux():
    def run(m):
        def f(x, y):
            loss = (x @ y).tanh().sum()
            return loss, {"norm": y.norm()}
        return m.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(_x(m, (2, 3)),
                                                                       _x(m, (3, 4), 1))
    both(run)


def test_grad_of_a_pytree_argument():
    def run(m):
        def f(p, x):
            return ((x @ p["w"] + p["b"]) ** 2).sum()
        params = {"w": _x(m, (3, 2)), "b": _x(m, (2,), 1)}
        return m.func.grad(f)(params, _x(m, (4, 3), 2))
    both(run)


def test_vjp_with_two_outputs():
    def run(m):
        out, fn = m.func.vjp(lambda x: (x.exp(), x.sum(0)), _x(m, (2, 3)))
        return out, fn((_x(m, (2, 3), 5), _x(m, (3,), 6)))
    both(run)


def test_jacrev_and_jacfwd_and_hessian():
    def f(m):
        return lambda x: m.tanh(x[:2] * x[1:]) * x.sum()
    both(lambda m: m.func.jacrev(f(m))(_x(m, (3,))))
    both(lambda m: m.func.jacfwd(f(m))(_x(m, (3,))))
    both(lambda m: m.func.hessian(f_scalar(m))(_x(m, (4,))))


def test_hessian_takes_its_columns_in_one_batched_pass():
    """jacfwd's tangents are one vmap batch around jacrev: the reverse pass's tape is of
    unbatched values, so it runs once for all columns (not once per column)."""
    from ember.func import _reverse

    calls = []
    orig = _reverse._gradients

    def counted(*args, **kwargs):
        calls.append(1)
        return orig(*args, **kwargs)

    def f(m, w):
        return lambda x: ((x @ w).tanh() @ w.T).sum() + (x ** 4).sum()

    _reverse._gradients = counted
    try:
        both(lambda m: m.func.hessian(f(m, _x(m, (6, 5), 3)))(_x(m, (6,))))
    finally:
        _reverse._gradients = orig
    assert len(calls) == 2  # jacfwd's primal output, then all six columns at once


def test_per_example_hessians():
    """vmap of hessian where the tape holds the vmap's batch (a closure over a batched
    tensor, or a batched input): torch's numbers, by reverse over reverse in one pass."""
    def run(m):
        ws = _x(m, (3, 4), 7)
        return m.func.vmap(lambda w: m.func.hessian(lambda x: (x.sin() * w).sum()
                                                    * x.norm())(_x(m, (4,))))(ws)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no per-example loop)
        both(run)
        both(lambda m: m.func.vmap(m.func.hessian(f_scalar(m)))(_x(m, (3, 4))))


@pytest.mark.filterwarnings("ignore:vmap. forward mode over a reverse")
def test_vmap_of_jacfwd_of_jacrev_of_a_batched_tape():
    """Written out as forward over reverse, the same runs once per example, with a
    warning that says so."""
    both(lambda m: m.func.vmap(m.func.jacfwd(m.func.jacrev(f_scalar(m))))(_x(m, (3, 4))))


def test_per_example_jacobians_by_reverse_mode():
    """vmap of jacrev: the rows' vmap batches the backward pass over the tape the outer
    vmap recorded (one pass for all rows of all examples)."""
    def f(m, w):
        return lambda x, b: ((x @ w).tanh() * b).sum(-1, keepdim=True) + x.sin()[:2]

    def run(m, argnums):
        w = _x(m, (4, 2), 3)
        xs, bs = _x(m, (5, 4)), _x(m, (5, 2), 1)
        return m.func.vmap(m.func.jacrev(f(m, w), argnums=argnums))(xs, bs)
    both(lambda m: run(m, 0))
    both(lambda m: run(m, (0, 1)))
    both(lambda m: m.func.vmap(m.func.vmap(m.func.jacrev(lambda x: x.exp() * x.sum())))(
        _x(m, (2, 3, 4))))


def test_vmap_of_a_vjp_of_an_output_computed_inside_vmap():
    def run(m):
        def per_example(x):
            out, fn = m.func.vjp(lambda v: v.sin() * v.sum(), x)
            return m.func.vmap(fn)(_x(m, (3, 4), 9))
        return m.func.vmap(per_example)(_x(m, (2, 4)))
    both(run)


def test_forward_mode_sees_writes_through_setitem_and_views():
    """x[key] = v and an in-place op on a view rewrite the written tensor's tangent, and its
    base's: forward mode gives torch's tangents (it kept the old ones before)."""
    def f(m):
        def run(x, v):
            y = x * 1.0
            y[1] = v[0] * 3
            y[2:].mul_(2)
            w = y[1:]
            w[0] = 5.0
            return y, y[:3] * v[1]
        return run
    args = lambda m: (_x(m, (5,)), _x(m, (2,), 1))  # noqa: E731
    tans = lambda m: (_x(m, (5,), 2), _x(m, (2,), 3))  # noqa: E731
    both(lambda m: m.func.jvp(f(m), args(m), tans(m)))
    both(lambda m: m.func.jacfwd(f(m), argnums=(0, 1))(*args(m)))


def test_jacobians_with_respect_to_two_arguments():
    def run(m, jac):
        return jac(lambda a, b: (a @ b).sin(), argnums=(0, 1))(_x(m, (2, 3)), _x(m, (3,), 1))
    both(lambda m: run(m, m.func.jacrev))
    both(lambda m: run(m, m.func.jacfwd))


def test_jvp_matches_torch_and_finite_differences():
    def g(m):
        return lambda x, w: (m.log1p(x.exp()) @ w).softmax(-1)

    def run(m):
        return m.func.jvp(g(m), (_x(m, (2, 3)), _x(m, (3, 4), 1)),
                          (_x(m, (2, 3), 2), _x(m, (3, 4), 3)))
    both(run)
    x, w = _x(ember, (2, 3)), _x(ember, (3, 4), 1)
    tx, tw = _x(ember, (2, 3), 2), _x(ember, (3, 4), 3)
    eps = 1e-6
    fd = (g(ember)(x + eps * tx, w + eps * tw) - g(ember)(x - eps * tx, w - eps * tw)) / (2 * eps)
    np.testing.assert_allclose(run(ember)[1].numpy(), fd.numpy(), rtol=1e-6, atol=1e-9)


def test_transforms_nest_to_any_depth():
    both(lambda m: m.func.grad(m.func.grad(m.func.grad(lambda x: (x.sin() * x).sum())))
         (m.tensor(0.7, dtype=m.float64)))
    both(lambda m: m.func.jacfwd(m.func.jacrev(lambda x: (x.exp() * x).prod()))(_x(m, (3,))))
    both(lambda m: m.func.jvp(m.func.grad(f_scalar(m)), (_x(m, (4,)),), (_x(m, (4,), 1),)))


def test_nested_forward_levels_keep_their_perturbations_apart():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1; a confused inner level would see x's
    # perturbation in (x + y)'s tangent and answer 2
    def outer(m):
        def f(x):
            one = m.ones((), dtype=m.float64)
            inner = m.func.jvp(lambda y: x + y, (one,), (one,))[1]
            return x * inner
        return m.func.jvp(f, (m.tensor(3.0, dtype=m.float64),),
                          (m.ones((), dtype=m.float64),))[1]
    assert outer(ember).item() == 1.0 == outer(torch).item()


def test_linearize_gives_the_jvp_at_the_point():
    def run(m):
        out, fn = m.func.linearize(lambda x: x.sin() ** 2, _x(m, (3,)))
        return out, fn(_x(m, (3,), 1))
    both(run)


def test_errors_are_torchs():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar"):
            m.func.grad(lambda x: x * 2)(_x(m, (3,)))
        with pytest.raises(RuntimeError, match="same python structure"):
            m.func.jvp(lambda x: x, (_x(m, (2,)),), [_x(m, (2,))])
        with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
            m.func.grad(lambda x: x.sum(), argnums=2)(_x(m, (2,)))


def test_functional_call_uses_the_given_tensors_and_restores_the_module():
    def run(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Linear(4, 3)).double()
        before = {k: v.clone() for k, v in net.state_dict().items()}
        params = {k: v * 2 for k, v in net.named_parameters()}
        x = _x(m, (5, 3))
        out = m.func.functional_call(net, params, (x,))
        same = all(m.equal(before[k], v) for k, v in net.state_dict().items())
        return out, same
    both(run)


def test_functional_call_ties_weights_and_checks_keys_strictly():
    def run(m):
        lin = m.nn.Linear(2, 2, bias=False).double()
        model = m.nn.Sequential(lin, m.nn.Tanh(), lin)  # one weight, two names
        w = m.eye(2, dtype=m.float64) * 0.5
        out = m.func.functional_call(model, {"0.weight": w}, (m.ones(1, 2, dtype=m.float64),))
        return out
    both(run)
    for m in (ember, torch):
        lin = m.nn.Linear(2, 2)
        with pytest.raises(RuntimeError, match="Missing key"):
            m.func.functional_call(lin, {"weight": m.ones(2, 2)}, (m.ones(1, 2),), strict=True)


def test_grad_through_functional_call_equals_backward():
    for m in (ember, torch):
        m.manual_seed(1)
    nets = [m.nn.Linear(3, 2).double() for m in (ember, torch)]
    nets[0].load_state_dict({k: ember.tensor(v.numpy()) for k, v in nets[1].state_dict().items()})

    def run(m, net):
        x, y = _x(m, (6, 3)), _x(m, (6, 2), 1)
        params = dict(net.named_parameters())

        def loss(p):
            return ((m.func.functional_call(net, p, (x,)) - y) ** 2).mean()

        g = m.func.grad(loss)(params)
        loss(params).backward()
        return g, {k: p.grad for k, p in net.named_parameters()}

    e, t = run(ember, nets[0]), run(torch, nets[1])
    same(e, t)
    for k, v in e[1].items():  # the transform's gradient is the tape's
        assert_same(e[0][k], torch.tensor(v.numpy()))


def test_stack_module_state():
    def run(m):
        m.manual_seed(0)
        models = [m.nn.Linear(3, 2) for _ in range(4)]
        params, buffers = m.func.stack_module_state(models)
        return {k: (v.shape, v.requires_grad, v) for k, v in params.items()}, buffers
    both(run)


def test_a_custom_function_uses_its_own_jvp():
    def run(m):
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0])
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return 3 * x * x * t

        return m.func.jvp(Cube.apply, (_x(m, (3,)),), (_x(m, (3,), 1),))
    both(run)


def test_gradcheck_checks_forward_mode_too():
    x = _x(ember, (3,)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: (t.sin() * t).cumsum(0), (x,),
                                    check_forward_ad=True)
