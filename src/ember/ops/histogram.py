"""Histograms: `histogram` (of all elements) and `histogramdd` (of N points in D dimensions,
the innermost dim of the input). PyTorch computes the first as the second with D = 1.

Bins per dimension are a count (equal-width bins over the data's range or `range`) or a 1-D
tensor of edges. Elements are placed as PyTorch's CPU kernel places them (ATen's
HistogramKernel): with counted bins, a linear estimate of the bin in the input's dtype
corrected by comparing against the neighbouring edges; with edge tensors, a binary search;
the last bin includes its right edge and anything outside the edges (or NaN) is dropped.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._arg_parser_text import invalid_combination
from ._common import c_type_name, type_name, write_out
from ._out_checks import check_out_tuple
from ._spacing import linspace_float as _linspace_float
from .reduce import return_type
from .registry import Primitive, apply, batch_by_loop, derivative_not_implemented

histogram_result = return_type("histogram", ["hist", "bin_edges"])
histogramdd_result = return_type("histogramdd", ["hist", "bin_edges"])

_HIST_SIGNATURES = (
    "(Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, "
    "tuple of Tensors out = None)",
    "(Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = None, "
    "bool density = False, tuple of Tensors out = None)",
)

_SIGNATURES = (
    "(Tensor input, int bins, tuple of floats range = None, Tensor weight = None, "
    "bool density = False)",
    "(Tensor input, tuple of ints bins, tuple of floats range = None, Tensor weight = None, "
    "bool density = False)",
    "(Tensor input, tuple of Tensors bins, tuple of floats range = None, Tensor weight = None, "
    "bool density = False)",
)


def _bin_positions(x, edges, counted: bool):
    """Each element's bin along one dimension (-1 where it falls outside the edges)."""
    n_edges = edges.shape[0]
    left, right = edges[0], edges[-1]
    with np.errstate(invalid="ignore"):
        inside = (x >= left) & (x <= right)
    xs = np.where(inside, x, left)
    if counted:
        # NOTE: the estimate is computed in the input's dtype, as ATen's kernel does, then
        # moved to the right bin by an upper_bound over the edges around it.
        with np.errstate(divide="ignore", invalid="ignore"):
            est = (xs - left) * x.dtype.type(n_edges - 1) / (right - left)
        est = np.clip(np.nan_to_num(np.trunc(est)), 0, n_edges - 1).astype(np.int64)
        lo = np.maximum(est - 1, 0)
        hi = np.minimum(est + 2, n_edges)
        pos = lo - 1
        for off in range(3):
            j = lo + off
            pos = pos + ((j < hi) & (edges[np.minimum(j, n_edges - 1)] <= xs))
    else:
        pos = np.searchsorted(edges, xs, side="right") - 1
    pos = np.where(pos == n_edges - 1, pos - 1, pos)
    return np.where(inside, pos, -1)


_GRAIN = 200  # (ATen's HISTOGRAM_GRAIN_SIZE: points per thread, divided by D)


