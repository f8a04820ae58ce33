"""Dropout layers: in training mode each element (Dropout) or each channel of each
example (Dropout2d / Dropout3d, channels last) is zeroed with probability `p` and the
rest scaled by 1 / (1 - p); in eval mode they pass their input through."""

from __future__ import annotations

from ... import core as mx
from ...core import random
from .base import Module


class Dropout(Module):
    """Zeroes elements with probability `p` in training mode."""

    _ndims: tuple = ()

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self) -> str:
        return f"p={1 - self._p_1}"

    def _mask_shape(self, x: mx.array) -> list:
        return list(x.shape)

    def __call__(self, x: mx.array) -> mx.array:
        if self._ndims and x.ndim not in self._ndims:
            a, b = self._ndims
            raise ValueError(f"Received input with {x.ndim} dimensions. Expected {a} or {b} "
                             "dimensions.")
        if self._p_1 == 1 or not self.training:
            return x
        mask = random.bernoulli(self._p_1, self._mask_shape(x))
        return mask * x * (1 / self._p_1)


class Dropout2d(Dropout):
    """Zeroes whole channels of inputs (N, H, W, C) or (H, W, C)."""

    _ndims = (3, 4)

    def __init__(self, p: float = 0.5) -> None:  # (its own: a TypeError names this layer)
        super().__init__(p)

    def _mask_shape(self, x: mx.array) -> list:
        shape = list(x.shape)
        shape[-2] = shape[-3] = 1
        return shape


class Dropout3d(Dropout):
    """Zeroes whole channels of inputs (N, D, H, W, C) or (D, H, W, C)."""

    _ndims = (4, 5)

    def __init__(self, p: float = 0.5) -> None:  # (its own: a TypeError names this layer)
        super().__init__(p)

    def _mask_shape(self, x: mx.array) -> list:
        shape = list(x.shape)
        shape[-2] = shape[-3] = shape[-4] = 1
        return shape
