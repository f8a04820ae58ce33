"""`embedding` (the functional lookup with `max_norm`) and `embedding_renorm_`, the in-place
rescaling of the looked-up rows that `max_norm` asks for.

`embedding_renorm_` follows PyTorch's CPU kernel step for step: its checks, then the
distinct indices in sorted order, each row picked with `select` (so a negative index wraps
and an index past the end fails with select's IndexError, after the rows before it in that
order were rescaled), its norm taken in the weight's dtype and read as a double, and the row
multiplied by `max_norm / (norm + 1e-7)` where the norm is larger.
"""

from __future__ import annotations

import numpy as np

import ember as E

from ..._tensor import Tensor
from ...ops import nn_ops
from ...ops._arg_parser_text import need_tensors
from ...ops._common import checked_type_name
from ...ops.registry import check_grad_write

__all__ = ["embedding"]

_WHERE = " (while checking arguments for embedding_renorm_)"


def _check_renorm_args(weight: Tensor, indices: Tensor) -> None:
    if weight.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional "
                           f"tensor for argument #1 'self'{_WHERE}")
    if indices.dtype not in (E.int64, E.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{checked_type_name(indices)} instead{_WHERE}")


def _rescale(weight: Tensor, rows: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Rescale the distinct `rows` (in range, non-negative) of `weight` whose norm exceeds
    `max_norm`."""
    if rows.size == 0:
        return
    idx = E.from_numpy(rows)
    picked = weight[idx]
    norms = E.linalg.vector_norm(picked, ord=norm_type, dim=1).double().numpy()
    over = norms > max_norm
    if not over.any():
        return
    # NOTE: the scale is a double, and `row *= scale` rounds it to the weight's dtype (a
    # float16 / bfloat16 scale too, as PyTorch 2.13's kernel does), then multiplies in the
    # weight's opmath type (float32 for float32, float16 and bfloat16 rows).
    scale = max_norm / (norms[over] + 1e-7)
    op = E.float64 if weight.dtype is E.float64 else E.float32
    factor = E.from_numpy(scale).to(weight.dtype).to(op).unsqueeze(1)
    sel = E.from_numpy(rows[over])
    weight[sel] = (picked[E.from_numpy(np.flatnonzero(over))].to(op) * factor).to(weight.dtype)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Rescale, in place, each row of the 2-D `input` named in `indices` whose `norm_type`
    norm exceeds `max_norm` to norm `max_norm` (up to the 1e-7 guard); returns `input`."""
    _check_renorm_args(input, indices)
    check_grad_write(input)
    n = input.shape[0]
    ids = np.unique(indices.detach().numpy().astype(np.int64, copy=False).reshape(-1))
    bad = np.flatnonzero((ids >= n) | (ids < -n))
    stop = int(bad[0]) if bad.size else ids.size
    with E.no_grad():
        if stop:  # (the negative indices come first in sorted order: two passes, so a row
            # named both ways is rescaled twice, as the kernel's loop does)
            neg = ids[:stop][ids[:stop] < 0]
            _rescale(input, neg + n, max_norm, norm_type)
            _rescale(input, ids[:stop][ids[:stop] >= 0], max_norm, norm_type)
    if bad.size:
        raise IndexError(f"select(): index {ids[stop]} out of range for tensor of size "
                         f"{list(input.shape)} at dimension 0")
    return input


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` picked by the integer tensor `input` (EmbeddingBackward0); with
    `max_norm`, the picked rows are first renormalised in place."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    if weight.__class__ is not Tensor or input.__class__ is not Tensor:
        need_tensors("embedding", ("weight", 1, weight), ("indices", 2, input))
    return nn_ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
