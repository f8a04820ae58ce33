"""`torch.return_types`: the named tuple types of the ops that return several tensors
(`sort`, `topk`, `max`, `svd`, `linalg_slogdet` ...), each defined next to its op."""

from __future__ import annotations

from . import linalg as _linalg  # noqa: F401  (its result types register on import)
from .ops._return_types import RETURN_TYPES

globals().update(RETURN_TYPES)

__all__ = sorted(RETURN_TYPES)
