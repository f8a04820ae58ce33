"""`nn.losses`: MLX's loss functions with MLX's default reductions (cross_entropy,
nll_loss, kl_div_loss and the ranking losses: 'none'; mse, l1, smooth_l1,
binary_cross_entropy, gaussian_nll: 'mean')."""

from __future__ import annotations

import math
from typing import Literal, get_args

import ember as E

from .. import core as mx
from .._listing import listing
from ..core._array import _wrap

Reduction = Literal["none", "mean", "sum"]


def _check_reduction(reduction: str) -> None:
    if reduction not in get_args(Reduction):
        raise ValueError(f"Invalid reduction. Must be one of {get_args(Reduction)}.")


def _reduce(loss: mx.array, reduction: Reduction = "none") -> mx.array:
    _check_reduction(reduction)
    if reduction == "mean":
        return mx.mean(loss)
    if reduction == "sum":
        return mx.sum(loss)
    return loss


def _same_shape(a: mx.array, b: mx.array, a_name: str, b_name: str) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{a_name.capitalize()} shape {a.shape} does not match {b_name} "
                         f"shape {b.shape}.")


def _weighted(loss: mx.array, weights: mx.array | None) -> mx.array:
    if weights is None:
        return loss
    if weights.shape != loss.shape:
        raise ValueError(f"Weights with shape {weights.shape} is not the same as output "
                         f"loss with shape {loss.shape}.")
    return loss * weights


def _without(shape: tuple, axis: int) -> tuple:
    """`shape` with `axis` removed (an IndexError past its end, as Python's list.pop)."""
    kept = list(shape)
    kept.pop(axis)
    return tuple(kept)


def cross_entropy(logits: mx.array, targets: mx.array, weights: mx.array | None = None,
                  axis: int = -1, label_smoothing: float = 0.0,
                  reduction: Reduction = "none") -> mx.array:
    """Cross entropy of `logits` against class indices (one axis fewer) or
    probabilities (same shape), with optional label smoothing and per-item weights."""
    if not 0 <= label_smoothing < 1:
        raise ValueError(f"Label smoothing must be in [0, 1), got {label_smoothing}.")
    probs = targets.ndim == logits.ndim
    # (the shape without `axis` is read only for class indices, as MLX reads it: equal 0-d
    # arrays pass here and are refused by the max along `axis` below)
    if (probs and targets.shape != logits.shape) or (
            not probs and targets.shape != _without(logits.shape, axis)):
        raise ValueError(f"Targets shape {targets.shape} does not match logits shape "
                         f"{logits.shape}.")
    # (the fused op for integer class indices of float32 logits only: other indices go to
    # take_along_axis, which refuses them as MLX does. NOTE: half-precision logits take
    # MLX's CPU steps below, each rounded to the logits' dtype, as MLX's CPU path does;
    # the fused op would round once)
    if not probs and label_smoothing == 0 and weights is None and \
            targets.dtype.kind in "iu" and axis % logits.ndim == logits.ndim - 1 and \
            logits.size > 0 and logits.dtype == mx.float32:
        # (empty logits take the steps below, whose logsumexp refuses them as MLX's does)
        return _indexed_cross_entropy(logits, targets, reduction)
    logits = logits - mx.stop_gradient(mx.max(logits, axis=axis, keepdims=True))
    if probs:
        score = mx.sum(logits * targets, axis=axis)
    else:
        score = mx.take_along_axis(logits, mx.expand_dims(targets, axis), axis).squeeze(axis)
    lse = mx.logsumexp(logits, axis=axis)
    if label_smoothing > 0:
        loss = (lse - (1 - label_smoothing) * score
                + -mx.mean(logits, axis=axis) * label_smoothing)
    else:
        loss = lse - score
    return _reduce(_weighted(loss, weights), reduction)


def _indexed_cross_entropy(logits: mx.array, targets: mx.array,
                           reduction: Reduction) -> mx.array:
    """Cross entropy against class indices along the last axis as one fused op (ember's
    log-softmax + NLL, forward and backward): the same sum as above, `lse - score`."""
    _check_reduction(reduction)
    t = logits._t
    n_classes = t.shape[-1]
    flat = t.reshape(-1, n_classes) if t.dim() != 2 else t
    idx = targets._t.reshape(-1).to(E.int64)
    if targets.dtype.kind == "i" and n_classes:  # (a negative class counts from the end)
        idx = E.remainder(idx, n_classes)
    loss = E.nn.functional.cross_entropy(flat, idx, reduction=reduction)
    if reduction == "none":
        loss = loss.reshape(tuple(targets.shape))
    # (MLX's `lse - score` is +0.0 where the two are equal; the negated log-softmax is -0.0)
    return _wrap(loss + 0.0, logits.dtype)


def binary_cross_entropy(inputs: mx.array, targets: mx.array,
                         weights: mx.array | None = None, with_logits: bool = True,
                         reduction: Reduction = "mean") -> mx.array:
    """Binary cross entropy of logits (or, `with_logits=False`, probabilities, whose
    logs are clipped at -100 as PyTorch's are)."""
    _same_shape(inputs, targets, "inputs", "targets")
    if with_logits:
        loss = mx.logaddexp(0.0, inputs) - inputs * targets
    else:
        log_p = mx.clip(mx.log(inputs), -100, None)
        log_q = mx.clip(mx.log(1 - inputs), -100, None)
        loss = -(targets * log_p + (1 - targets) * log_q)
    return _reduce(_weighted(loss, weights), reduction)


