"""ember.autograd.functional against torch.autograd.functional: values, shapes, structure."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def make(m, *shapes):
    return tuple(m.tensor(rand_array(s, np.float64, seed=i)) for i, s in enumerate(shapes))


def run(name, fn, shapes, *args, v_shapes=None, **kwargs):
    out = {}
    for m in (ember, torch):
        inputs = make(m, *shapes)
        inputs = inputs[0] if len(inputs) == 1 else inputs
        extra = ()
        if v_shapes is not None:
            vs = tuple(m.tensor(rand_array(s, np.float64, seed=9 + i))
                       for i, s in enumerate(v_shapes))
            extra = (vs[0] if len(vs) == 1 else vs,)
        out[m] = getattr(m.autograd.functional, name)(
            lambda *a, m=m: fn(m, *a), inputs, *extra, *args, **kwargs)
    assert_same(out[ember], out[torch])
    return out


def f_vec(m, x):
    return x.exp() * x.sin()


def f_two(m, x, y):
    return (x.unsqueeze(1) * y).tanh(), (x ** 2).sum()


def f_scalar(m, x):
    return (x.sin() * x ** 2).sum()


def f_scalar_two(m, x, y):
    return ((x.unsqueeze(1) * y).tanh() ** 2).sum()


def test_jacobian_single_in_single_out():
    run("jacobian", f_vec, [(4,)])


def test_jacobian_tuples_give_nested_tuples():
    out = run("jacobian", f_two, [(3,), (3, 2)])
    shapes = [[tuple(t.shape) for t in row] for row in out[ember]]
    assert shapes == [[(3, 2, 3), (3, 2, 3, 2)], [(3,), (3, 2)]]


def test_jacobian_create_graph_is_differentiable():
    x = ember.tensor(rand_array((3,), np.float64), requires_grad=True)
    xt = torch.tensor(rand_array((3,), np.float64), requires_grad=True)
    je = ember.autograd.functional.jacobian(lambda a: a.exp() * a, x, create_graph=True)
    jt = torch.autograd.functional.jacobian(lambda a: a.exp() * a, xt, create_graph=True)
    je.sum().backward()
    jt.sum().backward()
    assert_same(x.grad, xt.grad)


def test_jacobian_of_an_unused_input_is_zero_or_strict_error():
    for m in (ember, torch):
        x, y = make(m, (2,), (3,))
        jx, jy = m.autograd.functional.jacobian(lambda a, b: a * 2, (x, y))
        assert jy.shape == (2, 3) and not jy.numpy().any()
        with pytest.raises(RuntimeError, match="independent of input 1"):
            m.autograd.functional.jacobian(lambda a, b: a * 2, (x, y), strict=True)


def test_hessian():
    run("hessian", f_scalar, [(4,)])


def test_hessian_of_two_inputs():
    out = run("hessian", f_scalar_two, [(3,), (3, 2)])
    shapes = [[tuple(t.shape) for t in row] for row in out[ember]]
    assert shapes == [[(3, 3), (3, 3, 2)], [(3, 2, 3), (3, 2, 3, 2)]]


def test_vjp_and_jvp():
    run("vjp", f_vec, [(4,)], v_shapes=[(4,)])
    run("jvp", f_vec, [(4,)], v_shapes=[(4,)])
    run("vjp", f_two, [(3,), (3, 2)], v_shapes=[(3, 2), ()])
    run("jvp", f_two, [(3,), (3, 2)], v_shapes=[(3,), (3, 2)])


def test_hvp_and_vhp():
    run("hvp", f_scalar, [(4,)], v_shapes=[(4,)])
    run("vhp", f_scalar, [(4,)], v_shapes=[(4,)])
    run("hvp", f_scalar_two, [(3,), (3, 2)], v_shapes=[(3,), (3, 2)])
    run("vhp", f_scalar_two, [(3,), (3, 2)], v_shapes=[(3,), (3, 2)])


def test_v_may_be_omitted_only_for_single_elements():
    run("vjp", lambda m, x: (x * x).sum(), [(3,)])
    run("jvp", lambda m, x: x * 3, [()])
    for m in (ember, torch):
        (x,) = make(m, (3,))
        with pytest.raises(RuntimeError, match="The vector v can only be None"):
            m.autograd.functional.vjp(lambda a: a * 2, x)
        with pytest.raises(RuntimeError, match="v has invalid size"):
            m.autograd.functional.vjp(lambda a: a * 2, x, m.ones(2, dtype=m.float64))


def test_argument_errors():
    for m in (ember, torch):
        with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
            m.autograd.functional.jacobian(lambda a: a, [1.0])
        (x,) = make(m, (3,))
        with pytest.raises(RuntimeError, match="should return a single Tensor|single element"):
            m.autograd.functional.hessian(lambda a: a * 2, x)
        with pytest.raises(RuntimeError, match="does not require gradients"):
            m.autograd.functional.vjp(lambda a: a.detach().sum(), x, strict=True)


def test_results_are_detached_and_inputs_untouched():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    out, g = ember.autograd.functional.vjp(lambda a: (a * a).sum(), x)
    assert not out.requires_grad and not g.requires_grad and x.grad is None


# --- strict mode and option errors: torch's exception and words, per transform -------------

X0 = [0.5, -1.0, 2.0]


def _x(L):
    return L.tensor(X0, dtype=L.float64)


LINEAR_SUM = lambda x: (3 * x).sum()  # noqa: E731 - its Jacobian does not depend on x
STRICT_CASES = {
    # name -> call(L); each raises RuntimeError in torch with a message ember must repeat
    "jacobian of a constant": lambda L: L.autograd.functional.jacobian(
        lambda x: L.ones(3, dtype=L.float64), _x(L), strict=True),
    "jacobian strict and vectorize": lambda L: L.autograd.functional.jacobian(
        lambda x: x * 2, _x(L), strict=True, vectorize=True),
    "jacobian strict create_graph linear": lambda L: L.autograd.functional.jacobian(
        lambda x: x * 2, _x(L), strict=True, create_graph=True),
    "jacobian of an unused input": lambda L: L.autograd.functional.jacobian(
        lambda a, b: a * 2, (_x(L), _x(L)), strict=True),
    "hessian of a linear function": lambda L: L.autograd.functional.hessian(
        LINEAR_SUM, _x(L), strict=True),
    "hessian linear create_graph": lambda L: L.autograd.functional.hessian(
        LINEAR_SUM, _x(L), strict=True, create_graph=True),
    "hvp of a linear function": lambda L: L.autograd.functional.hvp(
        LINEAR_SUM, _x(L), _x(L), strict=True),
    "vhp of a linear function": lambda L: L.autograd.functional.vhp(
        LINEAR_SUM, _x(L), _x(L), strict=True),
    "hvp of an unused input": lambda L: L.autograd.functional.hvp(
        lambda a, b: (a ** 2).sum(), (_x(L), _x(L)), (_x(L), _x(L)), strict=True),
    "vhp create_graph unused input": lambda L: L.autograd.functional.vhp(
        lambda a, b: (a ** 3).sum(), (_x(L), _x(L)), (_x(L), _x(L)), strict=True,
        create_graph=True),
    "vjp create_graph linear": lambda L: L.autograd.functional.vjp(
        lambda x: x * 2, _x(L), _x(L), strict=True, create_graph=True),
    "jvp of an unused input": lambda L: L.autograd.functional.jvp(
        lambda a, b: a * 2, (_x(L), _x(L)), (_x(L), _x(L)), strict=True),
    "jvp of a constant": lambda L: L.autograd.functional.jvp(
        lambda x: L.ones(3, dtype=L.float64), _x(L), _x(L), strict=True),
    "forward-mode strict": lambda L: L.autograd.functional.jacobian(
        lambda x: x * 2, _x(L), strict=True, vectorize=True, strategy="forward-mode"),
    "empty output": lambda L: L.autograd.functional.jacobian(lambda x: x[:0], _x(L)),
}


@pytest.mark.parametrize("name", list(STRICT_CASES))
def test_strict_and_option_errors_match_torch(name):
    from helpers import same_message

    same_message(STRICT_CASES[name])


@pytest.mark.parametrize("kw", [dict(create_graph=True), dict(create_graph=True, strict=True),
                                dict(vectorize=False), dict(strict=True, vectorize=False)])
def test_forward_mode_refusals_are_torchs_in_torchs_order(kw):
    # torch looks at create_graph first, then strict, then vectorize (its own text, typo kept)
    from helpers import same_error, same_message

    def call(L):
        return L.autograd.functional.jacobian(lambda x: x * 2, _x(L), strategy="forward-mode",
                                              **{"vectorize": True, **kw})

    kind = same_error(call)
    same_message(call, kind)


def test_strict_mode_passes_a_twice_differentiable_function():
    # strict is a check, not a different computation: the values are torch's
    out = run("hessian", lambda m, x: (x ** 3).sum(), [(3,)], strict=True, create_graph=True)
    assert out[ember].requires_grad


# --- strategy="forward-mode": a real forward-mode Jacobian, with torch's containers ----------

def f_signed(m, a, b):
    # products with negative entries: the zeros of a forward-mode Jacobian are +0.0 where a
    # reverse-mode one gives -0.0, so the signs show which mode ran
    return a * b, a.sum() * b


@pytest.mark.parametrize("fn,shapes", [
    (f_signed, [(3,), (3,)]),
    (lambda m, a, b: (a * b).sin(), [(2, 3), (2, 3)]),
    (lambda m, a: (a.exp(), a.cumsum(0)), [(4,)]),
    (lambda m, a: a @ a.T, [(2, 3)]),
    (lambda m, a: a.norm(), [(3,)]),
])
def test_forward_mode_jacobian_matches_torch_with_its_lists_and_signs(fn, shapes):
    out = run("jacobian", fn, shapes, vectorize=True, strategy="forward-mode")
    e, t = out[ember], out[torch]

    def structure(x):
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, [structure(y) for y in x])
        return tuple(x.shape)

    assert structure(e) == structure(t)

    def signs(x):
        if isinstance(x, (list, tuple)):
            return [signs(y) for y in x]
        return np.signbit(x.detach().numpy()).tolist()

    assert signs(e) == signs(t)


def test_forward_mode_jacobian_against_finite_differences():
    x = rand_array((3,), np.float64, seed=4)

    def f(v):
        return np.stack([v[0] * v[1], np.sin(v[2]) * v[0], np.exp(v).sum()])

    jac = ember.autograd.functional.jacobian(
        lambda a: ember.stack([a[0] * a[1], a[2].sin() * a[0], a.exp().sum()]),
        ember.tensor(x), vectorize=True, strategy="forward-mode")
    eps = 1e-6
    fd = np.stack([(f(x + eps * np.eye(3)[k]) - f(x - eps * np.eye(3)[k])) / (2 * eps)
                   for k in range(3)], axis=1)
    # central differences in float64: error ~eps^2 * f''' plus rounding ~1e-16 / eps
    np.testing.assert_allclose(jac.numpy(), fd, rtol=1e-7, atol=1e-8)


def test_forward_over_reverse_hessian_matches_torch():
    out = run("hessian", lambda m, x: (x.sin() * x ** 2).sum() + (x[0] * x[2]).exp(), [(3,)],
              vectorize=True, outer_jacobian_strategy="forward-mode")
    assert out[ember].requires_grad == out[torch].requires_grad


def _flags(x):
    if isinstance(x, (list, tuple)):
        return [_flags(y) for y in x]
    return (x.requires_grad, np.signbit(x.detach().numpy()).tolist())


@pytest.mark.parametrize("fn,shapes", [
    (lambda m, x: (x.sin() * x[0], x.cumsum(0)), [(3,)]),  # the second output is linear
    (f_signed, [(3,), (3,)]),
    (lambda m, a, b: ((a * b).sum(), b.flip(0) * 2), [(2,), (2,)]),
])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vectorized_jacobian_rows_run_through_every_output(fn, shapes, create_graph):
    # torch's vectorize=True takes each row with one backward through all outputs (zero
    # cotangents for the others): with create_graph every block then requires grad, and the
    # zeros that path adds decide the sign of zero entries
    out = run("jacobian", fn, shapes, create_graph=create_graph, vectorize=True)
    assert _flags(out[ember]) == _flags(out[torch])
