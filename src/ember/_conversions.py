"""How a Tensor leaves ember: as a NumPy array (shared memory), a Python number, a list, an
iterator over its first dim, or a DLPack capsule, with PyTorch's refusals for each (a
tensor that requires grad, one on meta, one of the wrong size). A base class of `Tensor`,
kept apart from what a tensor is (`_tensor.py`)."""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype as dt
from . import _grad_mode as grad_mode
from ._user_warnings import user_stacklevel
from ._view import numel

_grad_state = grad_mode.state
_warned_float = [False]  # float()/complex() of a tensor that requires grad warned once


class Conversions:
    """Tensor's conversion methods (it reads `_shape`, `_dtype`, `_np`, `_requires_grad`
    and `_array()` of the Tensor it is part of)."""

    __slots__ = ()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array sharing memory (a copy with `force=True`)."""
        if force:
            return self.detach()._array().copy()
        if self._requires_grad and _grad_state.enabled:  # (PyTorch allows it under no_grad)
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self.device.type != "cpu":
            raise TypeError(
                f"can't convert {self.device.type} device type tensor to numpy. Use "
                "Tensor.cpu() to copy the tensor to host memory first."
            )
        return self._array()

    def __array__(self, dtype=None, copy=None):
        # As in PyTorch: the same refusals as numpy() (requires grad, not on the cpu).
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy()
        return a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # As PyTorch: a NumPy ufunc of a tensor (`np.sin(t)`, `t + array` through the array's
        # operator) gives a tensor sharing the result's memory; a bool result as uint8
        from .ops.creation import from_numpy

        array = np.asarray(array)
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return from_numpy(array)

    def tolist(self):
        if self.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        a = self._array()
        if self._dtype is dt.bfloat16:
            a = a.astype(np.float32)
        return a.tolist()

    def item(self):
        if numel(self._shape) != 1:
            raise RuntimeError(
                f"a Tensor with {numel(self._shape)} elements cannot be converted to Scalar"
            )
        a = self._np
        if a is None:
            if self.device.type == "meta":
                raise RuntimeError("Tensor.item() cannot be called on meta tensors")
            a = self._array()
        return a.item()  # (a Python float for float16 and bfloat16 too)

    def __float__(self) -> float:
        self._warn_scalar_of_grad()
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        self._warn_scalar_of_grad()
        return complex(self._scalar("complex"))

    def _warn_scalar_of_grad(self) -> None:
        # NOTE: torch 2.13 warns only from float() and complex() (not int(), item() or bool()),
        # only while grad mode is on (silent under no_grad and inference_mode), and once per
        # process for both together (one TORCH_WARN_ONCE).
        if self.requires_grad and _grad_state.enabled and not _warned_float[0]:
            _warned_float[0] = True
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead "
                          "to unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=user_stacklevel())

    def __bool__(self) -> bool:
        n = numel(self._shape)
        if n != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
                "is ambiguous"
            )
        return bool(self.item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._dtype.is_complex or numel(self._shape) != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self.item())

    def _scalar(self, what: str):
        if numel(self._shape) != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        v = self.item()
        if what != "complex" and isinstance(v, complex):
            if v.imag:
                c_type = "double" if what == "float" else "int64_t"
                raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
            v = v.real
        return v

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reversed__(self):
        return iter(self.flip(0).unbind(0) if self._shape else ())

    def __contains__(self, element) -> bool:
        return bool((self == element).any().item())

    def __dlpack__(self, stream=None, **kwargs):
        """Export without copying (NumPy, PyTorch ... read it with their `from_dlpack`)."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        from ._dlpack import export

        return export(self._array(), stream=stream, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)
