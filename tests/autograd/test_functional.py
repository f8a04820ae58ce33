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
