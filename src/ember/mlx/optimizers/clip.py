"""`clip_grad_norm`: gradients scaled down to a maximum global norm."""

from __future__ import annotations

from typing import Any

from .. import core as mx
from ..utils import tree_map, tree_reduce


def clip_grad_norm(grads: Any, max_norm: float) -> tuple[Any, mx.array]:
    """`(grads scaled so their global L2 norm is at most max_norm, the norm before)`.

    The norm is over every leaf of the tree together. float16 squares are summed in
    float32 (they would overflow), and floating gradients keep their dtype after the
    scaling (done in the scale's precision first, so a tiny scale does not flush a
    float16 gradient to zero)."""
    if max_norm < 0:
        raise ValueError(f"max_norm should be >=0, {max_norm} was provided instead")

    def squared_norm(g: mx.array) -> mx.array:
        if g.dtype == mx.float16:
            g = g.astype(mx.float32)
        return g.square().sum()

    total_norm = mx.sqrt(tree_reduce(lambda acc, g: acc + squared_norm(g), grads, 0.0))
    scale = mx.minimum(1.0, max_norm / (total_norm + 1e-6))

    def rescale(g: mx.array) -> mx.array:
        if mx.issubdtype(g.dtype, mx.floating):
            return (g * scale).astype(g.dtype)
        return g * scale

    return tree_map(rescale, grads), total_norm
