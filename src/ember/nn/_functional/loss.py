"""Loss functions of `ember.nn.functional`.

`nll_loss` is a primitive (ember.ops.nn_ops); `cross_entropy` is log_softmax (a
primitive) followed by it, or PyTorch's probability-target and label-smoothing
formulas. The rest are short compositions that follow ATen's formulas, so values
and gradients match PyTorch's.
"""

from __future__ import annotations

import warnings

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ..._view import broadcast_shapes
from ...amp.autocast_mode import cast_for
from ...ops import ctc_loss as ctc_ops
from ...ops import loss_ops, nn_ops
from ...ops._arg_parser_text import need_tensors, touch_then_check
from ...ops._common import has_values, type_name
from ...ops.copy import relaid
from ...ops.registry import rename_node
from .layers import pairwise_distance

__all__ = [
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "soft_margin_loss",
    "hinge_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss",
    "multilabel_soft_margin_loss", "triplet_margin_with_distance_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is None and reduce is None:
        return _reduction_name(reduction)
    return _legacy_string(size_average, reduce)


def _reduction_name(reduction: str) -> str:
    """`reduction` as PyTorch's losses read it into their enum: 'elementwise_mean' is the
    old name of 'mean' (with PyTorch's deprecation warning), anything else unknown refused."""
    if reduction == "elementwise_mean":
        # (from one line of ember's own, as PyTorch's: once per process by default)
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use "
                      "reduction='mean' instead.", stacklevel=1)
        return "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _legacy_string(size_average, reduce) -> str:
    """The reduction that the deprecated size_average/reduce flags stand for, with PyTorch's
    deprecation warning (losses' constructors and functions alike)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        reduction = "mean"
    else:
        reduction = "sum" if reduce else "none"
    # NOTE: PyTorch warns from one line of its own, so under the default filter the warning
    # shows once per process however many losses use the flags; so does ember's
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=1)
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _reduce_like(loss: Tensor, reduction: str, like: Tensor) -> Tensor:
    """`_reduce`, an unreduced composite's loss laid out as `empty_like(like)`: the tensor
    PyTorch's one kernel writes the loss into."""
    return _reduce(loss, reduction) if reduction != "none" else relaid(loss, (like,), "like")


def non_differentiable(fname: str, **args: Tensor | None) -> None:
    """PyTorch's refusal of an argument its kernel has no derivative for (class weights,
    pos_weight) when that argument requires grad and grad mode is on."""
    if not E.is_grad_enabled():
        return
    for name, t in args.items():
        if t is not None and t.requires_grad:
            raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                               f"argument '{name}'. This input cannot have requires_grad True.")


def _touch_sizes(fname: str, input, target) -> None:
    """torch's Python compares `target.size()` with `input.size()` before its parser sees
    them: a non-tensor fails there, in Python's words."""
    if target.__class__ is not Tensor or input.__class__ is not Tensor:
        touch_then_check(target, "size", fname, "target", 2)
        touch_then_check(input, "size", fname, "input", 1)


def _check_target_size(input: Tensor, target: Tensor, fname: str) -> None:
    _touch_sizes(fname, input, target)
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.",
                      stacklevel=user_stacklevel())


def _check_weight_dtype(input: Tensor, weight: Tensor | None) -> None:
    """Class weights must share the input's dtype: PyTorch's kernels refuse to mix them."""
    if weight is not None and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._dtype)} but found "
                           f"{type_name(weight._dtype)}")


def _check_weight_size(input: Tensor, weight: Tensor) -> None:
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _in_dtype_of(loss: Tensor, input: Tensor) -> Tensor:
    """`loss` in the input's dtype: PyTorch multiplies the weight in place into a loss of
    the input's dtype, so a weight of another float dtype does not change the result's."""
    return loss if loss._dtype is input._dtype else loss.to(input._dtype)


# --- classification -------------------------------------------------------------------