def l1_loss(predictions: mx.array, targets: mx.array,
            reduction: Reduction = "mean") -> mx.array:
    _same_shape(predictions, targets, "predictions", "targets")
    return _reduce(mx.abs(predictions - targets), reduction)


def mse_loss(predictions: mx.array, targets: mx.array,
             reduction: Reduction = "mean") -> mx.array:
    _same_shape(predictions, targets, "predictions", "targets")
    return _reduce(mx.square(predictions - targets), reduction)


def nll_loss(inputs: mx.array, targets: mx.array, axis: int = -1,
             reduction: Reduction = "none") -> mx.array:
    """Negative log likelihood of log-probabilities `inputs` at class indices `targets`."""
    loss = -mx.take_along_axis(inputs, mx.expand_dims(targets, axis), axis).squeeze(axis)
    return _reduce(loss, reduction)


def gaussian_nll_loss(inputs: mx.array, targets: mx.array, vars: mx.array,  # noqa: A002
                      full: bool = False, eps: float = 1e-6,
                      reduction: Reduction = "mean") -> mx.array:
    """Negative Gaussian log likelihood with predicted means `inputs` and variances
    `vars` (clamped below at `eps`)."""
    _same_shape(inputs, targets, "inputs", "targets")
    _same_shape(inputs, vars, "inputs", "vars")
    vars = mx.maximum(vars, eps)  # noqa: A001
    loss = 0.5 * (mx.log(vars) + mx.square(targets - inputs) / vars)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def kl_div_loss(inputs: mx.array, targets: mx.array, axis: int = -1,
                reduction: Reduction = "none") -> mx.array:
    """KL divergence summed over `axis`; both arguments are log-probabilities."""
    return _reduce(mx.sum(mx.exp(targets) * (targets - inputs), axis), reduction)


def smooth_l1_loss(predictions: mx.array, targets: mx.array, beta: float = 1.0,
                   reduction: Reduction = "mean") -> mx.array:
    _same_shape(predictions, targets, "predictions", "targets")
    diff = mx.abs(predictions - targets)
    loss = mx.where(diff < beta, 0.5 * mx.square(diff) / beta, diff - 0.5 * beta)
    return _reduce(loss, reduction)


def triplet_loss(anchors: mx.array, positives: mx.array, negatives: mx.array,
                 axis: int = -1, p: int = 2, margin: float = 1.0, eps: float = 1e-6,
                 reduction: Reduction = "none") -> mx.array:
    """max(d(a, p) - d(a, n) + margin, 0) with p-norm distances along `axis`."""
    def dist(a, b):
        return mx.power(mx.power(mx.abs(a - b), p).sum(axis) + eps, 1.0 / p)

    loss = mx.maximum(dist(anchors, positives) - dist(anchors, negatives) + margin, 0)
    return _reduce(loss, reduction)


def hinge_loss(inputs: mx.array, targets: mx.array,
               reduction: Reduction = "none") -> mx.array:
    return _reduce(mx.maximum(1 - inputs * targets, 0), reduction)


def huber_loss(inputs: mx.array, targets: mx.array, delta: float = 1.0,
               reduction: Reduction = "none") -> mx.array:
    err = mx.abs(inputs - targets)
    quadratic = mx.minimum(err, delta)
    return _reduce(0.5 * quadratic**2 + delta * (err - quadratic), reduction)


def log_cosh_loss(inputs: mx.array, targets: mx.array,
                  reduction: Reduction = "none") -> mx.array:
    err = inputs - targets
    return _reduce(mx.logaddexp(err, -err) - math.log(2), reduction)


def cosine_similarity_loss(x1: mx.array, x2: mx.array, axis: int = 1, eps: float = 1e-8,
                           reduction: Reduction = "none") -> mx.array:
    """The cosine similarity of `x1` and `x2` along `axis` (MLX returns the similarity
    itself, not 1 - similarity)."""
    # (the norms by linalg.norm, as MLX takes them: sqrt(sum(square)) is not the norm of
    # a complex vector, whose squares are not |x|^2)
    n1 = mx.linalg.norm(x1, axis=axis)
    n2 = mx.linalg.norm(x2, axis=axis)
    loss = mx.sum(x1 * x2, axis=axis) / mx.maximum(n1 * n2, eps)
    return _reduce(loss, reduction)


def margin_ranking_loss(inputs1: mx.array, inputs2: mx.array, targets: mx.array,
                        margin: float = 0.0, reduction: Reduction = "none") -> mx.array:
    if not inputs1.shape == inputs2.shape == targets.shape:
        raise ValueError(
            "The shapes of the arguments do not match. The provided shapes are "
            f"inputs1.shape={inputs1.shape}, inputs2.shape={inputs2.shape}, and "
            f"targets.shape={targets.shape}.")
    return _reduce(mx.maximum(0, -targets * (inputs1 - inputs2) + margin), reduction)


# (MLX lists these imports too)
__dir__ = listing(globals(), ("Literal", "Reduction", "get_args", "math", "mx"))
