"""`Module`'s moving and casting methods: `to`, `to_empty`, `float`/`double`/`half`, `cpu`, ...

`_ConversionMixin` holds them and `_apply`, through which they all rewrite every parameter's
and buffer's data; `Module` (in `module.py`) inherits them. `_parse_to` reads `Module.to`'s
arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..._storage import deferred_sharing
from ..._tensor import Tensor
from ..._user_warnings import warn_at_user
from ...autograd import grad_mode

if TYPE_CHECKING:
    from .module import Module


# PyTorch's words, warned (at the caller's line) on every cast of a module to a complex dtype
_COMPLEX_MODULES = (
    "Complex modules are a new feature under active development whose design may change, and "
    "some modules might not work as expected when using complex tensors as parameters or "
    "buffers. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a complex module "
    "does not work as expected.")


class _ConversionMixin:
    """Moving and casting methods of `Module`; they all go through `_apply`."""

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace each parameter's and buffer's data with `fn(data)` (Parameters stay the same)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with grad_mode.no_grad():
                new = fn(param)
            param.data = new
            if param.grad is not None:
                with grad_mode.no_grad():
                    g = fn(param.grad)
                param.grad.data = g
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers (dtype casts touch floating tensors only)."""
        device, dtype, non_blocking = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        if dtype is not None and dtype.is_complex:
            warn_at_user(_COMPLEX_MODULES)

        def convert(t: Tensor) -> Tensor:
            d = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) \
                else None
            return t.to(device=device, dtype=d)

        return self._apply(convert)

    def to_empty(self, *, device=None, recurse: bool = True) -> Module:
        """Give every parameter and buffer fresh uninitialised memory on `device`."""
        from ...ops.creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def _cast_floats(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        from ... import _dtype as dt

        return self._cast_floats(dt.float32)

    def double(self) -> Module:
        from ... import _dtype as dt

        return self._cast_floats(dt.float64)

    def half(self) -> Module:
        from ... import _dtype as dt

        return self._cast_floats(dt.float16)

    def bfloat16(self) -> Module:
        from ... import _dtype as dt

        return self._cast_floats(dt.bfloat16)

    def type(self, dst_type) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self) -> Module:
        """Move every parameter, buffer and existing gradient into memory shared with
        processes forked later (torch.multiprocessing's Hogwild pattern)."""
        with deferred_sharing():
            return self._apply(lambda t: t.share_memory_())


def _parse_to(args, kwargs):
    from ... import _dtype as dt
    from ..._device import as_device

    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: {list(kwargs)}")
    for a in args:
        if isinstance(a, dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, bool):
            non_blocking = a
        elif a is not None:
            device = a
    if device is not None:
        device = as_device(device)
    return device, dtype, non_blocking
