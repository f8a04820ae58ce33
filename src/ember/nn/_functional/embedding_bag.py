"""`embedding_bag`: sums, means or maxes of bags of embedding rows, as PyTorch's CPU kernel
computes them, with its checks and its node name (EmbeddingBagBackward0).

The bags are laid out once in NumPy (which position belongs to which bag, which positions
are padding), and the values come from four ops whatever the number of bags: the rows'
lookup (`embedding`), then one `index_add` of every row into its bag (PyTorch adds a bag's
rows in order from zero: the same bits), a division by the bag sizes for the mean, or one
`gather` of each bag's winning row per column for the max. Gradients are those ops'.
"""

from __future__ import annotations

import numpy as np

import ember as E

from ..._tensor import Tensor
from ...ops._common import checked_type_name
from ...ops.registry import rename_node
from .embedding import embedding, embedding_renorm_

__all__ = ["embedding_bag"]

_LOW = (E.float16, E.bfloat16)


def _check_types(input: Tensor, weight: Tensor, offsets, per_sample_weights) -> None:
    """PyTorch's dtype checks, in its order and words."""
    where = " (while checking arguments for embedding_bag)"
    for name, t in (("indices", input), ("offsets", offsets)):
        if t is not None and t.dtype not in (E.int64, E.int32) and (
                name == "offsets" or t.dtype is not E.bool):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the "
                               f"following scalar types: Long, Int; but got "
                               f"{checked_type_name(t)} instead{where}")
    if not weight.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the "
                           "following scalar types: Half, BFloat16, Float, Double; but got "
                           f"{checked_type_name(weight)} instead{where}")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                           "tensor for argument #1 'per_sample_weights'; but type "
                           f"{checked_type_name(weight)} does not equal "
                           f"{checked_type_name(per_sample_weights)}{where}")


def _check_mode(mode: str, scale_grad_by_freq: bool, sparse: bool) -> None:
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")


def _bags(ids: np.ndarray, offsets: np.ndarray, include_last_offset: bool):
    """(start, end) of each bag's positions in `ids`, after PyTorch's offset checks."""
    n = ids.shape[0]
    if offsets.shape[0] and offsets[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offsets[0]}\n"
                           "[ torch.LongTensor{} ]")
    if offsets.shape[0] and offsets[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offsets[-1]}")
    down = np.flatnonzero(np.diff(offsets) < 0)
    if down.size:
        i = int(down[0]) + 1
        raise RuntimeError(f"offsets must be non-decreasing, but offsets[{i}] = {offsets[i]} "
                           f"comes after offsets[{i - 1}] = {offsets[i - 1]}")
    if include_last_offset:
        return offsets[:-1], offsets[1:]
    return offsets, np.append(offsets[1:], n).astype(offsets.dtype)


def _max_winners(values: np.ndarray, bag: np.ndarray, count: np.ndarray) -> np.ndarray:
    """For each bag and column, the row of `values` (bag `bag[i]`'s, `count` per bag)
    PyTorch's kernel keeps: it starts from the bag's first row and takes a later one only
    where it is greater (so the first of equal maxima; a NaN in the first row stays, a
    later NaN never wins). Empty bags: row 0."""
    full = count > 0
    starts = (np.cumsum(count) - count)[full]
    out = np.zeros((count.shape[0], values.shape[1]), np.int64)
    if not starts.size:
        return out
    nan = np.isnan(values)
    clean = np.where(nan, -np.inf, values)
    best = np.zeros(out.shape, values.dtype)
    best[full] = np.maximum.reduceat(clean, starts, axis=0)
    n = values.shape[0]
    hit = (clean == best[bag]) & ~nan
    win = np.minimum.reduceat(np.where(hit, np.arange(n)[:, None], n), starts, axis=0)
    out[full] = np.where(nan[starts], starts[:, None], win)
    return out


