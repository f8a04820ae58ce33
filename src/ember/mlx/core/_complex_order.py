"""MLX's order of complex numbers, for `max`, `min`, `argmax`, `argmin`, `cummax`,
`cummin`, `sort`, `argsort` (and so `topk`, `partition`) of complex arrays, which
PyTorch refuses.

MLX compares complex numbers by real part, then by imaginary part (`a > b` is
`a.re > b.re || (a.re == b.re && a.im > b.im)`, so a NaN in either part compares false),
and a complex number is NaN when either part is. Measured on mlx 0.32.4, each op folds
along its axis as MLX's CPU kernels do, which decides what a NaN does:

- `argmax` (`argmin`): from the first element, move to a later one that is greater
  (smaller), or that is NaN while the current one is not.
- `max` (`min`): from -inf+0j (+inf+0j), take each element that is NaN or greater
  (smaller), the elements taken in memory order. When the reduced axes hold the one
  innermost in memory, MLX's contiguous kernel then turns a NaN result into nan+0j; a
  strided reduction keeps the NaN element (both decided here from the tensor's strides).
  A reduction over one element is the element. NOTE: a reduction of a transposed view of
  3 or more dimensions over an axis in the middle can differ where NaNs are (MLX walks
  such layouts in orders of its own).
- `cummax`: keep the running value while it is greater than the next element, else take
  the element; `cummin`: take the element when it is smaller, else keep the running value
  (so NaNs enter `cummax` but not `cummin`). The exclusive scans start from -inf-infj
  (+inf+infj).
- `sort`: ascending, NaNs last, stable (ties, -0 and 0 included, keep their order).

The folds run in one primitive of the MLX face (`mlx_complex_order`, NumPy kernel, a
loop along the axis vectorised over the rest), on a 2-D tensor whose rows are the lines
to fold; nothing differentiates through it, and vmap loops over it.
"""

from __future__ import annotations

import math

import numpy as np

import ember as E

from ... import _dtype as edt
from ...ops.registry import Primitive, apply, batch_by_loop, nondifferentiable


def _nan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x.real) | np.isnan(x.imag)


