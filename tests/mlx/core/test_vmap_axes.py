"""How `mx.vmap` reads `in_axes` / `out_axes` (ember.mlx.core._vmap_axes) against MLX 0.32.4:
prefix trees laid against the single argument or the tuple of arguments, the 1-tuple axis,
negative axes, and each refusal with MLX's exception type and message. Everything here is
shapes and copies, so results compare exactly (as reprs)."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = "x = mx.arange(2.0); m = mx.arange(6.0).reshape(2, 3); n = mx.ones((3, 2))"

CASES = [
    # what maps: an int for everything, per argument, per leaf of a tuple or dict argument
    "mx.vmap(lambda u, v: u * v, in_axes=(0, 1))(m, n)",
    "mx.vmap(lambda u, v: u * v, in_axes=(0, None))(x, m)",
    "mx.vmap(lambda u: u[0] + u[1], in_axes=(0, 0))((x, x))",
    "mx.vmap(lambda u: u[0] * u[1], in_axes=[0, 1])([m, n])",
    "mx.vmap(lambda u: u['a'] + u['b'], in_axes={'a': 1, 'b': 0})({'a': m, 'b': n})",
    "mx.vmap(lambda u: u, in_axes=(1,))(m)",
    "mx.vmap(lambda u: u, in_axes=-1)(m)",
    "mx.vmap(lambda u: u * 2, out_axes=-1)(m)",
    "mx.vmap(lambda u: (u, u.sum()), in_axes=1, out_axes=(1, 0))(m)",
    "mx.vmap(lambda u: {'s': u.sum()}, out_axes={'s': 0})(m)",
    "mx.vmap(lambda u: mx.ones(3))(x)",
    # what MLX refuses
    "mx.vmap(lambda u, v: u + v, in_axes=(0, 0, 0))(x, x)",
    "mx.vmap(lambda u, v: u + v, in_axes=[0, 0])(x, x)",
    "mx.vmap(lambda u: u, in_axes=(0, 0))(x)",
    "mx.vmap(lambda u: u, in_axes=[0])(x)",
    "mx.vmap(lambda u, v: u + v, in_axes=(0, [0]))(x, x)",
    "mx.vmap(lambda u: u[0], in_axes=(0,))((x, x))",
    "mx.vmap(lambda u: u['a'], in_axes={'b': 0})({'a': x})",
    "mx.vmap(lambda u: u['a'], in_axes={'a': 0, 'b': 0})({'a': x})",
    "mx.vmap(lambda u: u, in_axes=0.5)(x)",
    "mx.vmap(lambda u: u, in_axes=2)(m)",
    "mx.vmap(lambda u: u, in_axes=-3)(m)",
    "mx.vmap(lambda u: u)(mx.array(1.0))",
    "mx.vmap(lambda u: u, out_axes=2)(m)",
    "mx.vmap(lambda u: u.sum(), out_axes=-3)(m)",
    "mx.vmap(lambda u: (u, u), out_axes=(0,))(x)",
    "mx.vmap(lambda u: (u * 2, u), out_axes=((1,), 0))(m)",
    "mx.vmap(lambda u: (u, u), out_axes=(0, None))(x)",
    "mx.vmap(lambda u, v: u + v)(x, mx.ones(3))",
    "mx.vmap(lambda u, v, w: u + v + w, in_axes=(0, 0, 1))(x, x, m)",
    "mx.vmap(lambda u, v: u + v)(x, 3.0)",
    "mx.vmap(lambda u: 3.0)(x)",
    "mx.vmap(lambda u: u, in_axes=(None,))(x)",
    "mx.vmap(lambda u: 1, in_axes=(None,))(x)",
    "mx.vmap(lambda u, k=1: u * k)(x, k=x)",
]


@pytest.mark.parametrize("expr", CASES)
def test_vmap_axes_match_mlx(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


def test_a_custom_function_without_a_vmap_rule_maps_each_argument():
    # (its batch rule vmaps the plain function with one axis per argument, None for one
    # not mapped: a tuple of axes, which MLX reads against the tuple of arguments)
    for m in (mx, mlx):
        f = m.custom_function(lambda u, v: u * v)
        f.vjp(lambda primals, cotangent, output: (cotangent, cotangent))
        out = m.vmap(f, in_axes=(0, None))(m.ones((2, 3)), m.arange(3.0))
        assert out.tolist() == [[0.0, 1.0, 2.0]] * 2
