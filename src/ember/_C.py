"""`torch._C`: only the parts Python programs reach for when they write Tensor subclasses
(the switches of the `__torch_function__` protocol); ember has no C++ extension module."""

from __future__ import annotations

from ._torch_function import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
)
from ._torch_function import is_torch_function_enabled as _is_torch_function_enabled

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass",
           "_disabled_torch_function_impl", "_is_torch_function_enabled"]