def _check_nll(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int) -> Tensor:
    shape, tshape = input._shape, target._shape
    nd = len(shape)
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and shape[0] != (tshape[0] if tshape else 1):
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target "
                         f"batch_size ({tshape[0] if tshape else 1}).")
    tdtype = target._dtype
    if nd <= 2 and len(tshape) > 1:  # (PyTorch's nll_loss checks the ranks before the dtype)
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if nd > 2:  # (the shapes first: PyTorch checks them before its kernel sees the dtype)
        _check_nll_nd_target(shape, tshape, tdtype)
    if tdtype is not E.int64 and tdtype is not E.uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{type_name(tdtype)}")
    n_classes = shape[0] if nd == 1 else shape[1]
    if nd == 1 and tshape:
        # (PyTorch reads a 1-element 1-d target of unbatched input as its 0-d class index)
        if tshape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{tshape[0]}")
        target = target.reshape(())
    if nd == 2 and len(tshape) != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if weight is not None and nd <= 2 and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    if weight is not None and nd > 2 and weight.numel() != n_classes:
        # (PyTorch's spatial kernel counts the weights only, whatever their shape)
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    return target if tdtype is E.int64 else target.to(E.int64)


def _check_nll_nd_target(shape: tuple, tshape: tuple, tdtype) -> None:
    """The (N, C, d1, ...) target checks in PyTorch's order: 4-d input goes to its 2-d kernel
    (target rank, Long-or-Byte dtype, sizes), every other rank is checked for its target size
    first; a Byte target, fine for 1-d and 2-d input, is refused last."""
    expected = (shape[0],) + tuple(shape[2:])
    if len(shape) == 4:
        if len(tshape) != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {len(tshape)}")
        if tdtype is not E.int64 and tdtype is not E.uint8:
            raise RuntimeError("expected target dtype to be Long or Byte, but got "
                               f"{type_name(tdtype)}")
        if tuple(tshape) != expected:
            raise RuntimeError(f"size mismatch (got input: {list(shape)} , target: "
                               f"{list(tshape)}")
    elif tuple(tshape) != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(tshape)}")
    if tdtype is E.uint8:
        raise RuntimeError("expected scalar type Long but found Byte")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] * weight[target[n]], averaged by the total weight for 'mean'."""
    if input.__class__ is not Tensor or target.__class__ is not Tensor or \
            not (weight is None or weight.__class__ is Tensor):
        need_tensors("nll_loss_nd", ("input", 1, input), ("target", 2, target),
                      ("weight", 3, weight), optional=("weight",))
    input, target, weight = cast_for("fp32", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not input.dtype.is_floating_point:
        kname = "nll_loss_out_frame" if input.dim() <= 2 else "nll_loss2d_forward_out_frame"
        raise NotImplementedError(f"\"{kname}\" not implemented for '{type_name(input.dtype)}'")
    target = _check_nll(input, target, weight, ignore_index)
    _check_weight_dtype(input, weight)
    non_differentiable("nll_loss_forward" if input.dim() <= 2 else "nll_loss2d_forward",
                       weight=weight)
    if weight is not None and weight.dim() != 1:  # ((1, C) or (C, 1) on spatial input)
        weight = weight.reshape(-1)
    return nn_ops.nll_loss_prim(input, target, weight, reduction, ignore_index)


def _class_view(weight: Tensor, input: Tensor) -> Tensor:
    if input.dim() == 1:
        return weight
    return weight.reshape((1, -1) + (1,) * (input.dim() - 2))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim followed by nll_loss, or the soft-target formula when
    `target` holds class probabilities (same shape as `input`, floating)."""
    if input.__class__ is not Tensor or target.__class__ is not Tensor or \
            not (weight is None or weight.__class__ is Tensor):
        need_tensors("cross_entropy_loss", ("input", 1, input), ("target", 2, target),
                      ("weight", 3, weight), optional=("weight",))
    input, target, weight = cast_for("fp32", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if label_smoothing > 1.0:  # (PyTorch ignores a negative or NaN one: no smoothing)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    class_dim = 0 if input.dim() == 1 else 1
    if target.shape == input.shape:
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {type_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim)
    logp = input.log_softmax(class_dim)
    if not label_smoothing > 0.0:
        return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    n_classes = input.shape[class_dim]
    if weight is not None and weight.dim() != 1:  # (spatial input: checked by nll_loss)
        weight = weight.reshape(-1)
    ignore = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, input)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            keep = target[ignore.logical_not()].reshape(-1).to(E.int64)
            smooth = smooth.sum() / weight.gather(0, keep).sum()
        else:
            smooth = smooth.sum() / ignore.logical_not().sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    kept, spread = (1 - label_smoothing) * nll, smooth * (label_smoothing / n_classes)
    for part in (kept, spread):  # (PyTorch's C++ `tensor * double`: the Scalar overload's)
        if part.grad_fn is not None:
            rename_node(part.grad_fn, "MulBackward1")
    return kept + spread


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim):
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = input.log_softmax(class_dim)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, input)
    if reduction == "mean":
        if input.numel() == 0:
            return -prod.sum() * float("nan")
        out = -prod.sum() / (input.numel() // n_classes)
        if out.grad_fn is not None:  # PyTorch divides by a C++ integer: the Scalar overload
            rename_node(out.grad_fn, "DivBackward1")
        return out
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum(class_dim)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as PyTorch does."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _touch_sizes("binary_cross_entropy", input, target)
    if not (weight is None or weight.__class__ is Tensor):
        touch_then_check(weight, "size", "binary_cross_entropy", "weight", 3)
    input, target, weight = cast_for("fp32", input, target, weight)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {type_name(target.dtype)} but expected "
                           f"{type_name(input.dtype)}")
    if weight is not None:
        weight = weight.expand(E.broadcast_shapes(target.shape, weight.shape))
    non_differentiable("binary_cross_entropy", weight=weight)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"binary_cross_entropy\" not implemented for '{type_name(input.dtype)}'")
    nn_ops.expect_device(target, input, weight)  # (its kernel's check, before the values)
    if input.device.type == "cpu" and input.numel() and has_values(input):
        a = input.detach().numpy()
        if not ((a >= 0) & (a <= 1)).all():  # (NaN fails too, as in PyTorch)
            raise RuntimeError("all elements of input should be between 0 and 1")
        y = target.detach().numpy()
        if not ((y >= 0) & (y <= 1)).all():
            raise RuntimeError("all elements of target should be between 0 and 1")
    if weight is None:
        return loss_ops.pointwise_loss(loss_ops.bce_p, input, target, reduction)
    log_x = input.log().clamp_min(-100)
    log_1mx = (1 - input).log().clamp_min(-100)
    loss = -(target * log_x + (1 - target) * log_1mx) * weight
    return _named(_reduce_like(_in_dtype_of(loss, input), reduction, input),
                  "BinaryCrossEntropyBackward0")


