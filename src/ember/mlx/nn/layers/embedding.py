"""`Embedding`: a table of `num_embeddings` vectors looked up by integer index."""

from __future__ import annotations

import math

import ember as E

from ... import core as mx
from ...core import random
from ...core._array import _wrap
from .base import Module
from .quantized import QuantizedEmbedding


class Embedding(Module):
    """`weight[x]`, weight `(num_embeddings, dims)` drawn from N(0, 1/dims);
    `as_linear(x)` is `x @ weight.T` (for tied output layers)."""

    def __init__(self, num_embeddings: int, dims: int) -> None:
        super().__init__()
        self.weight = random.normal((num_embeddings, dims), scale=math.sqrt(1 / dims))

    def _extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"

    def __call__(self, x: mx.array) -> mx.array:
        if x.dtype.kind in "iu":  # ember's embedding (its backward a fused kernel)
            idx = x._t if x.dtype.carrier in (E.int32, E.int64) else x._t.to(E.int64)
            if x.dtype.kind == "i":  # MLX's gather reads negative indices from the end
                idx = E.where(idx < 0, idx + self.weight.shape[0], idx)
            return _wrap(E.nn.functional.embedding(idx, self.weight._t), self.weight.dtype)
        return self.weight[x]

    def as_linear(self, x: mx.array) -> mx.array:
        return x @ self.weight.T

    def to_quantized(self, group_size: int | None = None, bits: int | None = None,
                     mode: str = "affine", quantize_input: bool = False) -> Module:
        """This layer as a `QuantizedEmbedding` (the hook `nn.quantize` calls)."""
        if quantize_input:
            raise ValueError("Quantized input is not supported.")
        return QuantizedEmbedding.from_embedding(self, group_size, bits, mode)
