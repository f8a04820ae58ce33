"""`x[mask] = values` with a boolean array as the whole index: MLX's masked scatter.

The mask covers x's leading axes (its shape must be theirs). The values fill the selected
places in order, as a flat source: values with no more axes than the ones the mask leaves
are first broadcast to x's whole shape; otherwise their first axis counts the selected
items and the rest must broadcast to the axes the mask leaves. MLX's errors where not."""

from __future__ import annotations

import math

import ember as E

from ... import _tensor
from ._errors import check_broadcast
from ._indexing import shape_text

Tensor = _tensor.Tensor


def masked_write(x: Tensor, mask: Tensor, values: Tensor) -> Tensor:
    """A copy of `x` with the places `mask` selects taken in order from `values` (already
    in x's dtype)."""
    shape, k = tuple(x.shape), mask.dim()
    if k > len(shape):
        raise ValueError("[masked_scatter] The mask cannot have more dimensions than the "
                         "target.")
    if tuple(mask.shape) != shape[:k]:
        raise ValueError("[masked_scatter] The boolean mask should have the same shape as the "
                         "beginning of the indexed array but the mask has shape "
                         f"{shape_text(mask.shape)} and the array has shape {shape_text(shape)}")
    rest = shape[k:]
    if values.dim() <= len(rest):
        check_broadcast((1,) * (len(shape) - values.dim()) + tuple(values.shape), shape)
        source = E.broadcast_to(values, shape)
    else:
        if values.dim() != len(rest) + 1 or any(
                a != b and a != 1 for a, b in zip(values.shape[1:], rest)):
            raise ValueError("[masked_scatter] Value array shape must be broadcastable with "
                             f"the last {len(rest)} dimensions of the input.")
        source = E.broadcast_to(values, (values.shape[0], *rest))
    full = mask.reshape(*mask.shape, *(1,) * len(rest)).expand(*shape)
    count = int(mask.sum()) * math.prod(rest)
    source = source.reshape(-1)
    if source.shape[0] < count:
        # NOTE: MLX finds this when the result is evaluated (its CPU kernel's error);
        # ember at the write
        raise RuntimeError("[MaskedScatter::eval_cpu] Source does not have enough elements "
                           "for mask.")
    out = x.clone()
    out[full] = source[:count]
    return out