def _named(out: Tensor, name: str) -> Tensor:
    """`out` with its last node renamed to the fused kernel's node PyTorch records."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, name)
    return out


def _in_target_dtype(loss: Tensor, target: Tensor) -> Tensor:
    """PyTorch's BCE-with-logits computes into a tensor of the target's dtype, so the loss
    has the target's floating dtype even when the input's is wider."""
    return loss if loss.dtype is target.dtype else loss.to(target.dtype)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """(1 - t) x - w_pos(t) * logsigmoid(x): BCE on logits without overflow."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _touch_sizes("binary_cross_entropy_with_logits", input, target)
    if not (weight is None or weight.__class__ is Tensor) or \
            not (pos_weight is None or pos_weight.__class__ is Tensor):
        need_tensors("binary_cross_entropy_with_logits", ("weight", 3, weight),
                      ("pos_weight", 4, pos_weight), optional=("weight", "pos_weight"))
    input, target, weight, pos_weight = cast_for("fp32", input, target, weight, pos_weight)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    if not input.dtype.is_floating_point:  # PyTorch's first kernel is log_sigmoid's
        raise NotImplementedError(
            f"\"log_sigmoid_cpu\" not implemented for '{type_name(input.dtype)}'")
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type {type_name(input.dtype)} can't be cast to the desired "
                           f"output type {type_name(target.dtype)}")
    non_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    if weight is None and pos_weight is None:
        loss = loss_ops.pointwise_loss(loss_ops.bce_logits_p, input, target, reduction)
        return _in_target_dtype(loss, target)
    from .activation import logsigmoid

    log_sig = logsigmoid(input)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input - log_sig
    if weight is not None:
        loss = loss * weight
    return _named(_reduce_like(_in_target_dtype(loss, target), reduction, target),
                  "BinaryCrossEntropyWithLogitsBackward0")


