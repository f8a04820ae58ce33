"""PyTorch's Hurwitz zeta and polygamma(n >= 2) replayed step for step (ops/_cephes_zeta.py):
bit for bit against torch on the same machine, float32 and float64.

Bitwise is sound here: PyTorch's zeta and polygamma kernels are scalar loops over Cephes'
zeta (accumulated in double for float32 too), with nothing its build contracts, calling
the C library's pow, lgamma and exp, as ember's kernels do."""

import numpy as np
import pytest
import torch

import ember


def _same_bits(e, t, where) -> None:
    a, b = e.numpy().ravel(), t.numpy().ravel()
    assert a.dtype == b.dtype
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    bad = np.nonzero(~same)[0]
    i = bad[0] if bad.size else 0
    assert bad.size == 0, f"{bad.size} differ, first at {where[i]}: {a[i]!r} vs {b[i]!r}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_bits(dtype):
    g = np.random.default_rng(2)
    s = np.concatenate([g.uniform(1, 30, 300), np.exp(g.uniform(-3, 5, 100)) + 1,
                        [1, 0.5, 2, 2, 3, np.inf, np.nan, 2, 2, 4, 2.5, 1.0000001, 60, 200]])
    q = np.concatenate([g.uniform(-5, 30, 300), np.exp(g.uniform(-10, 5, 100)),
                        [1, 1, 0, -1, -2.5, 2, 1, np.inf, np.nan, -3.5, -2.5, 1, 0.5, 1e-5]])
    s, q = s.astype(dtype), q.astype(dtype)
    _same_bits(ember.special.zeta(ember.tensor(s), ember.tensor(q)),
               torch.special.zeta(torch.tensor(s), torch.tensor(q)), list(zip(s, q)))
    # a Python number on either side, and broadcasting
    _same_bits(ember.special.zeta(3.0, ember.tensor(q[:50])),
               torch.special.zeta(3.0, torch.tensor(q[:50])), q[:50])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [2, 3, 6])
def test_polygamma_bits(n, dtype):
    # PyTorch's n! is exp(lgamma(n + 1)), inexact in the last bit: kept
    g = np.random.default_rng(n)
    x = np.concatenate([g.uniform(-8, 8, 200), np.exp(g.uniform(-8, 5, 100)),
                        [0.0, -0.0, -1.0, -2.5, 1.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    _same_bits(ember.polygamma(n, ember.tensor(x)), torch.polygamma(n, torch.tensor(x)), x)
    _same_bits(ember.special.polygamma(n, ember.tensor(x)),
               torch.special.polygamma(n, torch.tensor(x)), x)
