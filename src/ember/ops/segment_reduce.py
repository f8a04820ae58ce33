"""`torch.segment_reduce`: sum / prod / mean / max / min over consecutive segments of one
axis, the segments given by their lengths or offsets. A composite: the segments become a
scatter index (worked out in NumPy from the lengths, which are data PyTorch reads too) and
the reduction one `scatter_reduce`, so gradients are scatter_reduce's (ties of a max share
the gradient equally, as PyTorch's segment backward shares it)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._common import type_name
from .creation import from_numpy, full
from .index import scatter_p
from .index_ops import scatter_reduce_fn
from .registry import apply, rename_node
from .ternary import where

__all__ = ["segment_reduce"]

_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax", "min": "amin"}
_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "max": float("-inf"),
          "min": float("inf")}


def _segment_ids(n: int, lengths, offsets, axis: int, unsafe: bool) -> tuple[np.ndarray, int]:
    """Each position's segment along the axis, per leading index, (*lead, n), and the number
    of segments; positions no segment covers get the extra id S (dropped afterwards)."""
    if offsets is not None:
        off = offsets.detach().numpy().astype(np.int64)
        S = off.shape[-1] - 1
        pos = np.arange(n)
        ids = (pos[None, :] >= off.reshape(-1, S + 1)[:, :, None]).sum(1) - 1
        ids = np.where((ids < 0) | (ids >= S), S, ids)
        return ids.reshape(off.shape[:-1] + (n,)), S
    lens = lengths.detach().numpy()
    if lens.dtype.kind not in "iu":
        raise NotImplementedError(f'"_segment_reduce_lengths_cpu_kernel1" not implemented for '
                                  f"'{type_name(lengths.dtype)}'")
    lens = lens.astype(np.int64)
    if axis != lens.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if not unsafe:
        if (lens < 0).any():
            raise RuntimeError("lengths contains negative value!")
        if (lens.sum(-1) != n).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                               "sum to data.size(lengths.dim()-1) when !unsafe.")
    S = lens.shape[-1]
    ends = np.cumsum(np.maximum(lens, 0), -1).reshape(-1, S)
    ids = (np.arange(n)[None, :, None] >= ends[:, None, :]).sum(-1)  # (S past the last)
    return ids.reshape(lens.shape[:-1] + (n,)), S


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None, axis: int = 0,
                   unsafe: bool = False, initial=None) -> Tensor:
    """Reduce each segment of `data` along `axis` (segments of `lengths`, or between
    consecutive `offsets`); `initial` joins every segment (an empty one is `initial`, else
    0 / 1 / nan / -inf / inf for sum / prod / mean / max / min)."""
    # NOTE: torch's reduction parser takes "amax"/"amin" as the names of max/min too.
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not (data.dtype.is_floating_point):
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{type_name(data.dtype)}'")
    nd = data.dim()
    if not -nd <= axis < max(nd, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {axis})")
    axis %= max(nd, 1)
    ids, S = _segment_ids(data.shape[axis], lengths, offsets, axis, unsafe)
    lead = tuple(data.shape[:axis])
    tail = (1,) * (nd - axis - 1)
    index = from_numpy(np.array(
        np.broadcast_to(ids, lead + ids.shape[-1:]).reshape(lead + ids.shape[-1:] + tail)))
    index = index.expand(data.shape)
    shape = lead + (S + 1,) + tuple(data.shape[axis + 1:])
    kind = "sum" if reduce == "mean" else reduce
    # NOTE: PyTorch's kernel starts each segment at `initial` (else the identity) and adds
    # or multiplies its elements in order, rounding every step to the data's dtype (float16
    # too): the scatter seeds its target with `initial` and does not widen. A max / min
    # takes `initial` in afterwards (the same value), so ties with it take no gradient.
    seeded = initial is not None and kind in ("sum", "prod")
    base = full(shape, initial if seeded else _EMPTY[kind], dtype=data.dtype)
    out = apply(scatter_p, base, index, data, fn=scatter_reduce_fn, dim=axis,
                reduce=_REDUCE[kind], include_self=seeded, wide=False)
    out = out.narrow(axis, 0, S)
    if reduce == "mean":
        count = (ids[..., None] == np.arange(S)).sum(-2)  # (*lead, S)
        count = from_numpy(np.broadcast_to(count, lead + (S,)).reshape(lead + (S,) + tail)
                             .astype(np.float64)).to(data.dtype)
        out = out / count
        if initial is not None:
            out = where(count > 0, out, full((), initial, dtype=data.dtype))
    elif initial is not None and not seeded:
        # (`where`, not maximum: a tie with `initial` leaves the gradient to the elements, and
        # a NaN element stays NaN)
        init = full((), initial, dtype=data.dtype)
        out = where(out < init if reduce == "max" else out > init, init, out)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "SegmentReduceBackward0")
    return out


TENSOR_METHODS: dict = {}