def _accumulate(shape, flat, vals, dtype, n: int, n_dims: int):
    """The histogram as PyTorch's kernel sums it: each thread's chunk of the points adds its
    values one at a time into its own histogram, in the input's dtype (a bfloat16 count
    stops at 256 within a chunk), and the per-thread histograms are summed at the end."""
    from ._parallel import workers

    threads = workers()
    grain = max(1, _GRAIN // n_dims)
    tasks = min(threads, -(-n // grain)) if n > grain and threads > 1 else 1
    chunk = -(-n // tasks)
    parts = []
    for lo in range(0, n, chunk):
        part = np.zeros(math.prod(shape), dtype)
        sel = slice(np.searchsorted(flat[1], lo), np.searchsorted(flat[1], lo + chunk))
        np.add.at(part, flat[0][sel], vals[sel])  # (one element at a time, in order)
        parts.append(part)
    wide = np.float32 if np.dtype(dtype).itemsize == 2 else dtype
    total = parts[0].astype(wide)
    for part in parts[1:]:
        total = total + part.astype(wide)
    return total.astype(dtype).reshape(shape)


def _histogram_kernel(x, flat_edges, w, *, counts, counted, range, density, aten, n_dims):
    """(histogram, every dimension's edges end to end) of the rows of x (D = n_dims values
    each): counted bins get equal-width edges over `range` or the data's extent, computed
    here so that nothing outside a kernel reads the data."""
    sizes = [c - 1 for c in counts]
    x = x.reshape(-1, n_dims)
    w = None if w is None else w.reshape(-1)
    if counted:
        flat_edges = np.concatenate(_counted_edges(x, counts, range))
    low = x.dtype.itemsize == 2
    edges = np.split(flat_edges, np.cumsum(counts)[:-1])
    if x.shape[0] and all(sizes):
        flat = np.zeros(x.shape[0], np.int64)
        keep = np.ones(x.shape[0], bool)
        for d, e in enumerate(edges):
            pos = _bin_positions(x[:, d], e, counted)
            keep &= pos >= 0
            flat = flat * sizes[d] + np.maximum(pos, 0)
        vals = np.ones(x.shape[0], x.dtype) if w is None else w.astype(x.dtype)
        where = np.flatnonzero(keep)
        hist = _accumulate(sizes, (flat[where], where), vals[where], x.dtype, x.shape[0],
                           len(sizes))
    else:
        hist = np.zeros(sizes, x.dtype)
    if density:
        total = hist.sum(dtype=np.float32 if low else hist.dtype).astype(x.dtype)
        hist = hist / total
        for d, e in enumerate(edges):
            shape = [1] * len(sizes)
            shape[d] = sizes[d]
            hist = hist / np.diff(e).reshape(shape)
    return hist.astype(x.dtype, copy=False), flat_edges



def _histogram_meta(x, flat_edges, w, *, counts, counted, range, density, aten, n_dims):
    return ((tuple(c - 1 for c in counts), x._dtype), ((sum(counts),), x._dtype))


# One primitive for histogram and histogramdd: `aten` names the ATen op their backward errors
# name ("histogram", "_histogramdd_from_bin_cts"). Its outputs are the histogram and the
# edges (PyTorch's edges come from an op with no derivative either).
histogram_p = Primitive("histogram", _histogram_kernel, _histogram_meta, n_outputs=2)
derivative_not_implemented(histogram_p, lambda params: params["aten"], (True, True, True))
batch_by_loop(histogram_p, "without a range the bin edges come from each element's data")


def _cpp(d: dt.dtype) -> str:
    """A dtype as C++ names it ("float", "double"), as these messages of PyTorch's do."""
    return dt.CPP_TYPE_NAMES[d.name]


def _fmt(v: float) -> str:
    """A double as C++'s ostream prints it (as PyTorch's messages show numbers), a NaN
    with its sign bit set as "-nan"."""
    if v != v:
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return f"{v:g}"


def _counted_edges(points: np.ndarray, counts: list[int], range) -> list[np.ndarray]:
    """Equal-width edges per dimension over `range` or the data's [min, max] (in a kernel:
    the data's extent is read here)."""
    n_dims = len(counts)
    if range is not None:
        bounds = [(range[2 * d], range[2 * d + 1]) for d in builtins.range(n_dims)]
    elif points.size == 0:
        bounds = [(0.0, 1.0)] * n_dims
    else:
        bounds = list(zip(points.min(0).tolist(), points.max(0).tolist()))
    edges = []
    for d, (lo, hi) in enumerate(bounds):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(lo)}, "
                               f"{_fmt(hi)}] is not finite")
        if lo > hi:
            raise RuntimeError("torch.histogramdd: min should not exceed max, but got min "
                               f"{_fmt(lo)} max {_fmt(hi)} for dimension {d}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        n = counts[d]
        edges.append(_linspace_float(lo, hi, n, points.dtype.type) if n > 1
                     else np.array([lo], dtype=points.dtype))
    return edges


def _check_edges(points: Tensor, bins: list[Tensor]) -> None:
    for d, b in enumerate(bins):
        if b._dtype is not points._dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                               f"same dtype, but got input with dtype {_cpp(points._dtype)} "
                               f"and bins for dimension {d} with dtype {_cpp(b._dtype)}")
        if b.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {b.ndim} dimensions in the bins tensor for dimension {d}")
        if b.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, "
                               f"but got 0 elements in the bins tensor for dimension {d}")


def histogramdd(input: Tensor, bins, *, range=None, weight: Tensor | None = None,
                density: bool = False):
    """The D-dimensional histogram of the points in `input` (shape (..., D)): counts (or
    summed `weight`s, or a density when `density`) and the D tensors of bin edges."""
    flags = {"bins": bins}
    if range is not None:
        flags["range"] = range
    if isinstance(bins, (bool, builtins.float, Tensor)) or not (
            isinstance(bins, int) or (isinstance(bins, (list, tuple)) and (
                all(isinstance(b, int) and not isinstance(b, bool) for b in bins)
                or all(isinstance(b, Tensor) for b in bins)))):
        if isinstance(bins, (list, tuple)) and any(isinstance(b, Tensor) for b in bins):
            bad = next(i for i, b in enumerate(bins) if not isinstance(b, Tensor))
            raise TypeError(f"expected Tensor as element {bad} in argument 1, but got "
                            f"{type(bins[bad]).__name__}")
        raise invalid_combination("histogramdd", _SIGNATURES, (input,), flags)
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n_dims = input._shape[-1]
    counted = not (isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor))
    counts = [int(bins)] * n_dims if isinstance(bins, int) else list(bins)
    if len(counts) != n_dims:
        if counted:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        raise RuntimeError(f"torch.histogramdd: expected {n_dims} sequences of bin edges for a "
                           f"{n_dims}-dimensional histogram but got {len(counts)}")
    hist, edges = _histogram("_histogramdd_from_bin_cts", input, weight, input._shape, counts,
                             counted, range, density)
    return histogramdd_result(hist, tuple(edges))


