"""Masked reductions and normalizations (torch.masked) on strided tensors.

Each op replaces the masked-out elements of `input` by the identity of its reduction
(0 for sum, 1 for prod, -inf for amax / logsumexp / softmax, +inf for amin / softmin, NaN for
median) with `where`, then runs the ordinary op. Gradients therefore flow through `where`
and reach only the masked-in elements, as in PyTorch. A reduction whose elements are all
masked out gives that identity (mean / var / std give NaN: count 0).
"""

from __future__ import annotations

import math

from .. import (
    Tensor,
    broadcast_to,
    divide,
    float32,
    iinfo,
    int64,
    maximum,
    nanmedian,
    sqrt,
    subtract,
    tensor,
    uint8,
    where,
)
from .. import amax as _amax
from .. import amin as _amin
from .. import argmax as _argmax
from .. import argmin as _argmin
from .. import bool as _bool
from .. import cumprod as _cumprod
from .. import cumsum as _cumsum
from .. import logaddexp as _logaddexp
from .. import logsumexp as _logsumexp
from ..linalg import vector_norm
from ..nn import functional as F

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _canonical_dim(dim, ndim: int) -> tuple[int, ...]:
    """`dim` as a sorted tuple of non-negative dims; None or () mean every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    span = max(ndim, 1)
    out: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in out:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if not -span <= d < span:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-span}, "
                             f"{span - 1}], but got {d})")
        out.append(d % span)
    return tuple(sorted(out))


def _input_mask(input: Tensor, mask: Tensor) -> Tensor:
    """`mask` broadcast to the input's shape, as bool."""
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=_bool)


def _identity(op: str, input: Tensor, ord=None) -> Tensor:
    """The value that leaves reduction `op` unchanged, as a 0-d tensor of the input's dtype."""
    dt = input.dtype
    is_float = dt.is_floating_point
    # (complex counts as signed here, so iinfo refuses it, as in PyTorch)
    has_limits = dt.is_signed or dt == uint8
    if op in ("sum", "cumsum"):
        return tensor(0, dtype=dt)
    if op in ("prod", "cumprod"):
        return tensor(1, dtype=dt)
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if is_float:
            return tensor(-math.inf, dtype=dt)
        if op == "logsumexp" and dt.is_complex:
            return tensor(complex(-math.inf, 0), dtype=dt)
        if has_limits:
            return tensor(iinfo(dt).min, dtype=dt)
    elif op in ("amin", "argmin"):
        if is_float:
            return tensor(math.inf, dtype=dt)
        if has_limits:
            return tensor(iinfo(dt).max, dtype=dt)
    elif op == "norm":
        if ord == -math.inf:
            if not is_float:
                raise AssertionError(f"input must be floating point, got {dt}")
            return tensor(math.inf, dtype=dt)
        return tensor(0, dtype=dt)
    elif op == "median":
        return tensor(math.nan, dtype=dt if is_float else float32)
    raise NotImplementedError(f"identity of {op} on {dt} input")


def _fill(op: str, input: Tensor, mask: Tensor | None, ord=None) -> Tensor:
    """The input with its masked-out elements replaced by the identity of `op`."""
    if mask is None:
        return input
    return where(_input_mask(input, mask), input, _identity(op, input, ord))


def _int_to_long(input: Tensor, dtype):
    """Sums and products of small integer types accumulate in int64, as torch.sum does."""
    if dtype is None:
        return int64 if str(input.dtype).rsplit(".", 1)[-1] in _SMALL_INTS else input.dtype
    return dtype


