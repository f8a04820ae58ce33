"""Flat-index ops: take and put read or write a tensor as if it were 1-D, at the flat
positions an index tensor holds (negative ones counting from the end, for put).

take is the `index` primitive on the flattened input; put is `index_copy` along dim 0 of
the flattened input, so both take those primitives' derivatives.
"""

from __future__ import annotations

from .._tensor import Tensor
from . import index_checks as checks
from ._arg_parser_text import method_aware
from .index import index_p
from .index_key import TENSOR_SLOT
from .index_ops import index_copy_p
from .registry import apply, shows
from .ternary import where


@method_aware
def take(input: Tensor, index: Tensor) -> Tensor:
    """`input` read as 1-D at `index` (result has index's shape)."""
    checks.take(input, index)
    flat = input if input.ndim == 1 else input.reshape(-1)
    # (PyTorch's take_backward names the input: its node keeps it)
    return shows(apply(index_p, flat, index, key=(TENSOR_SLOT,)), "TakeBackward0",
                 index=index, self=input)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """`input` read as 1-D with `source`'s values written (or, with `accumulate`, added) at
    `index`; negative indices count from the end."""
    checks.put(input, index, source)
    if index.numel() == 0:
        return input.clone()
    n = input.numel()
    idx = index.reshape(-1)
    idx = where(idx < 0, idx + n, idx)
    r = apply(index_copy_p, input.reshape(-1), idx, source.reshape(-1), dim=0,
              accumulate=bool(accumulate))
    return shows(r.reshape(input._shape), "PutBackward0", accumulate=bool(accumulate),
                 index=index, source=source if source.requires_grad else None)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    checks.put(self, index, source)
    if index.numel() == 0:
        return self
    return self.copy_(put(self, index, source, accumulate))


TENSOR_METHODS = {"take": take, "put": put, "put_": put_}

__all__ = ["take", "put"]
