"""The layer functions PyTorch also exposes at the top level (`torch.embedding`,
`torch.bilinear`, `torch.layer_norm`, ...), under their ATen signatures: these differ from
`nn.functional`'s in argument order (`embedding(weight, indices)`), in required arguments
(`dropout(input, p, train)`) and in trailing cuDNN flags, which the CPU ignores."""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.nn_ops import embedding
from . import functional as F
from ._functional.embedding import embedding_renorm_

__all__ = ["embedding", "embedding_renorm_", "bilinear", "dropout", "layer_norm", "group_norm",
           "rms_norm", "cosine_similarity", "pairwise_distance"]

bilinear = F.bilinear
cosine_similarity = F.cosine_similarity
pairwise_distance = F.pairwise_distance
rms_norm = F.rms_norm


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`nn.functional.dropout` with `train` required."""
    return F.dropout(input, p, train)


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
