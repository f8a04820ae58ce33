"""`torch.utils.dlpack`: the legacy capsule-based DLPack exchange.

`to_dlpack(t)` hands out a capsule sharing `t`'s memory; `from_dlpack` accepts a capsule
or any object with `__dlpack__` (the idiomatic route PyTorch recommends).
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops._arg_parser_text import need_tensor
from ..ops.creation import from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor):
    """A DLPack capsule sharing `tensor`'s memory (consume it once, with `from_dlpack`)."""
    need_tensor(tensor, "_to_dlpack", "data")
    # NOTE: unlike `Tensor.__dlpack__`, PyTorch's to_dlpack exports a tensor that requires
    # grad (the capsule carries memory, not the graph).
    return tensor.detach().__dlpack__()


to_dlpack.__name__ = "_to_dlpack"  # (PyTorch's: the name of the binding it publishes)
