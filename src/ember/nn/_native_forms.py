"""PyTorch's `torch.native_*` layer functions and the other ATen entry points that return
what the kernel keeps besides the output (`native_layer_norm`'s mean and 1/std,
`embedding_bag`'s bag bookkeeping), plus `conv_tbc`. Each is a composite of the
`nn.functional` form it stands for, so values and gradients are that form's; the extra
outputs are worked out as PyTorch's CPU kernel lays them out."""

from __future__ import annotations

import numpy as np

import ember as E

from .._tensor import Tensor
from ..ops._arg_parser_text import need_tensor
from ..ops._common import type_name
from ..ops.bernoulli import bernoulli_noise
from ..ops.registry import rename_node
from . import functional as F
from ._functional.embedding_bag import _bags, _max_winners
from ._functional.spatial import conv_tbc

__all__ = ["native_layer_norm", "native_batch_norm", "native_group_norm", "native_dropout",
           "native_norm", "embedding_bag", "conv_tbc"]


def _rstd(var: Tensor, eps: float) -> Tensor:
    return (var + eps).rsqrt()


_LOW = (E.float16, E.bfloat16)


def _stat_dtype(input: Tensor, *params) -> E.dtype:
    """The statistics' dtype, as PyTorch's CPU norms choose it: float32 for a float16 /
    bfloat16 input with float32 parameters ("mixed type"), else the input's dtype."""
    if input.dtype in _LOW and any(p is not None and p.dtype == E.float32 for p in params):
        return E.float32
    return input.dtype


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(layer_norm(input), mean, 1/sqrt(var + eps)), the statistics over the normalized
    dims kept as size-1 dims (they carry no gradient, as PyTorch's)."""
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(tuple(normalized_shape)) if not isinstance(normalized_shape, int) else 1
    dims = tuple(range(input.dim() - k, input.dim()))
    with E.no_grad():
        x = input.float() if input.dtype in _LOW else input
        mean = x.mean(dims, keepdim=True)
        rstd = _rstd(x.var(dims, keepdim=True, correction=0), eps)
    acc = _stat_dtype(input, weight, bias)
    return out, mean.to(acc), rstd.to(acc)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None,
                      training: bool, momentum: float,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(batch_norm(input), batch mean, 1/sqrt(biased var + eps)) when training (the
    running statistics updated in place as batch_norm updates them); in eval mode the
    two statistics are empty tensors, as PyTorch's CPU kernel returns them."""
    stats = None
    acc = _stat_dtype(input, weight, bias, running_mean, running_var)
    if training:
        dims = (0, *range(2, input.dim()))
        with E.no_grad():
            x = input.float() if input.dtype in _LOW else input
            stats = x.mean(dims).to(acc), _rstd(x.var(dims, correction=0), eps).to(acc)
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if stats is None:
        stats = E.empty(0, dtype=acc), E.empty(0, dtype=acc)
    return out, *stats


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(group_norm(input), mean, 1/sqrt(var + eps)) with the statistics shaped (N, group);
    all three differentiable, as in PyTorch (one node, NativeGroupNormBackward0)."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got "
                           f"{input.numel()} elements")
    out = F.group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, -1)
    acc = _stat_dtype(input, weight, bias)
    if input.dtype in _LOW:
        x = x.float()
    mean = x.mean(-1).to(acc)
    rstd = _rstd(x.var(-1, correction=0), eps).to(acc)
    for t in (mean, rstd):
        if t.grad_fn is not None:
            rename_node(t.grad_fn, "NativeGroupNormBackward0")
    return out, mean, rstd


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """(input * mask / (1 - p), mask): the mask a bool tensor, drawn as dropout draws it
    (the same generator stream); train=False (None counts as True) keeps everything."""
    if train is None or train:
        if not input.dtype.is_floating_point:
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{type_name(input.dtype)}")
        keep = bernoulli_noise(input, 1 - p)
        scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        out = input * keep * scale
        mask = keep.bool()
    else:
        out, mask = input.clone(), E.ones(input.shape, dtype=E.bool)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "NativeDropoutBackward0")
    return out, mask


def native_norm(input: Tensor, p=2, dim=None, keepdim: bool = False,
                dtype=None) -> Tensor:
    """The p-norm of a sparse tensor's stored values (a full reduction only); PyTorch has
    no dense kernel for it."""
    if not getattr(input, "is_sparse", False):
        raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the "
                                  "'CPU' backend. This could be because the operator doesn't "
                                  "exist for this backend, or was omitted during the "
                                  "selective/custom build process (if using custom build).")
    if dim is not None:
        dims = sorted({d % input.dim() for d in ([dim] if isinstance(dim, int) else dim)})
        if dims and dims != list(range(input.dim())):
            raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' "
                               "must either be empty or contain all dimensions of the input")
    values = input._values()
    if dtype is not None:
        values = values.to(dtype)
    return E.linalg.vector_norm(values, p)


_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """ATen's embedding_bag: (output, offset2bag, bag_size, max_indices), `mode` 0/1/2 for
    sum/mean/max. The bookkeeping is PyTorch's CPU kernel's: offset2bag (each position's
    bag) is left empty on its fast sum path; bag_size counts each bag's non-padding
    positions up to the next bag's start (the last bag: to the end of `indices`); in max
    mode max_indices holds each bag's winning row per column, in mean mode it repeats
    bag_size, and in sum mode both are zeros."""
    need_tensor(offsets, "embedding_bag", "offsets", 3)
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, _MODES[mode],
                          sparse, per_sample_weights, include_last_offset, padding_idx)
    ids = indices.detach().numpy().astype(np.int64).reshape(-1)
    offs = offsets.detach().numpy().astype(np.int64)
    starts, _ = _bags(ids, offs, include_last_offset)
    n_bags, idx_dtype = starts.shape[0], indices.dtype
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    bag = np.searchsorted(starts, np.arange(ids.shape[0]), side="right") - 1
    fast = (mode == 0 and padding_idx is None and weight.stride(-1) == 1
            and weight.dtype in (E.float32, E.float16, E.bfloat16))
    offset2bag = E.from_numpy(bag if not fast else bag[:0]).to(idx_dtype)
    keep = ids != padding_idx if padding_idx is not None else np.ones(ids.shape, bool)
    count = np.bincount(bag[keep & (bag >= 0)], minlength=n_bags)[:n_bags]
    zeros = E.zeros(n_bags, dtype=idx_dtype)
    if mode == 0:
        return out, offset2bag, zeros, zeros.clone()
    bag_size = E.from_numpy(count).to(idx_dtype)
    if mode == 1:
        return out, offset2bag, bag_size, bag_size.clone()
    pos = np.flatnonzero(keep & (bag >= 0))
    values = weight.detach().numpy()[ids[pos]]
    win = _max_winners(values, bag[pos], count) if pos.size else np.zeros(
        (n_bags, weight.shape[1]), np.int64)
    rows = np.where(count[:, None] > 0, ids[pos][win] if pos.size else 0, 0)
    return out, offset2bag, bag_size, E.from_numpy(rows).to(idx_dtype)
