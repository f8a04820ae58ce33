"""`Parameter` (a tensor a Module registers as learnable) and `Buffer` (registered state).

A Parameter is a Tensor subclass sharing its data's storage and version counter;
it requires grad by default. A Buffer, as in PyTorch, is a plain tensor marked
with `_is_buffer` so that assigning it to a Module attribute registers it.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops._arg_parser_text import need_tensor


class Parameter(Tensor):
    """A tensor that a Module registers as a learnable parameter (requires grad by default)."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        need_tensor(data, "Parameter", "data", None)
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


def _uninitialized_use(cls_name: str, what: str) -> ValueError:
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        f"`torch.nn.parameter.{cls_name}` objects. When using LazyModules Call `forward` with "
        "a dummy batch to initialize the parameters before calling torch functions")


class UninitializedTensorMixin:
    """A placeholder with no shape yet: lazy modules `materialize` it on their first forward,
    which gives it a shape and turns it into `cls_to_become`."""

    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give this placeholder uninitialised memory of `shape` and its final class."""
        from ..ops.creation import empty

        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = empty(tuple(shape), device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    # NOTE: PyTorch refuses every tensor function on a placeholder (its __torch_function__
    # allows a short list); ember has no such hook, so the reads an op makes are refused:
    # the data (`_array`), and numel / dim, which would otherwise see the empty stand-in.
    def _array(self):
        raise _uninitialized_use(type(self).__name__, "an operation")

    def numel(self) -> int:
        raise _uninitialized_use(type(self).__name__, "<method 'numel' of 'torch._C.TensorBase' "
                                                      "objects>")

    def dim(self) -> int:
        raise _uninitialized_use(type(self).__name__, "<method 'dim' of 'torch._C.TensorBase' "
                                                      "objects>")

    def copy_(self, src, non_blocking: bool = False):
        """Allowed as in PyTorch; a placeholder into a placeholder (loading the state dict of
        an uninitialised lazy module into another) copies nothing."""
        if isinstance(src, UninitializedTensorMixin):
            return self
        if tuple(src.shape) == (0,):
            return self
        raise RuntimeError(f"The size of tensor a (0) must match the size of tensor b "
                           f"({src.shape[-1] if src.ndim else 1}) at non-singleton dimension "
                           f"{max(src.ndim - 1, 0)}")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape a lazy module infers from its first input."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        from ..ops.creation import empty

        t = Tensor._make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)
        t._drop_array_view()  # (an op's read of the data comes to `_array`, which refuses)
        return t

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module infers from its first input."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None,
                persistent: bool = True):
        from ..ops.creation import empty

        t = Tensor._make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)
        t._drop_array_view()  # (an op's read of the data comes to `_array`, which refuses)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param) -> bool:
    """Whether `param` is a placeholder still waiting for its shape."""
    return isinstance(param, UninitializedTensorMixin)
