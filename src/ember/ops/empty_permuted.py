"""`torch.empty_permuted`: an uninitialised tensor of a logical shape whose dims lie in
memory in a given physical order (channels-last is physical_layout (0, 2, 3, 1))."""

from __future__ import annotations

from .._tensor import Tensor
from .creation import empty

__all__ = ["empty_permuted"]


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """empty(size) laid out so that physical_layout[0] is the outermost dim in memory and
    physical_layout[-1] the innermost."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"empty_permuted(): argument 'size' (position 1) must be tuple of "
                        f"ints, not {type(size).__name__}")
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(size) - 1}, but got {d} at index {i}).  NB: negative "
                               f"dims not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {list(size)}")
    physical = empty(tuple(size[d] for d in order), dtype=dtype, layout=layout, device=device,
                     pin_memory=pin_memory)
    inverse = [order.index(i) for i in range(len(order))]
    out = physical.permute(inverse).detach()  # (a tensor of its own, not a view)
    return out.requires_grad_(True) if requires_grad else out


TENSOR_METHODS: dict = {}
