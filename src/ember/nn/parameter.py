"""`Parameter` (a tensor a Module registers as learnable) and `Buffer` (registered state).

A Parameter is a Tensor subclass sharing its data's storage and version counter;
it requires grad by default. A Buffer, as in PyTorch, is a plain tensor marked
with `_is_buffer` so that assigning it to a Module attribute registers it.
"""

from __future__ import annotations

from .._tensor import Tensor


class Parameter(Tensor):
    """A tensor that a Module registers as a learnable parameter (requires grad by default)."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}"
            )
        return Tensor._make_subclass(cls, data, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    """`isinstance(t, Buffer)` is true for tensors made by `Buffer(...)`."""

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as module state: assigning it to a Module attribute registers a buffer.

    `persistent=False` keeps it out of `state_dict`.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        t = data.detach()
        if data._requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedParameter(Parameter):
    """Placeholder for lazy modules (not supported: lazy modules are not part of ember.nn)."""


def is_lazy(param) -> bool:
    return isinstance(param, UninitializedParameter)
