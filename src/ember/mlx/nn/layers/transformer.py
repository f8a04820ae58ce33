"""Attention and transformers: MultiHeadAttention, TransformerEncoder(Layer),
TransformerDecoder(Layer) and Transformer, laid out as MLX's (pre-norm by default, relu
MLP of 4 * dims, no bias in the attention projections)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import core as mx
from ...core import fast
from ..utils import checkpoint as _checkpoint
from .activations import relu
from .base import Module
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm


def _heads(x: mx.array, n: int) -> mx.array:
    """(B, L, n * d) -> (B, n, L, d), by `unflatten` as MLX splits the heads (reading no
    shape in Python, so a shapeless compile follows a new length, as MLX's does)."""
    return mx.unflatten(x, -1, (n, -1)).transpose(0, 2, 1, 3)


class MultiHeadAttention(Module):
    """Attention of `num_heads` heads: project queries, keys and values, attend with
    scale 1/sqrt(head dims) and an optional additive or boolean `mask`, project out."""

    def __init__(self, dims: int, num_heads: int, query_input_dims: int | None = None,
                 key_input_dims: int | None = None, value_input_dims: int | None = None,
                 value_dims: int | None = None, value_output_dims: int | None = None,
                 bias: bool = False) -> None:
        super().__init__()
        if dims % num_heads:
            raise ValueError("The input feature dimensions should be divisible by the "
                             f"number of heads ({dims} % {num_heads}) != 0")
        query_input_dims = query_input_dims or dims
        key_input_dims = key_input_dims or dims
        value_input_dims = value_input_dims or key_input_dims
        value_dims = value_dims or dims
        value_output_dims = value_output_dims or dims
        self.num_heads = num_heads
        self.query_proj = Linear(query_input_dims, dims, bias=bias)
        self.key_proj = Linear(key_input_dims, dims, bias=bias)
        self.value_proj = Linear(value_input_dims, value_dims, bias=bias)
        self.out_proj = Linear(value_dims, value_output_dims, bias=bias)

    def __call__(self, queries: mx.array, keys: mx.array, values: mx.array,
                 mask=None) -> mx.array:
        n = self.num_heads
        q = _heads(self.query_proj(queries), n)
        k = _heads(self.key_proj(keys), n)
        v = _heads(self.value_proj(values), n)
        out = fast.scaled_dot_product_attention(q, k, v, scale=math.sqrt(1 / q.shape[-1]),
                                                mask=mask)
        return self.out_proj(out.transpose(0, 2, 1, 3).flatten(-2, -1))

    @staticmethod
    def create_additive_causal_mask(N: int, dtype=mx.float32) -> mx.array:  # noqa: N803
        """(N, N): 0 where key j <= query i, the dtype's lowest value above."""
        idx = mx.arange(N)
        mask = mx.expand_dims(idx, 1) < mx.expand_dims(idx, 0)
        return mask.astype(dtype) * mx.finfo(dtype).min


class TransformerEncoderLayer(Module):
    """Self-attention then an MLP, each with a residual; `norm_first` puts the
    LayerNorms before them (MLX's default) rather than after."""

    def __init__(self, dims: int, num_heads: int, mlp_dims: int | None = None,
                 dropout: float = 0.0, activation: Callable[[Any], Any] = relu,
                 norm_first: bool = True) -> None:
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x: mx.array) -> mx.array:
        return self.linear2(self.dropout2(self.activation(self.linear1(x))))

    def __call__(self, x: mx.array, mask) -> mx.array:
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.attention(y, y, y, mask))
            return x + self._mlp(self.ln2(x))
        x = self.ln1(x + self.dropout1(self.attention(x, x, x, mask)))
        return self.ln2(x + self._mlp(x))


class TransformerEncoder(Module):
    """`num_layers` encoder layers then a final LayerNorm."""

    def __init__(self, num_layers: int, dims: int, num_heads: int,
                 mlp_dims: int | None = None, dropout: float = 0.0,
                 activation: Callable[[Any], Any] = relu, norm_first: bool = True,
                 checkpoint: bool = False) -> None:
        super().__init__()
        self.layers = [TransformerEncoderLayer(dims, num_heads, mlp_dims, dropout,
                                               activation, norm_first)
                       for _ in range(num_layers)]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x: mx.array, mask) -> mx.array:
        for layer in self.layers:
            x = (_checkpoint(layer) if self.checkpoint else layer)(x, mask)
        return self.ln(x)


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention on `memory`, then an MLP, each with a residual."""

    def __init__(self, dims: int, num_heads: int, mlp_dims: int | None = None,
                 dropout: float = 0.0, activation: Callable[[Any], Any] = relu,
                 norm_first: bool = True) -> None:
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.self_attention = MultiHeadAttention(dims, num_heads)
        self.cross_attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.ln3 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x: mx.array) -> mx.array:
        return self.linear2(self.dropout3(self.activation(self.linear1(x))))

    def __call__(self, x: mx.array, memory: mx.array, x_mask, memory_mask) -> mx.array:
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.self_attention(y, y, y, x_mask))
            y = self.ln2(x)
            x = x + self.dropout2(self.cross_attention(y, memory, memory, memory_mask))
            return x + self._mlp(self.ln3(x))
        x = self.ln1(x + self.dropout1(self.self_attention(x, x, x, x_mask)))
        x = self.ln2(x + self.dropout2(self.cross_attention(x, memory, memory, memory_mask)))
        return self.ln3(x + self._mlp(x))


class TransformerDecoder(Module):
    """`num_layers` decoder layers then a final LayerNorm."""

    def __init__(self, num_layers: int, dims: int, num_heads: int,
                 mlp_dims: int | None = None, dropout: float = 0.0,
                 activation: Callable[[Any], Any] = relu, norm_first: bool = True,
                 checkpoint: bool = False) -> None:
        super().__init__()
        self.layers = [TransformerDecoderLayer(dims, num_heads, mlp_dims, dropout,
                                               activation, norm_first)
                       for _ in range(num_layers)]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x: mx.array, memory: mx.array, x_mask, memory_mask) -> mx.array:
        for layer in self.layers:
            x = (_checkpoint(layer) if self.checkpoint else layer)(x, memory, x_mask,
                                                                   memory_mask)
        return self.ln(x)


class Transformer(Module):
    """An encoder over `src` and a decoder over `tgt` attending to its output."""

    def __init__(self, dims: int = 512, num_heads: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, mlp_dims: int | None = None,
                 dropout: float = 0.0, activation: Callable[[Any], Any] = relu,
                 custom_encoder: Any = None, custom_decoder: Any = None,
                 norm_first: bool = True, checkpoint: bool = False) -> None:
        super().__init__()
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            num_encoder_layers, dims, num_heads, mlp_dims, dropout, activation, norm_first,
            checkpoint)
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            num_decoder_layers, dims, num_heads, mlp_dims, dropout, activation, norm_first,
            checkpoint)

    def __call__(self, src: mx.array, tgt: mx.array, src_mask, tgt_mask,
                 memory_mask) -> mx.array:
        return self.decoder(tgt, self.encoder(src, src_mask), tgt_mask, memory_mask)
