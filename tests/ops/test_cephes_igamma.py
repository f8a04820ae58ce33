"""PyTorch's regularised incomplete gamma functions (ops/_cephes_igamma.py): gammainc and
gammaincc bit for bit against torch on the same machine, float32 and float64.

Bitwise is sound here: PyTorch evaluates calc_igamma / calc_igammac one element at a time
(its Vectorized igamma maps the scalar function over the lanes), calling the C library's
exp, log, lgamma, erfc, pow, log1p and expm1, as ember's kernel does. What its build
decides is where the compiler contracted multiply-adds: in its AVX512 build, in blocks of
two vectors igamma's own steps are fused, its nested igammac and the loop's remaining
elements are not (its AVX2 build fuses none of the row loop's); ember follows that per
position for a contiguous loop (one chunk: below 32768 elements)."""

import numpy as np
import pytest
import torch

import ember

from helpers import each_kernel_profile  # noqa: F401  (the fixture, used by pytestmark)


def _pairs(n: int, seed: int):
    """Every regime: Temme's (a > 20, x ~ a; a > 200), both series, the continued fraction,
    the Lanczos prefactor (a ~ x) and the boundary values; shuffled, so that each regime
    falls both in whole vector blocks and in the remainder."""
    g = np.random.default_rng(seed)
    a = np.concatenate([g.uniform(0, 30, n), np.exp(g.uniform(-10, 6, n)),
                        g.uniform(150, 400, n),
                        [0, 1, 10, np.inf, np.nan, 0.5, -1, 0, np.inf, 3, 1e-30, 1e30]])
    x = np.concatenate([g.uniform(0, 30, n), np.exp(g.uniform(-10, 6, n)),
                        a[2 * n:3 * n] * g.uniform(0.3, 1.7, n),
                        [1, 0, 9, 1, 1, np.inf, 2, 0, np.inf, np.nan, 1e-30, 1e30]])
    p = g.permutation(a.size)
    return a[p], x[p]


pytestmark = pytest.mark.usefixtures("each_kernel_profile")


def _same_bits(e: ember.Tensor, t: torch.Tensor) -> None:
    a, b = e.numpy(), t.numpy()
    assert a.dtype == b.dtype
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    bad = np.nonzero(~same)[0]
    assert bad.size == 0, f"{bad.size} differ, first at {bad[0]}: {a[bad[0]]!r} vs {b[bad[0]]!r}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 400])
def test_gammainc_bits(dtype, n):
    a, x = (v.astype(dtype) for v in _pairs(n, n))
    ea, ex, ta, tx = ember.tensor(a), ember.tensor(x), torch.tensor(a), torch.tensor(x)
    _same_bits(ember.special.gammainc(ea, ex), torch.special.gammainc(ta, tx))
    _same_bits(ember.special.gammaincc(ea, ex), torch.special.gammaincc(ta, tx))
    _same_bits(ea.igamma(ex), ta.igamma(tx))


def test_known_values_and_forms():
    # the landing note's example, and float64 where PyTorch's Temme prefactor carries a
    # float32 pi (~1e-8 relative from the true value: kept, as PyTorch's)
    e = ember.special.gammainc(ember.tensor(10.0), ember.tensor(9.0))
    assert e.item() == torch.special.gammainc(torch.tensor(10.0), torch.tensor(9.0)).item()
    a = np.array([28.560878061785544, 20.240681863043324])
    x = np.array([20.651286771734743, 26.136043395112456])
    _same_bits(ember.special.gammainc(ember.tensor(a), ember.tensor(x)),
               torch.special.gammainc(torch.tensor(a), torch.tensor(x)))
    # broadcasting a 0-d operand, and the in-place form
    a32 = np.linspace(0.5, 40, 37, dtype=np.float32)
    _same_bits(ember.special.gammaincc(ember.tensor(a32), ember.tensor(12.5)),
               torch.special.gammaincc(torch.tensor(a32), torch.tensor(12.5)))
    e2, t2 = ember.tensor(a32), torch.tensor(a32)
    e2.igammac_(ember.tensor(a32[::-1].copy()))
    t2.igammac_(torch.tensor(a32[::-1].copy()))
    _same_bits(e2, t2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_loop_shapes(dtype):
    # P(10, 9) differs in the last bits between PyTorch's fused and unfused compilations:
    # its 0-d loop is fused throughout, a contiguous row (AVX512 build) fused in blocks of
    # two vectors and not in the remainder (AVX2 build: not at all), row by row where
    # broadcasting splits the loop (a strided loop, all fused in PyTorch, is left: ember
    # keeps a view's results equal to a copy's)
    cases = [((), ()), ((1,), (1,)), ((3,), ()), ((40,), ()), ((3, 1), (1, 40)),
             ((2, 40), (40,)), ((2, 3, 40), (3, 40)), ((5, 1), (5, 70)), ((70, 1), (70, 1))]
    for sa, sx in cases:
        e = ember.special.gammainc(ember.full(sa, 10.0, dtype=getattr(ember, dtype)),
                                   ember.full(sx, 9.0, dtype=getattr(ember, dtype)))
        t = torch.special.gammainc(torch.full(sa, 10.0, dtype=getattr(torch, dtype)),
                                   torch.full(sx, 9.0, dtype=getattr(torch, dtype)))
        _same_bits(e.reshape(-1), t.reshape(-1))
