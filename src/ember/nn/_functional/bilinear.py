"""`bilinear`: y_o = x1^T W_o x2 + b_o over the last dims of two inputs, with PyTorch's
checks in its order (tensors, one dtype for all, ranks, batch dims, the weight's sizes, the
bias's size) before any arithmetic."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops._arg_parser_text import need_tensors
from ...ops._common import c_type_name
from ...ops.registry import saves

__all__ = ["bilinear"]


def _check(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    named = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        named.append(("bias", bias))
    need_tensors("bilinear", *((name, i + 1, t) for i, (name, t) in enumerate(named)))
    if len({t.dtype for _, t in named}) > 1:
        got = ", ".join(f"{name}: {c_type_name(t.dtype)}" for name, t in named)
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    if input1.dim() != input2.dim():
        raise RuntimeError("bilinear(): input dimensions do not match: got "
                           f"{input1.dim()} and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    # (size() raises PyTorch's IndexError for a 0-d input, a weight under 3-D, a 0-d bias)
    if input1.size(-1) != weight.size(1):
        raise RuntimeError("bilinear(): input1 size does not match weight size: got "
                           f"{input1.size(-1)} but expected {weight.size(1)}")
    if input2.size(-1) != weight.size(2):
        raise RuntimeError("bilinear(): input2 size does not match weight size: got "
                           f"{input2.size(-1)} but expected {weight.size(2)}")
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError("bilinear(): bias size does not match weight size: got "
                           f"{bias.size(0)} but expected {weight.size(0)}")
    if weight.dim() != 3:  # (PyTorch's _trilinear, which the product goes through)
        raise RuntimeError("number of dimensions must match")


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """y_o = x1^T W_o x2 + b_o over the last dims of `input1` and `input2`."""
    _check(input1, input2, weight, bias)
    o, i1, i2 = weight.shape
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, i1)
    x2 = input2.reshape(-1, i2)
    t = x1.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    # (PyTorch's _trilinear node keeps each of the three that another's gradient reads)
    r1, r2, rw = input1.requires_grad, input2.requires_grad, weight.requires_grad
    return saves(out.reshape(tuple(lead) + (o,)), input1 if r2 or rw else None,
                 input2 if r1 or rw else None, weight if r1 or r2 else None)