# --- regression -------------------------------------------------------------------------


def _broadcasts(a, b) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def _promoted_pair(input: Tensor, target: Tensor, kname: str) -> tuple[Tensor, Tensor]:
    """input and target in their promoted dtype, which must be floating (PyTorch's fused
    pointwise losses have no integer, bool or complex kernels)."""
    d = E.result_type(input, target)
    if not d.is_floating_point and _broadcasts(input.shape, target.shape):
        # (non-broadcastable shapes are reported first, by the loss itself)
        raise NotImplementedError(f"\"{kname}\" not implemented for '{type_name(d)}'")
    return (input if input.dtype is d else input.to(d)), (target if target.dtype is d else
                                                         target.to(d))


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """(input - target)^2, reduced."""
    input, target, weight = cast_for("fp32", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_target_size(input, target, "mse_loss")
    broadcast_shapes(input._shape, target._shape)  # (sizes before dtypes, as PyTorch)
    input, target = _promoted_pair(input, target, "mse_cpu")
    if weight is None:
        return loss_ops.pointwise_loss(loss_ops.mse_loss_p, input, target, reduction)
    _check_weight_size(input, weight)
    d = input - target
    return _weighted_reduce(d * d * weight, weight, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """|input - target|, reduced."""
    input, target, weight = cast_for("fp32", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_target_size(input, target, "l1_loss")
    broadcast_shapes(input._shape, target._shape)  # (sizes before dtypes, as PyTorch)
    loss = (input - target).abs()
    if weight is None:
        return _reduce(loss, reduction)
    _check_weight_size(input, weight)
    return _weighted_reduce(loss * weight, weight, reduction)


def _weighted_reduce(loss: Tensor, weight: Tensor, reduction: str) -> Tensor:
    """mse / l1 with a weight: 'mean' is the weighted mean, sum(w * loss) / sum(w)."""
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
    input, target = cast_for("fp32", input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_target_size(input, target, "smooth_l1_loss")
    broadcast_shapes(input._shape, target._shape)  # (sizes before dtypes, as PyTorch)
    input, target = _promoted_pair(input, target, "smooth_l1_cpu")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return _reduce((input - target).abs(), reduction)
    return loss_ops.pointwise_loss(loss_ops.smooth_l1_loss_p, input, target, reduction,
                                   beta=beta)


def _huber_into_input_dtype(input: Tensor, target: Tensor, reduction: str,
                            delta: float) -> Tensor:
    """Huber's loss as PyTorch writes it when the dtypes differ: into a tensor like `input`,
    each element computed in the promoted dtype and rounded to input's (an error where
    that cast would lose the kind), then reduced in input's dtype."""
    common = E.result_type(input, target)
    if not E.can_cast(common, input._dtype):
        raise RuntimeError(f"result type {type_name(common)} can't be cast to the desired "
                           f"output type {type_name(input._dtype)}")
    loss = loss_ops.pointwise_loss(loss_ops.huber_loss_p, input.to(common), target.to(common),
                                   "none", delta=delta)
    out = _reduce(loss.to(input._dtype), reduction)
    if out.grad_fn is not None:
        # TODO(timeseries_forecast): PyTorch's HuberLossBackward0 refuses mixed dtypes
        # ("Found dtype Double but expected Float"); this node differentiates them
        rename_node(out.grad_fn, "HuberLossBackward0")
    return out


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    input, target, weight = cast_for("fp32", input, target, weight)
    reduction = _reduction_name(reduction)
    _check_target_size(input, target, "huber_loss")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    common = E.result_type(input, target)
    # (PyTorch's huber kernel exists for floats only; a result its input cannot hold is
    # refused first, below)
    if not common.is_floating_point and E.can_cast(common, input._dtype):
        raise NotImplementedError(f"\"huber_cpu\" not implemented for '{type_name(common)}'")
    if weight is None:
        if target._dtype is not input._dtype:
            return _huber_into_input_dtype(input, target, reduction, delta)
        return loss_ops.pointwise_loss(loss_ops.huber_loss_p, input, target, reduction,
                                       delta=delta)
    _check_weight_size(input, weight)
    # (as PyTorch: the unweighted kernel's loss, times the weight)
    loss = huber_loss(input, target, "none", delta)
    return _reduce(loss * weight, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise: target (log target - input), then reduced."""
    input, target = cast_for("fp32", input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=user_stacklevel())
    if reduction != "batchmean":
        reduction = _reduction_name(reduction)
    if input.__class__ is not Tensor or target.__class__ is not Tensor:
        need_tensors("kl_div", ("input", 1, input), ("target", 2, target))
    _kl_div_dtypes(input, target)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogx(target) - target * input
    if reduction == "batchmean":
        s = loss.sum()
        return s / input.shape[0] if input.dim() != 0 else s
    return _reduce(loss, reduction)


def _kl_div_dtypes(input, target) -> None:
    """PyTorch's kernel refuses complex operands, then integer and bool ones (after the
    Python-level reduction checks)."""
    kinds = [t._dtype for t in (input, target) if isinstance(t, Tensor)]
    if any(d.is_complex for d in kinds):
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if any(not d.is_floating_point for d in kinds):
        raise RuntimeError("kl_div: Integral inputs not supported.")


def _xlogx(t: Tensor) -> Tensor:
    """t log t with 0 log 0 = 0 (and a finite gradient there)."""
    if hasattr(E, "xlogy"):
        return E.xlogy(t, t)
    pos = t > 0
    return E.where(pos, t * E.where(pos, t, 1.0).log(), 0.0)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    if size_average is None and reduce is None and reduction not in _REDUCTIONS:
        # (PyTorch checks the name itself here: no 'elementwise_mean')
        raise ValueError(f"{reduction} is not a valid value for reduction")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.__class__ is not Tensor or target.__class__ is not Tensor:
        need_tensors("poisson_nll_loss", ("input", 1, input), ("target", 2, target))
    input, target = cast_for("fp32", input, target)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * 3.141592653589793 * target).log()
        # (added in place in PyTorch: the loss keeps its layout)
        loss = relaid(loss + stirling.masked_fill(target <= 1, 0), (loss,), "like")
    return _reduce(loss, reduction)


def _homoscedastic_var(input: Tensor, var: Tensor) -> Tensor:
    """`var` shaped to broadcast against `input`: as is when the shapes match, with a trailing
    unit dim when it lacks input's last dim, as is when one dim of size 1 tells them apart;
    any other shape is an error (PyTorch's three cases and words)."""
    if var.shape == input.shape:
        return var
    if var.shape == input.shape[:-1]:
        return var.unsqueeze(-1)
    if var.dim() == input.dim() and \
            sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """Negative log likelihood of `target` under N(input, var), without or with its constant."""
    import math

    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * E.ones_like(input)
    elif E.any(var < 0):
        raise ValueError("var has negative entry/entries")
    if input.__class__ is not Tensor:  # (torch's Python compares var.size() with input.size())
        touch_then_check(input, "size", "gaussian_nll_loss")
    var = _homoscedastic_var(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # NOTE: PyTorch clamps a copy of var in place with autograd off, so the gradient reaches
    # var through the clamp as if it were the identity (even where var < eps)
    var = var.clone()
    with E.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.__class__ is not Tensor or target.__class__ is not Tensor:
        need_tensors("soft_margin_loss", ("input", 1, input), ("target", 2, target))
    input, target = cast_for("fp32", input, target)
    shape = broadcast_shapes(input._shape, target._shape)
    if shape != input._shape:  # PyTorch multiplies the target into an input-shaped result
        raise RuntimeError(f"output with shape {list(input._shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    non_differentiable("soft_margin_loss", target=target)
    return loss_ops.pointwise_loss(loss_ops.soft_margin_p, input,
                                   _into_input_dtype(input, target), reduction)


def _into_input_dtype(input: Tensor, target: Tensor) -> Tensor:
    """`target` for a loss PyTorch writes into a tensor like `input` (negated input, then
    multiplied in place): a bool input cannot be negated, an integer one cannot hold the
    float result, and a float one keeps its dtype whatever the target's."""
    if input._dtype is E.bool:
        E.neg(input)  # (raises PyTorch's message)
    if not input._dtype.is_floating_point:
        common = E.result_type(input, target)
        if not common.is_floating_point:
            common = E.get_default_dtype()
        raise RuntimeError(f"result type {type_name(common)} can't be cast to the desired "
                           f"output type {type_name(input._dtype)}")
    # (a target exactly representable in input's dtype, as +-1 targets are, gives the same
    # products as PyTorch's promoted in-place multiply)
    return target if target._dtype is input._dtype else target.to(input._dtype)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    from .activation import logsigmoid

    if size_average is not None or reduce is not None:
        reduction = _legacy_string(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    # (the class dim is counted from the input's rank: a target with more dims broadcasts
    # the loss up, and the sum stays on that dim, as PyTorch's does)
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    if reduction not in _REDUCTIONS:  # (checked after the loss, as PyTorch does)
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


# --- embeddings and ranking -----------------------------------------------------------


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for target 1; max(0, cos(x1, x2) - margin) for target -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.__class__ is not Tensor or input2.__class__ is not Tensor or \
            target.__class__ is not Tensor:
        need_tensors("cosine_embedding_loss", ("input1", 1, input1), ("input2", 2, input2),
                      ("target", 3, target))
    input1, input2, target = cast_for("fp32", input1, input2, target)
    if target.dim() not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = target.dim() + 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{want - 1}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.dim() - 1
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zeros = E.zeros_like(cos)
    pos = E.where(target == 1, 1 - cos, zeros)
    neg = E.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (x1 - x2) + margin)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    # (PyTorch subtracts first, and adds the margin as a float: integer inputs give floats)
    diff = input1 - input2
    unclamped = -target * diff + float(margin)
    # (PyTorch clamps in place: the sum's layout)
    return _reduce(relaid(unclamped.clamp_min(0), (unclamped,), "like"), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.__class__ is not Tensor or target.__class__ is not Tensor:
        need_tensors("hinge_embedding_loss", ("input", 1, input), ("target", 2, target))
    input, target = cast_for("fp32", input, target)
    zeros = E.zeros_like(input)
    # PyTorch fills a tensor like the input with the margin and subtracts the input from
    # it: an integer input keeps its dtype (the margin truncated), a bool one is refused
    gap = E.full_like(input, margin) - input
    margin_clamp = relaid(gap.clamp_min(0), (gap,), "like")  # (clamped in place, as there)
    out_margin = E.where(target != 1, margin_clamp, zeros)
    out_self = E.where(target != -1, input, zeros)
    return _reduce(out_margin + out_self, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d the p-norm pairwise distance."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:  # (PyTorch's functional form checks; `torch.triplet_margin_loss` does not)
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if anchor.__class__ is not Tensor or positive.__class__ is not Tensor or \
            negative.__class__ is not Tensor:
        need_tensors("triplet_margin_loss", ("anchor", 1, anchor), ("positive", 2, positive),
                      ("negative", 3, negative))
    return _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def _triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float,
                         p: float, eps: float, swap: bool, reduction: str) -> Tensor:
    """The ATen op under F.triplet_margin_loss: any margin."""
    anchor, positive, negative = cast_for("fp32", anchor, positive, negative)
    dims = {anchor.dim(), positive.dim(), negative.dim()}
    if len(dims) != 1:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and "
            f"negative {negative.dim()}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        d_neg = E.minimum(d_neg, d_swap)
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss (a primitive with the alpha-beta gradient)."""
    log_probs, = cast_for("fp32", log_probs)
    return ctc_ops.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                            _reduction_name(reduction), zero_infinity)



def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with any distance function (pairwise by default)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = E.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)
