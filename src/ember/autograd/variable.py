"""`Variable`: PyTorch's legacy wrapper, now just a way to spell a tensor."""

from __future__ import annotations

from .. import _tensor as T


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, T.Tensor)


class Variable(metaclass=_VariableMeta):
    """`Variable(t, requires_grad=False)`: a tensor sharing `t`'s data (a detached alias)."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, T.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        t.requires_grad_(requires_grad)
        return t


__all__ = ["Variable"]
