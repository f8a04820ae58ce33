"""The class-index margin losses of `ember.nn.functional`: multi_margin_loss (one target
class per sample) and multilabel_margin_loss (a -1-terminated list of target classes).

PyTorch runs each as one kernel with its own shape, dtype and range checks and one graph
node (MultiMarginLossBackward0, MultilabelMarginLossBackward0). ember composes them from
gather / where / sum, runs the same checks in the same order with the same words, and
gives the composite's last node the kernel's name. The hinge is `where(z > 0, z, 0)` so
that, as in the kernel, a term at exactly z = 0 passes no gradient.
"""

from __future__ import annotations

import ember as E

from ..._tensor import Tensor
from ...amp.autocast_mode import cast_for
from ...ops._arg_parser_text import need_tensors
from ...ops._common import has_values, type_name
from ...ops.nn_ops import expect_device
from ...ops.registry import rename_node
from .layers import one_hot
from .loss import _check_weight_dtype, _legacy_reduction, non_differentiable

__all__ = ["multi_margin_loss", "multilabel_margin_loss"]

# PyTorch's CPU kernels for both exist in float32 and float64 only
_KERNEL_DTYPES = (E.float32, E.float64)


def _frames(input: Tensor) -> tuple[int, int]:
    """(samples, classes) of a margin loss's input: a non-empty vector or matrix, or a
    scalar (one sample of one class)."""
    shape = input._shape
    nd = len(shape)
    if not (nd == 2 and shape[1] != 0 or nd == 1 and shape[0] != 0 or nd == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(shape)}")
    if nd <= 1:
        return 1, (shape[0] if nd else 1)
    return shape[0], shape[1]


def _named(out: Tensor, name: str) -> Tensor:
    if out.grad_fn is not None:
        rename_node(out.grad_fn, name)
    return out


def _finish(per_frame: Tensor, n_classes: int, out_shape: tuple, reduction: str,
            name: str) -> Tensor:
    """Each frame's summed hinge terms divided by the class count, then reduced; the last
    node carries the kernel's name."""
    if reduction == "none":
        return _named(per_frame.reshape(out_shape) / n_classes, name)
    loss = per_frame / n_classes
    return _named(loss.mean() if reduction == "mean" else loss.sum(), name)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """sum_{i != y} max(0, margin - x[y] + x[i])^p * weight[y] / C for each sample."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, weight = cast_for("fp32", input, weight)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.__class__ is not Tensor or target.__class__ is not Tensor:
        need_tensors("multi_margin_loss", ("input", 1, input), ("target", 2, target))
    non_differentiable("multi_margin_loss", weight=weight)
    nframe, n_classes = _frames(input)
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"inconsistent weight size, expected {n_classes} but got "
                           f"{list(weight.shape)}")
    if input.dtype not in _KERNEL_DTYPES:
        raise NotImplementedError("\"multi_margin_loss_cpu_kernel\" not implemented for "
                                  f"'{type_name(input.dtype)}'")
    if target.dtype is not E.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_name(target.dtype)}")
    _check_weight_dtype(input, weight)
    expect_device(input, target, weight)  # (its kernel's check, before the values)
    if target.numel() and has_values(target):
        t_np = target.detach().numpy()
        if ((t_np < 0) | (t_np >= n_classes)).any():
            raise RuntimeError("target out of range")
    x = input.reshape(nframe, n_classes)
    t = target.reshape(nframe, 1)
    z = margin - x.gather(1, t) + x
    hinge = E.where(z > 0, z * z if p == 2 else z, 0.0)
    if weight is not None:
        hinge = hinge * weight[t]
    hinge = hinge.masked_fill(E.arange(n_classes).unsqueeze(0) == t, 0.0)
    out_shape = (nframe,) if target.dim() > 0 else ()
    return _finish(hinge.sum(1), n_classes, out_shape, reduction, "MultiMarginLossBackward0")


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C;
    each row of `target` lists class indices, ended by the first -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.__class__ is not Tensor or target.__class__ is not Tensor:
        need_tensors("multilabel_margin_loss", ("input", 1, input), ("target", 2, target))
    input, = cast_for("fp32", input)
    nframe, n_classes = _frames(input)
    tshape = list(target.shape)
    if input.dim() <= 1:
        ok = target.dim() <= 1 and target.numel() == n_classes
    else:
        ok = tshape == [nframe, n_classes]
    if not ok:
        raise RuntimeError(f"inconsistent target size: {tshape} for input of size: "
                           f"{list(input.shape)}")
    out_shape = (nframe,) if target.dim() > 1 else ()
    name = "MultilabelMarginLossBackward0"
    if input.numel() == 0:
        zero = input.sum(-1) * 0 if reduction == "none" else input.sum() * 0
        return _named(zero, name)
    expect_device(target, input)  # (its kernel's check, before the values)
    if has_values(target):
        t_np = target.detach().numpy()
        if t_np.min() < -1 or t_np.max() >= n_classes:
            raise RuntimeError("argument #2 'target' is out of range")
    if input.dtype not in _KERNEL_DTYPES:
        raise NotImplementedError("\"multilabel_margin_loss_forward_out_frame\" not implemented "
                                  f"for '{type_name(input.dtype)}'")
    if target.dtype is not E.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_name(target.dtype)}")
    x = input.reshape(nframe, n_classes)
    t = target.reshape(nframe, n_classes)
    listed = (t < 0).cumsum(1) == 0  # the entries before each row's first -1
    idx = t.clamp_min(0)
    is_target = (one_hot(idx, n_classes).bool() & listed.unsqueeze(2)).any(1)
    z = 1 - x.gather(1, idx).unsqueeze(2) + x.unsqueeze(1)  # (frame, listed j, class i)
    keep = listed.unsqueeze(2) & is_target.logical_not().unsqueeze(1) & (z > 0)
    per_frame = E.where(keep, z, 0.0).sum((1, 2))
    return _finish(per_frame, n_classes, out_shape, reduction, name)
