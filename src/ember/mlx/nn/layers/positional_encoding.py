"""Positional encodings: RoPE (rotary, through `mx.fast.rope`), sinusoidal features,
and ALiBi's attention biases."""

from __future__ import annotations

import math

from ... import core as mx
from ...core import fast
from .base import Module


class RoPE(Module):
    """Rotary encoding of the first `dims` features of (..., L, D) inputs, positions
    starting at `offset`; `traditional` rotates consecutive pairs instead of halves."""

    def __init__(self, dims: int, traditional: bool = False, base: float = 10000,
                 scale: float = 1.0) -> None:
        super().__init__()
        self.dims = dims
        self.traditional = traditional
        self.base = base
        self.scale = scale

    def _extra_repr(self) -> str:
        return f"{self.dims}, traditional={self.traditional}"

    def __call__(self, x: mx.array, offset: int = 0) -> mx.array:
        return fast.rope(x, self.dims, traditional=self.traditional, base=self.base,
                         scale=self.scale, offset=offset)


class SinusoidalPositionalEncoding(Module):
    """Features [sin(x * s), cos(x * s)] (or cos first) of positions `x`, with `dims / 2`
    frequencies s spaced geometrically from `max_freq` down to `min_freq`, scaled by
    `scale` (default sqrt(2 / dims)); `full_turns` multiplies the frequencies by 2 pi."""

    def __init__(self, dims: int, min_freq: float = 0.0001, max_freq: float = 1,
                 scale: float | None = None, cos_first: bool = False,
                 full_turns: bool = False) -> None:
        super().__init__()
        if dims <= 0 or dims % 2:
            raise ValueError("[SinusoidalPositionalEncoding] dims must be positive and even"
                             f" but got {dims}.")
        half = dims // 2
        one_zero = mx.array([1.0]) if half == 1 else 1 - mx.arange(0, half) / (half - 1)
        lo, hi = math.log(min_freq), math.log(max_freq)
        self._sigmas = mx.exp(one_zero * (hi - lo) + lo)
        if full_turns:
            self._sigmas = self._sigmas * (2 * math.pi)
        self.scale = scale if scale is not None else (2 / dims) ** 0.5
        self.cos_first = cos_first

    def __call__(self, x: mx.array) -> mx.array:
        y = mx.expand_dims(x, -1) * self._sigmas
        parts = [mx.cos(y), mx.sin(y)] if self.cos_first else [mx.sin(y), mx.cos(y)]
        y = mx.concatenate(parts, axis=-1)
        return y * self.scale if self.scale != 1 else y


class ALiBi(Module):
    """Adds ALiBi's per-head linear distance penalties to attention scores
    (B, heads, L, S)."""

    @staticmethod
    def create_alibi_matrix(q_sequence_length: int, k_sequence_length: int, num_heads: int,
                            offset: int = 0, dtype=mx.float32) -> mx.array:
        q = mx.arange(offset, q_sequence_length)
        k = mx.arange(0, k_sequence_length)
        distance = -mx.abs(mx.expand_dims(q, 1) - mx.expand_dims(k, 0))
        distance = mx.expand_dims(mx.expand_dims(distance, 0), 0)
        return (distance * ALiBi.create_alibi_slope(num_heads, dtype)).astype(dtype)

    @staticmethod
    def create_alibi_slope(num_heads: int, dtype=mx.float32) -> mx.array:
        def slopes(n: int) -> list:
            if math.log2(n).is_integer():
                start = 2 ** (-(2 ** -(math.log2(n) - 3)))
                return [start * start**i for i in range(n)]
            p = 2 ** math.floor(math.log2(n))
            return slopes(p) + slopes(2 * p)[0::2][:n - p]

        return mx.array(slopes(num_heads), dtype=dtype).reshape(-1, 1, 1)

    def __call__(self, attention_scores: mx.array, offset: int = 0,
                 mask: mx.array | None = None) -> mx.array:
        bias = ALiBi.create_alibi_matrix(attention_scores.shape[-2] + offset,
                                         attention_scores.shape[-1],
                                         attention_scores.shape[1], offset,
                                         attention_scores.dtype)
        if mask is not None:
            bias = bias + mask
        return attention_scores + bias
