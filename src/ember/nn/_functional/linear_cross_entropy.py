"""`linear_cross_entropy`: cross entropy of a linear projection's logits, PyTorch's
reference path (`linear` then `cross_entropy`), with its shape checks.

PyTorch's chunked path (`options=LinearCrossEntropyOptions(...)`) computes the same loss
in batch chunks to save memory; ember has no such path, so `options` must be None.
"""

from __future__ import annotations

import math

from ..._tensor import Tensor
from .layers import linear
from .loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """`cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`; a weight of
    shape (C, d_1, ..., d_K, in_features) gives K-dimensional logits (N, C, d_1, ..., d_K).
    `ignore_index=None` means -100 for class indices and is required for probabilities."""
    if options is not None:
        raise NotImplementedError("linear_cross_entropy(options=...): ember has no chunked "
                                  "path; pass options=None for the reference computation")
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    # (cross_entropy reads probabilities when target has the logits' shape)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
