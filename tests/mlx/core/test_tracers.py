"""What MLX 0.32.4 refuses about vmap's tracers (arrays standing for every example):
computing one (`mx.eval`, `item`, `tolist`), handing one (or grad's input) to
`mx.async_eval`, and `None` for a whole `in_axes` / `out_axes` (its binding's TypeError)."""

import pytest
from tests.mlx_oracle import outcome

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")

SETUP = "c = mx.ones(2) * 3; x = mx.array([[1.0, 2.0], [3.0, 4.0]])"
CASES = [
    "mx.vmap(lambda r: (mx.eval({'a': [r * 2]}), r)[1])(x)",  # a derived tracer
    "mx.vmap(lambda r: (mx.eval(r), r)[1])(x)",  # the input itself
    "mx.vmap(lambda r: (mx.eval(c * 2), r * c)[1])(x)",  # a captured array: allowed
    "mx.vmap(lambda r: r.sum().item())(x)",
    "mx.vmap(lambda r: r.tolist())(x)",
    "mx.vmap(lambda r: r * float(c[0]))(x)",  # a captured array's value: allowed
    "mx.vmap(lambda r: (mx.async_eval(r * 2), r)[1])(x)",
    "mx.vmap(lambda r: (mx.async_eval(c * 2, 1), r)[1])(x)",
    "mx.grad(lambda r: (mx.async_eval(r), r.sum())[1])(x)",  # grad's input is traced too
    "mx.grad(lambda r: (mx.async_eval(c), (r * c).sum())[1])(x)",
    "mx.grad(lambda r: (mx.eval(r), r.sum())[1])(x)",  # eval inside grad: allowed
    "mx.vmap(lambda r: r, in_axes=None)",
    "mx.vmap(lambda r: r, 0, None)",
    "mx.vmap(len, None, out_axes=None)",
    "mx.vmap(lambda r: r, in_axes=[None])(x)",  # None inside a tree: the mapping's error
]


@pytest.mark.parametrize("expr", CASES)
def test_tracer_reads_and_bare_none_axes_match_mlx(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)
