"""PyTorch's checks of group_norm's and instance_norm's weight and bias, in its order and
words (a wrong affine would otherwise broadcast, or fail with a broadcasting message).

layer_norm's are the op's own (ops/layer_norm.py), batch_norm's sit with batch_norm.
"""

from __future__ import annotations

from ..._tensor import Tensor


def check_group_norm_affine(input: Tensor, weight: Tensor | None,
                            bias: Tensor | None) -> None:
    """Weight and bias must be vectors of one value per channel (dim 1 of `input`)."""
    c = input.shape[1]
    # NOTE: PyTorch's bias message prints the weight's shape ([0] when there is none);
    # the words are copied as it prints them.
    shown = list(weight.shape) if weight is not None else [0]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            got = list(t.shape) if name == "weight" else shown
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape {got} and "
                               f"input of shape {list(input.shape)}")


def check_instance_norm_affine(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                               *, repeated: bool) -> None:
    """instance_norm repeats weight and bias once per sample and hands them to batch_norm
    over (1, N * C, ...): its errors are those of the repeat (`repeated=False`: checked
    before anything else) and then of batch_norm's sizes (`repeated=True`: after the
    running statistics are checked)."""
    n, c = input.shape[:2]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is None:
            continue
        if not repeated and t.dim() > 1:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        if repeated and t.numel() != c:
            raise RuntimeError(f"{name} should contain {n * c} elements not {n * t.numel()}")
