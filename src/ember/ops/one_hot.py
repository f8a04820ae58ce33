"""one_hot's plain call: the encoding written in one pass over the values, read once
(nn.functional.one_hot keeps the checks and the composite for every other call)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap
from .one_node import plain_call, plain_eager


def plain_values(t: Tensor) -> np.ndarray | None:
    """`t`'s values, flat, where nothing would record or see the composite's ops."""
    return t._array().reshape(-1) if plain_call(t) and plain_eager() else None


def encode(values: np.ndarray, shape: tuple, num_classes: int) -> Tensor:
    """The int64 row-major one-hot rows of `values` (checked to lie in [0, num_classes)):
    a 1 written into each row of zeros."""
    out = np.zeros((values.size, num_classes), np.int64)
    out[np.arange(values.size), values] = 1
    return _wrap(out.reshape(tuple(shape) + (num_classes,)))