def _histogram(aten: str, input, weight, shape, counts, counted, range, density):
    """The checks and the binning shared by histogram and histogramdd: the histogram of
    the rows of `input` seen as `shape` (D = its innermost size) and the edges used. `aten`
    names the ATen op a backward error names. The kernel takes input and weight as they
    are (no view of them in the graph, as in PyTorch's)."""
    n_dims = len(counts)
    if counted and input._dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{type_name(input._dtype)}'")
    if weight is not None:
        if weight._dtype is not input._dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor "
                               "and weight tensor should have the same dtype, but got "
                               f"input({_cpp(input._dtype)}), and weight({_cpp(weight._dtype)})")
        got = (weight.numel(),) if aten == "histogram" else tuple(weight._shape)
        if got != tuple(shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have "
                               "the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(shape)} and "
                               f"weight with shape {list(weight._shape)}")
    if counted:
        if range is not None:
            range = tuple(builtins.float(r) for r in range)
            if len(range) != 2 * n_dims:
                raise RuntimeError(f"torch.histogramdd: for a {n_dims}-dimensional histogram "
                                   f"range should have {2 * n_dims} elements, but got "
                                   f"{len(range)}")
        for d, c in enumerate(counts):
            if c + 1 <= 0:
                raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 "
                                   f"element, but got 0 elements in the bins tensor for "
                                   f"dimension {d}")
        n_edges = [c + 1 for c in counts]
        given = None
    else:
        _check_edges(input, counts)
        if input._dtype._kind != 2:  # (given edges also bin float16 and bfloat16 data)
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                      f"'{type_name(input._dtype)}'")
        n_edges = [b.numel() for b in counts]
        from .join import cat

        given = cat([b.detach() for b in counts])
        range = None
    for d, n in enumerate(n_edges):
        if n < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n - 1} "
                               f"for dimension {d}")
    hist, flat = apply(histogram_p, input, given, weight, counts=tuple(n_edges),
                       counted=counted, range=range, density=bool(density), aten=aten,
                       n_dims=n_dims)
    edges = [flat] if n_dims == 1 else list(flat.split(n_edges))
    return hist, edges


def histogram(input: Tensor, bins=100, *, range=None, weight: Tensor | None = None,
              density: bool = False, out=None):
    """Counts (or summed `weight`s, or a density) of all elements of `input` in `bins`
    equal-width bins over their range (or `range`), or between the edges in a 1-D tensor;
    into `out`, a (hist, bin_edges) pair of the input's dtype, when given."""
    if isinstance(bins, bool) or not isinstance(bins, (int, Tensor)):
        # (PyTorch names the keywords the call used; ember reports `bins` as positional)
        flags = {} if range is None else {"range": range}
        raise invalid_combination("histogram", _HIST_SIGNATURES, (input, bins), flags)
    if out is not None and not isinstance(out, (tuple, list)):  # (fits neither overload)
        flags = {k: v for k, v in (("range", range), ("out", out)) if v is not None}
        raise invalid_combination("histogram", _HIST_SIGNATURES, (input, bins), flags)
    if isinstance(bins, Tensor) and range is not None:
        raise invalid_combination("histogram", _HIST_SIGNATURES, (input, bins),
                                  {"range": range})
    counted = not isinstance(bins, Tensor)
    if counted and bins <= 0:  # (histogramdd says this only of 0; of -1, no edges)
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    _check_histogram_out(input, out)
    hist, edges = _histogram("histogram", input, weight, (input.numel(), 1),
                             [int(bins)] if counted else [bins], counted, range, density)
    r = histogram_result(hist, edges[0])
    return r if out is None else write_out(r, out)


def _check_histogram_out(input: Tensor, out) -> None:
    """`out=` of histogram: a (hist, bin_edges) pair, each of the input's dtype (cast into
    neither, as PyTorch's kernel refuses)."""
    check_out_tuple(out, "histogram")
    if out is None:
        return
    for o, what, tail in ((out[0], "hist", ""), (out[1], "bin_edges", " for dimension 0")):
        if isinstance(o, Tensor) and o._dtype is not input._dtype:
            raise RuntimeError(f"torch.histogram: input tensor and {what} tensor should have "
                               f"the same dtype, but got input {c_type_name(input._dtype)} and "
                               f"{what} {c_type_name(o._dtype)}{tail}")


__all__ = ["histogram", "histogramdd"]
TENSOR_METHODS = {"histogram": histogram}
