"""MLX's infinity tests and `isclose` on complex arrays, which PyTorch's refuse or answer
otherwise.

Measured on mlx 0.32.4: `isposinf` (`isneginf`) of a complex number is `z == inf`
(`z == -inf`), true only for +-inf with a zero imaginary part, while `isinf` and `isnan`
look at either part. `isclose` is `|a - b| <= atol + rtol * |b|` with complex magnitudes
(a hypotenuse, infinite when either part is, even beside a NaN), then made false where
either side `isposinf` / `isneginf` and true where both are the same such infinity, and
with `equal_nan` true where both are NaN. So `0j` and `inf+1j` are close (both sides of the
inequality are inf) but `inf+1j` is not close to itself (its difference is NaN).
"""

from __future__ import annotations

import math

import ember as E
from ember import Tensor


def signed_inf(t: Tensor, sign: int) -> Tensor:
    """Where complex `t` equals `sign * inf` (its imaginary part zero)."""
    return (E.real(t) == sign * math.inf) & (E.imag(t) == 0)


def isclose(ta: Tensor, tb: Tensor, rtol: float, atol: float, equal_nan: bool) -> Tensor:
    """MLX's `isclose` of two complex tensors of one dtype, as a bool tensor."""
    out = E.abs(ta - tb) <= atol + rtol * E.abs(tb)
    pa, pb, na, nb = (signed_inf(t, s) for s in (1, -1) for t in (ta, tb))
    out = out & ~(pa | pb | na | nb) | (pa & pb) | (na & nb)
    if equal_nan:
        out = out | (E.isnan(ta) & E.isnan(tb))
    return out