def _above(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """MLX's `x > y` of complex numbers."""
    return (x.real > y.real) | ((x.real == y.real) & (x.imag > y.imag))


def _better(op: str):
    return _above if op.endswith("max") else lambda x, y: _above(y, x)


def _arg(a: np.ndarray, op: str) -> np.ndarray:
    better = _better(op)
    v, ind = a[:, 0], np.zeros(a.shape[0], np.int64)
    for j in range(1, a.shape[1]):
        x = a[:, j]
        take = better(x, v) | (_nan(x) & ~_nan(v))
        v = np.where(take, x, v)
        ind[take] = j
    return ind


def _extreme(a: np.ndarray, op: str, contiguous: bool) -> np.ndarray:
    if a.shape[1] == 1:
        return a[:, 0].copy()
    better = _better(op)
    acc = np.full(a.shape[0], complex(-math.inf if op == "max" else math.inf, 0), a.dtype)
    for j in range(a.shape[1]):
        x = a[:, j]
        acc = np.where(_nan(x) | better(x, acc), x, acc)
    if contiguous:
        acc = np.where(_nan(acc), np.array(complex(math.nan, 0), a.dtype), acc)
    return acc


def _scan(a: np.ndarray, op: str) -> np.ndarray:
    out = a.copy()
    for j in range(1, a.shape[1]):
        acc, x = out[:, j - 1], a[:, j]
        keep = _above(acc, x)  # (cummax: the running value is greater; cummin: x smaller)
        out[:, j] = np.where(keep, acc, x) if op == "cummax" else np.where(keep, x, acc)
    return out


def _argsort(a: np.ndarray) -> np.ndarray:
    nan = _nan(a)
    real, imag = np.where(nan, 0, a.real), np.where(nan, 0, a.imag)
    return np.lexsort((imag, real, nan), axis=-1).astype(np.int64)


def _kernel(a, *, op: str, contiguous: bool):
    if op in ("argmax", "argmin"):
        return _arg(a, op)
    if op in ("max", "min"):
        return _extreme(a, op, contiguous)
    if op in ("cummax", "cummin"):
        return _scan(a, op)
    return _argsort(a)


def _meta(a, *, op: str, contiguous: bool):
    rows = a._shape[:1]
    if op in ("argmax", "argmin"):
        return rows, edt.int64
    if op in ("max", "min"):
        return rows, a._dtype
    return a._shape, a._dtype if op in ("cummax", "cummin") else edt.int64


order_p = Primitive("mlx_complex_order", _kernel, _meta)
nondifferentiable(order_p)
batch_by_loop(order_p, "each line is folded in a loop along its axis")


def _lines(t, axes: tuple):
    """`t` with `axes` moved last and merged: (rows, length), and the kept axes' shape."""
    rest = [d for d in range(t.dim()) if d not in axes]
    kept = tuple(t.shape[d] for d in rest)
    n = math.prod(t.shape[d] for d in axes)
    return E.permute(t, (*rest, *axes)).reshape(math.prod(kept), n), kept


def _innermost(t, axes: tuple) -> bool:
    """Whether MLX would reduce `axes` of `t` with its contiguous kernel: the reduced axes
    (of length > 1) include the one with stride 1."""
    try:
        strides = t.stride()
    except (RuntimeError, NotImplementedError):  # (no layout: take the usual one)
        return axes[-1] == t.dim() - 1
    return min((abs(strides[d]) for d in axes if t.shape[d] > 1), default=1) == 1


def _in_memory_order(t, axes: tuple) -> tuple:
    """`axes` in the order MLX's kernels walk them: outermost in memory first."""
    try:
        strides = t.stride()
    except (RuntimeError, NotImplementedError):
        return axes
    return tuple(sorted(axes, key=lambda d: -abs(strides[d])))


def extreme(t, axes: tuple, keepdims: bool, op: str):
    """MLX's `max` / `min` (`op`) of complex tensor `t` over `axes` (sorted, nonempty),
    folded in memory order, as MLX's kernels walk the array."""
    rows, kept = _lines(t, _in_memory_order(t, axes))
    out = apply(order_p, rows, op=op, contiguous=_innermost(t, axes)).reshape(kept)
    if keepdims:
        for d in axes:
            out = out.unsqueeze(d)
    return out


def arg(t, dim: int, keepdim: bool, op: str):
    """MLX's `argmax` / `argmin` (`op`) of complex tensor `t` along `dim` (int64)."""
    dim %= t.dim()
    rows, kept = _lines(t, (dim,))
    out = apply(order_p, rows, op=op, contiguous=True).reshape(kept)
    return out.unsqueeze(dim) if keepdim else out


def _along(t, dim: int, op: str):
    """`op` (cummax, cummin, argsort) of complex `t` along `dim`, in `t`'s shape."""
    moved = E.movedim(t, dim, -1)
    lines = moved.reshape(math.prod(moved.shape[:-1]), moved.shape[-1])
    rows = apply(order_p, lines, op=op, contiguous=True)
    return E.movedim(rows.reshape(moved.shape), -1, dim)


def cumulative(t, dim: int, op: str):
    """`cummax` / `cummin` (`op`) along `dim`: MLX's order for complex, else PyTorch's."""
    if not t.dtype.is_complex:
        return (E.cummax if op == "cummax" else E.cummin)(t, dim).values
    return _along(t, dim % t.dim(), op)


def argsort(t, dim: int):
    """Stable ascending order of `t` along `dim` (int64): MLX's for complex."""
    if not t.dtype.is_complex:
        return E.argsort(t, dim=dim, stable=True)
    return _along(t, dim % t.dim(), "argsort")


def sort(t, dim: int):
    """`t` sorted ascending along `dim` (stable): MLX's order for complex."""
    if not t.dtype.is_complex:
        return E.sort(t, dim=dim, stable=True).values
    return E.gather(t, dim, argsort(t, dim))
