"""PyTorch's `torch._ops`: the classes of ops, which tools test with `isinstance` (a dispatch
mode asking `isinstance(func, torch._ops.OpOverload)`, a flop formula registry keyed by
`OpOverloadPacket`). An ATen op (`torch.ops.aten.mm.default`) and a user op
(`torch.ops.mylib.foo.default`) are both instances; `_OpNamespace` is the class of
`torch.ops.aten` and of each user namespace."""

from __future__ import annotations

from . import ops
from .library._registry import OpNamespace as _OpNamespace
from .library._registry import OpOverload, OpOverloadPacket

__all__ = ["OpOverload", "OpOverloadPacket", "_OpNamespace", "ops"]
