"""The layer functions PyTorch also exposes at the top level (`torch.embedding`,
`torch.bilinear`, `torch.layer_norm`, ...), under their ATen signatures: these differ from
`nn.functional`'s in argument order (`embedding(weight, indices)`), in required arguments
(`dropout(input, p, train)`) and in trailing cuDNN flags, which the CPU ignores."""

from __future__ import annotations

import functools

from .._tensor import Tensor
from ..ops.nn_ops import embedding
from . import functional as F
from ._functional.embedding import embedding_renorm_
from ._functional.layers import _dropout_impl
from ._functional.loss import _triplet_margin_loss
from ._native_forms import *  # noqa: F403
from ._native_forms import __all__ as _native
from ._rnn_forms import *  # noqa: F403
from ._rnn_forms import __all__ as _rnn_cells
from .utils.weight_norm import _weight_norm, norm_except_dim

__all__ = ["embedding", "embedding_renorm_", "bilinear", "dropout", "layer_norm", "group_norm",
           "rms_norm", "cosine_similarity", "pairwise_distance", "_weight_norm", "norm_except_dim",
           "adaptive_max_pool1d"]

bilinear = F.bilinear
cosine_similarity = F.cosine_similarity
pairwise_distance = F.pairwise_distance
rms_norm = F.rms_norm


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`nn.functional.dropout` with `train` required."""
    return F.dropout(input, p, train)


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple[Tensor, Tensor]:
    """`nn.functional.adaptive_max_pool1d` returning the indices too, always (ATen's op has
    no `return_indices`)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    """`nn.functional.layer_norm` (the cuDNN flag has no effect on the CPU)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    """`nn.functional.group_norm` (the cuDNN flag has no effect on the CPU)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


# --- losses: `reduction` is ATen's enum (0 none, 1 mean, 2 sum; any other int: none) -----
# NOTE: left out, it is none, not the schema's `Mean`: torch 2.13's Python parser does not
# read that default (`torch.kl_div(a, b)` returns the unreduced tensor)

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _enum_reduction(position: int):
    """Decorate a loss taking `reduction` (its `position`-th argument, from 1) as ATen's
    int: the function receives "none" / "mean" / "sum"; anything but an int is refused as
    torch's argument parser words it."""
    def decorate(fn):
        @functools.wraps(fn)
        def loss(*args, **kwargs):
            if "reduction" in kwargs:
                value, where = kwargs["reduction"], ""
            elif len(args) >= position:
                value, where = args[position - 1], f" (position {position})"
            else:
                return fn(*args, **kwargs)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{fn.__name__}(): argument 'reduction'{where} must be int, "
                                f"not {type(value).__name__}")
            how = _REDUCTION.get(value, "none")
            if "reduction" in kwargs:
                return fn(*args, **{**kwargs, "reduction": how})
            return fn(*args[:position - 1], how, *args[position:], **kwargs)
        return loss
    return decorate


@_enum_reduction(3)
def kl_div(input: Tensor, target: Tensor, reduction: str = "none", *,
           log_target: bool = False) -> Tensor:
    """`nn.functional.kl_div` reduced by ATen's enum (its "mean" over every element, silently)."""
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    return loss if reduction == "none" else getattr(loss, reduction)()


@_enum_reduction(5)
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: str = "none") -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=reduction,
                                              pos_weight=pos_weight)


@_enum_reduction(5)
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "none") -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=reduction)


@_enum_reduction(5)
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "none") -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=reduction)


@_enum_reduction(4)
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: str = "none") -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=reduction)


@_enum_reduction(8)
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: str = "none") -> Tensor:
    return _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


@_enum_reduction(6)
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: str) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=reduction)


@_enum_reduction(6)
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "none", zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                      zero_infinity)


# --- normalisation and dropout: every argument required, the cuDNN flag ignored -----------

def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """`nn.functional.batch_norm` with ATen's argument order."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """`nn.functional.instance_norm` with ATen's argument order."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def _dropouts(fn):
    def out_of_place(input: Tensor, p: float, train: bool) -> Tensor:
        return fn(input, _probability(p), train)

    def in_place(input: Tensor, p: float, train: bool) -> Tensor:
        return fn(input, _probability(p), train, inplace=True)

    out_of_place.__doc__ = f"`nn.functional.{fn.__name__}` with `train` required."
    in_place.__doc__ = f"`nn.functional.{fn.__name__}` in place, `train` required."
    return out_of_place, in_place


def _probability(p: float) -> float:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return p


_, dropout_ = _dropouts(F.dropout)
alpha_dropout, alpha_dropout_ = _dropouts(F.alpha_dropout)
feature_alpha_dropout, feature_alpha_dropout_ = _dropouts(F.feature_alpha_dropout)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool = False) -> Tensor:
    # (whole channels, whatever the rank: ATen's form has no dropout2d rank warning)
    return _dropout_impl(input, p, training, inplace, True, False)


_feature_dropout.__name__ = "dropout2d"
feature_dropout, feature_dropout_ = _dropouts(_feature_dropout)


# --- layers whose ATen form is the functional one ---------------------------------------

prelu = F.prelu
hardshrink = F.hardshrink
rrelu_ = F.rrelu_


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """`nn.functional.rrelu` drawing from `generator`."""
    return F.rrelu(input, lower, upper, training, generator=generator)
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
channel_shuffle = F.channel_shuffle
native_channel_shuffle = F.native_channel_shuffle


def constant_pad_nd(input: Tensor, pad, value: float = 0) -> Tensor:
    """`nn.functional.pad` in constant mode, with ATen's checks of `pad`."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)}while the input "
                           f"has {input.dim()}dimensions.")
    return F.pad(input, pad, "constant", value)


__all__ += ["kl_div", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
            "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss",
            "poisson_nll_loss", "ctc_loss", "batch_norm", "instance_norm", "dropout_",
            "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
            "feature_dropout", "feature_dropout_", "prelu", "hardshrink", "rrelu", "rrelu_",
            "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
            "constant_pad_nd"]

# the Tensor methods PyTorch also gives these layers
Tensor.prelu = F.prelu
Tensor.hardshrink = F.hardshrink

# the native_* forms (with the kernel's saved statistics), ATen's embedding_bag, conv_tbc
__all__ += _native
__all__ += _rnn_cells