def sum(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
        mask: Tensor | None = None) -> Tensor:
    """Sum over `dim` of the masked-in elements (0 where none is)."""
    dtype = _int_to_long(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _fill("sum", input, mask).sum(dims, bool(keepdim), dtype=dtype)


def prod(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """Product over `dim` of the masked-in elements (1 where none is)."""
    dtype = _int_to_long(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    out = _fill("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        out = out.prod(dim=d, keepdim=bool(keepdim))
    return out


def _count(input: Tensor, dim, keepdim: bool, mask: Tensor | None) -> Tensor:
    """How many elements are masked in along `dim` (int64)."""
    if mask is None:
        return sum(input.new_ones(input.shape, dtype=int64), dim, keepdim=keepdim)
    return _input_mask(input, mask).sum(dim=dim, keepdim=bool(keepdim))


def mean(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """Mean over `dim` of the masked-in elements (NaN where none is)."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, dim, keepdim, mask)


def amax(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """Largest masked-in element over `dim` (-inf, or the dtype's minimum, where none is)."""
    dims = _canonical_dim(dim, input.ndim)
    out = _amax(_fill("amax", input, mask), dims, bool(keepdim))
    return out.to(dtype=input.dtype if dtype is None else dtype)


def amin(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """Smallest masked-in element over `dim` (+inf, or the dtype's maximum, where none is)."""
    dims = _canonical_dim(dim, input.ndim)
    out = _amin(_fill("amin", input, mask), dims, bool(keepdim))
    return out.to(dtype=input.dtype if dtype is None else dtype)


def argmax(input: Tensor, dim: int | None = None, *, keepdim: bool = False, dtype=None,
           mask: Tensor | None = None) -> Tensor:
    """Index of the largest masked-in element; in the input's dtype unless `dtype` is given
    (PyTorch's masked argmax casts the indices so)."""
    out = _argmax(_fill("argmax", input, mask), dim, bool(keepdim))
    return out.to(dtype=input.dtype if dtype is None else dtype)


def argmin(input: Tensor, dim: int | None = None, *, keepdim: bool = False, dtype=None,
           mask: Tensor | None = None) -> Tensor:
    """Index of the smallest masked-in element (cast as `argmax` does)."""
    out = _argmin(_fill("argmin", input, mask), dim, bool(keepdim))
    return out.to(dtype=input.dtype if dtype is None else dtype)


def norm(input: Tensor, ord: float | None = 2.0, dim=None, *, keepdim: bool = False,
         dtype=None, mask: Tensor | None = None) -> Tensor:
    """Vector `ord`-norm over `dim` of the masked-in elements."""
    filled = _fill("norm", input, mask, ord)
    dims = _canonical_dim(dim, input.ndim)
    return vector_norm(filled, ord, dims, bool(keepdim),
                       dtype=input.dtype if dtype is None else dtype)


def _std_var(input: Tensor, dim, unbiased, correction, keepdim, dtype, mask,
             take_sqrt: bool) -> Tensor:
    """Variance (or its root) of the masked-in elements with Bessel's `correction`."""
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else float32
    count = _count(input, dim, True, mask)
    centred = subtract(input, divide(sum(input, dim, keepdim=True, dtype=dtype, mask=mask),
                                     count))
    total = sum(centred * centred.conj(), dim, keepdim=keepdim, dtype=compute, mask=mask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        real = compute.to_real() if compute.is_complex else compute
        count = subtract(count.to(real), corr)
        count = maximum(count, count.new_zeros([]))
    out = divide(total, count).to(dtype=dtype)
    return sqrt(out) if take_sqrt else out


def var(input: Tensor, dim=None, unbiased: bool | None = None, *, correction=None,
        keepdim: bool = False, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Variance over `dim` of the masked-in elements."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input: Tensor, dim=None, unbiased: bool | None = None, *, correction=None,
        keepdim: bool = False, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Standard deviation over `dim` of the masked-in elements."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def logsumexp(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
              mask: Tensor | None = None) -> Tensor:
    """log(sum(exp)) over `dim` of the masked-in elements (-inf where none is)."""
    dims = _canonical_dim(dim, input.ndim)
    out = _logsumexp(_fill("logsumexp", input, mask), dims, keepdim=keepdim)
    return out.to(dtype=input.dtype if dtype is None else dtype)


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype=None,
           mask: Tensor | None = None) -> Tensor:
    """Median along `dim` of the masked-in elements (NaN where none is)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=float32)
    out = nanmedian(_fill("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if out.isnan().any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype=dtype)


def softmax(input: Tensor, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Softmax along `dim` over the masked-in elements (0 at the masked-out ones, NaN on a
    row with none)."""
    d = _canonical_dim(dim, input.ndim)[0]
    return F.softmax(_fill("amax", input, mask), d,
                     dtype=input.dtype if dtype is None else dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Log-softmax along `dim` over the masked-in elements (-inf at the masked-out ones)."""
    d = _canonical_dim(dim, input.ndim)[0]
    return F.log_softmax(_fill("amax", input, mask), d,
                         dtype=input.dtype if dtype is None else dtype)


def softmin(input: Tensor, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Softmin along `dim` over the masked-in elements."""
    d = _canonical_dim(dim, input.ndim)[0]
    return F.softmin(_fill("amin", input, mask), d,
                     dtype=input.dtype if dtype is None else dtype)


def normalize(input: Tensor, ord: float, dim: int, *, eps: float = 1e-12, dtype=None,
              mask: Tensor | None = None) -> Tensor:
    """The masked-in elements divided by their `ord`-norm along `dim` (masked-out ones 0)."""
    dtype = input.dtype if dtype is None else dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return divide(_fill("sum", input, mask), maximum(nrm, nrm.new_full([], eps)))


def cumsum(input: Tensor, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Running sum along `dim` that skips the masked-out elements."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _cumsum(_fill("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Running product along `dim` that skips the masked-out elements."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _cumprod(_fill("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def logaddexp(input: Tensor, other: Tensor, *, dtype=None, input_mask: Tensor | None = None,
              other_mask: Tensor | None = None) -> Tensor:
    """log(exp(input) + exp(other)) with each side's masked-out elements taken as -inf."""
    out = _logaddexp(_fill("logaddexp", input, input_mask),
                     _fill("logaddexp", other, other_mask))
    return out.to(dtype=input.dtype if dtype is None else dtype)
