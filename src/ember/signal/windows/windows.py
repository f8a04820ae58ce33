"""Window functions as torch.signal.windows computes them: each one a `linspace` of sample
positions (scaled so the formula reads them directly) through one elementwise formula, in
the requested dtype, so the values round as PyTorch's do.

`sym=False` gives the periodic window (the first M points of an M + 1 symmetric one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import ember as E

from ..._tensor import Tensor


def _dtype(name: str, M: int, dtype, layout):
    """The window's dtype after PyTorch's common checks (length, layout, dtype)."""
    if dtype is None:
        dtype = E.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not E.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (E.float32, E.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype, device, requires_grad: bool, ones_for_one: bool = True):
    """The empty window for M = 0 and (where the formula would divide by zero) [1.] for
    M = 1; None otherwise."""
    if M == 0:
        return E.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and ones_for_one:
        return E.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _positions(start, step, M: int, dtype, device, requires_grad: bool) -> Tensor:
    """M evenly spaced positions from `start` with spacing `step`."""
    return E.linspace(start * step, (start + (M - 1)) * step, M, dtype=dtype, device=device,
                      requires_grad=requires_grad)


def _span(M: int, sym: bool) -> int:
    """The symmetric window's denominator: M - 1, or M for a periodic one (M > 1)."""
    return M if not sym and M > 1 else M - 1


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=E.strided, device=None, requires_grad: bool = False) -> Tensor:
    """exp(-|n - center| / tau)."""
    dtype = _dtype("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    empty = _trivial(M, dtype, device, requires_grad, ones_for_one=False)
    if empty is not None:
        return empty
    center = _span(M, sym) / 2.0 if center is None else center
    return E.exp(-E.abs(_positions(-center, 1 / tau, M, dtype, device, requires_grad)))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=E.strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """sin(pi * (n + 0.5) / M), the sine window."""
    dtype = _dtype("cosine", M, dtype, layout)
    empty = _trivial(M, dtype, device, requires_grad, ones_for_one=False)
    if empty is not None:
        return empty
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return E.sin(_positions(0.5, step, M, dtype, device, requires_grad))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=E.strided,
             device=None, requires_grad: bool = False) -> Tensor:
    """exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = _dtype("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    empty = _trivial(M, dtype, device, requires_grad, ones_for_one=False)
    if empty is not None:
        return empty
    k = _positions(-_span(M, sym) / 2.0, 1 / (std * math.sqrt(2)), M, dtype, device,
                   requires_grad)
    return E.exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=E.strided,
           device=None, requires_grad: bool = False) -> Tensor:
    """I0(beta * sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dtype = _dtype("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    ones = _trivial(M, dtype, device, requires_grad)
    if ones is not None:
        return ones
    b = E.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / (M - 1 if sym else M)
    # (the last position is clipped to beta, so the square root never sees a negative)
    k = E.linspace(-b, E.minimum(b, -b + (M - 1) * step), M, dtype=dtype, device=device,
                   requires_grad=requires_grad)
    return E.i0(E.sqrt(b * b - E.pow(k, 2))) / E.i0(b)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=E.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """1 - |2n / (M - 1) - 1|, the triangular window with zero ends."""
    dtype = _dtype("bartlett", M, dtype, layout)
    ones = _trivial(M, dtype, device, requires_grad)
    if ones is not None:
        return ones
    step = 2 / (M - 1 if sym else M)
    return 1 - E.abs(E.linspace(-1, -1 + (M - 1) * step, M, dtype=dtype, device=device,
                                requires_grad=requires_grad))


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=E.strided,
                   device=None, requires_grad: bool = False) -> Tensor:
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _dtype("general_cosine", M, dtype, layout)
    ones = _trivial(M, dtype, device, requires_grad)
    if ones is not None:
        return ones
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = E.linspace(0, (M - 1) * (2 * math.pi / (M - 1 if sym else M)), M, dtype=dtype,
                   device=device, requires_grad=requires_grad)
    coef = E.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                    requires_grad=requires_grad)
    order = E.arange(coef.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (coef.unsqueeze(-1) * E.cos(order.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None,
                    layout=E.strided, device=None, requires_grad: bool = False) -> Tensor:
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=E.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=E.strided, device=None,
         requires_grad: bool = False) -> Tensor:
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=E.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """general_cosine with a = (0.42, 0.5, 0.08)."""
    _dtype("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=E.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """Nuttall's four-term minimum side-lobe window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