def _round_sums(sums: Tensor, dtype) -> Tensor:
    """float32 sums rounded to `dtype` as PyTorch's kernel stores them: float16 to nearest
    even, bfloat16 with ties away from zero (its conversion adds half a unit and cuts)."""
    out = sums.to(dtype)
    if dtype is E.bfloat16:
        bits = sums.detach().numpy().view(np.uint32)
        up = ((bits + np.uint32(0x8000)) & np.uint32(0xFFFF0000)).view(np.float32)
        near = out.detach().float().numpy()
        differ = (up != near) & ~np.isnan(near)  # ties rounded to even, downwards
        if differ.any():
            step = np.subtract(up, near, out=np.zeros_like(up), where=differ)
            out = out + E.from_numpy(step).to(dtype)  # (exact: both ends are bfloat16)
    return out


def _flat(input: Tensor, weight: Tensor, offsets, per_sample_weights):
    """(input, offsets, per_sample_weights) as 1-D tensors, after PyTorch's shape checks
    (a 2-D input is one bag per row)."""
    if per_sample_weights is not None and per_sample_weights.shape != input.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        n, length = input.shape
        offsets = E.arange(0, n * length, length)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    elif offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    elif offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    return input, offsets, per_sample_weights


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxes of bags of rows of `weight`: `input` 2-D (one bag per row) or
    1-D with `offsets` (each bag's first position). Empty bags give zeros."""
    input, offsets, per_sample_weights = _flat(input, weight, offsets, per_sample_weights)
    _check_mode(mode, scale_grad_by_freq, sparse)
    if max_norm is not None:  # (before the kernel's own checks, as in PyTorch)
        embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    _check_types(input, weight, offsets, per_sample_weights)
    rows_total = weight.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx = rows_total + padding_idx
    if input.dtype is E.bool:  # (PyTorch reads bool indices as 0 and 1)
        input = input.long()
    ids = input.detach().numpy().astype(np.int64, copy=False)
    bad = np.flatnonzero((ids < 0) | (ids >= rows_total))
    if bad.size:
        i = int(bad[0])
        raise RuntimeError(f"Index {i} of input takes value {ids[i]} which is not in the valid "
                           f"range [0, {rows_total})")
    starts, ends = _bags(ids, offsets.detach().numpy().astype(np.int64), include_last_offset)
    bag = np.repeat(np.arange(starts.shape[0]), ends - starts)
    pos = np.arange(ends[-1] if ends.shape[0] else 0)  # (bags tile 0 .. the last end)
    if padding_idx is not None:
        keep = ids[pos] != padding_idx
        pos, bag = pos[keep], bag[keep]
    count = np.bincount(bag, minlength=starts.shape[0])
    low = weight.dtype in _LOW and mode != "max"  # (sums in float32; a max is exact)
    table = weight.float() if low else weight
    freq = "bag" if scale_grad_by_freq else False  # (the bag kernel's own rule: nn_ops)
    # (a sparse gradient leaves padding lookups out of its indices, as PyTorch's does; a
    # dense one gets nothing from them anyway: their rows are dropped below)
    rows = embedding(input, table, padding_idx if sparse else None, None, 2.0, freq,
                     sparse)  # (saves input)
    if pos.shape[0] != ids.shape[0]:  # padding, or positions past the last bag
        rows = rows[E.from_numpy(pos)]
    zeros = E.zeros(starts.shape[0], weight.shape[1], dtype=table.dtype)
    if mode == "max":
        win = _max_winners(rows.detach().numpy(), bag, count)
        out = rows.gather(0, E.from_numpy(win)) if pos.size else zeros
        if pos.size and not count.all():
            out = E.where(E.from_numpy(count[:, None] > 0), out, zeros)
    else:
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.reshape(-1)[E.from_numpy(pos)].unsqueeze(1)
        out = zeros.index_add(0, E.from_numpy(bag), rows)
        if low:  # (PyTorch rounds the float32 sums before it divides them)
            out = _round_sums(out, weight.dtype)
        if mode == "mean":
            out = out / E.from_numpy(np.maximum(count, 1)[:, None].astype(np.float32)).to(
                out.dtype)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "EmbeddingBagBackward0")
    return out
