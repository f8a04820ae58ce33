"""`_complex_order` against MLX 0.32.4: max, min, argmax, argmin, cummax, cummin, sort and
argsort of complex arrays (by real part, then imaginary part; NaN in either part as each
MLX kernel folds it), compared bit for bit through the repr (which shows -0 and NaN's
sign), on fixed cases and on seeded random arrays of 1 and 2 dimensions."""

import math
import random

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_SETUP = ("n = float('nan'); inf = float('inf');"
          "z = mx.array([1+2j, 1-1j, -3+0j, 2+5j, 1+2j, 2-5j]);"
          "w = mx.array([0j, 1j, -1j, 2+0j, -2+0j, 1+1j, 1-1j]);"
          "z2 = mx.array([[1+2j, 1-1j, 3j], [1+0j, -1-1j, 1+5j]]);"
          "wn = mx.array([1+1j, complex(n, 0), complex(0, n), 2+0j, complex(1, inf)]);"
          "a = mx.array([[1+1j, complex(0, n)], [complex(0, n), 1+1j], [-1+0j, -2+0j]]);"
          "d = mx.array([complex(0, -0.0), 0j, complex(-0.0, 0)])")

CASES = [f"mx.{fn}({x})" for fn in ("max", "min", "argmax", "argmin", "sort", "argsort",
                                      "cummax", "cummin")
         for x in ("z", "w", "wn", "d", "z2", "z2, axis=0", "z2, 1", "a, axis=0", "a, axis=1",
                   "a.T, axis=1")]
CASES += [
    "mx.max(z, keepdims=True)", "mx.min(z2, axis=(0, 1), keepdims=True)", "mx.max(a)",
    "mx.max(mx.array([complex(-inf, -1), complex(-inf, -2)]))",  # (the fold starts at -inf+0j)
    "mx.min(mx.array([complex(inf, 1), complex(inf, 2)]))",
    "mx.max(mx.array([complex(0, n)]))", "mx.max(mx.array(complex(0, n)))",
    "mx.max(mx.array([[complex(0, n)], [complex(0, n)]]), axis=1)",
    "mx.argmax(z2, axis=1, keepdims=True)", "mx.argmin(mx.array([complex(0, n), complex(n, 0)]))",
    "z.max()", "z.argmin()", "mx.topk(z, 2)", "mx.topk(z2, 1, axis=0)",
    "mx.cummax(z, reverse=True)", "mx.cummin(wn, inclusive=False)",
    "mx.cummax(mx.array([complex(n, 1), 1+2j, 1+1j]), inclusive=False)",
    "mx.cummin(mx.array([complex(n, 1), 1+2j, 1+1j]), inclusive=False, reverse=True)",
    "mx.sort(z2, axis=None)", "mx.argsort(wn.reshape(1, 5), axis=1)",
    "mx.max(mx.zeros((0,), mx.complex64))", "mx.argmax(mx.zeros((0,), mx.complex64))",
]


@pytest.mark.parametrize("expr", CASES)
def test_complex_order_as_mlx(expr):
    assert outcome(expr, mx, _SETUP) == outcome(expr, mlx, _SETUP), expr


_VALUES = [complex(1, 1), complex(math.nan, 0), complex(0, math.nan), complex(2, 0),
           complex(math.nan, math.nan), complex(1, math.nan), complex(math.nan, 1),
           complex(0, 5), complex(-0.0, 0), complex(0, -0.0), complex(1, -1),
           complex(-math.inf, 1), complex(math.inf, -1), complex(1, 2), complex(2, -3)]
_OPS = ["mx.max(a{v}{ax})", "mx.min(a{v}{ax})", "mx.argmax(a{v}{ax1})", "mx.argmin(a{v}{ax1})",
        "mx.sort(a{v}{ax1})", "mx.argsort(a{v}{ax1})", "mx.cummax(a{v}{ax1})",
        "mx.cummin(a{v}{ax1})", "mx.cummax(a{v}{ax1}, reverse=True)",
        "mx.cummin(a{v}{ax1}, inclusive=False)"]


def _cases(seed: int, count: int) -> list:
    """(setup, expression) pairs: random arrays of 1 or 2 dimensions whose elements come
    from `_VALUES` (NaNs in some), each op along a random axis, of the array or its
    transpose."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        shape = rng.choice([(5,), (7,), (2, 3), (3, 2), (4, 3), (1, 4)])
        nans = rng.choice([0.0, 0.2, 0.5])
        data = [rng.choice(_VALUES) if rng.random() < nans else
                rng.choice([v for v in _VALUES if v == v]) for _ in range(math.prod(shape))]
        setup = ("a = mx.array([" + ", ".join(f"complex({v.real!r}, {v.imag!r})" for v in data)
                 + f"]).reshape({shape})").replace("nan", "float('nan')").replace(
                     "inf", "float('inf')")
        nd = len(shape)
        for op in _OPS:
            v = rng.choice(["", ".T"]) if nd > 1 else ""
            ax = rng.choice([None, *range(nd)] + ([(0, 1)] if nd > 1 else []))
            ax1 = rng.choice(list(range(nd)) + ([None] if "cum" not in op else []))
            out.append((setup, op.format(v=v, ax="" if ax is None else f", axis={ax}",
                                         ax1=f", axis={ax1}")))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_random_complex_arrays_order_as_mlx(seed):
    for setup, expr in _cases(seed, 40):
        assert outcome(expr, mx, setup) == outcome(expr, mlx, setup), (setup, expr)


def test_vmap_loops_over_the_fold():
    rows = [[1 + 2j, 3 - 1j, 3 + 0j], [0j, -1j, 1j]]
    for fn in ("argmax", "sort", "max"):
        ours = mx.vmap(getattr(mx, fn))(mx.array(rows))
        assert repr(ours) == repr(mlx.vmap(getattr(mlx, fn))(mlx.array(rows))), fn
