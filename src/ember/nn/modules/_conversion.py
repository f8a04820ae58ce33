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
from ...ops.device_copy import META_NO_DATA

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
        """Replace each parameter's and buffer's data with `fn(data)`. The Parameter objects
        stay the same unless `ember.__future__.set_overwrite_module_params_on_conversion`
        asked for new ones (and the swap switch did not take precedence)."""
        from ... import __future__ as future
        from ..parameter import Parameter

        if recurse:
            for module in self.children():
                module._apply(fn)
        overwrite = (future.get_overwrite_module_params_on_conversion()
                     and not future.get_swap_module_params_on_conversion())
        for key, param in self._parameters.items():
            if param is None:
                continue
            with grad_mode.no_grad():
                new = fn(param)
                g = None if param.grad is None else fn(param.grad)
            if overwrite:
                out = Parameter(new, param.requires_grad)
                if g is not None:
                    out.grad = g.requires_grad_(param.grad.requires_grad)
                self._parameters[key] = out
                continue
            param.data = new
            if g is not None:
                param.grad.data = g
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers (dtype casts touch floating tensors only)."""
        from ...ops.copy import parse_to

        parsed = parse_to(args, kwargs)
        device, dtype, fmt = parsed["device"], parsed["dtype"], parsed["memory_format"]
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        if dtype is not None and dtype.is_complex:
            warn_at_user(_COMPLEX_MODULES)

        def convert(t: Tensor) -> Tensor:
            d = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) \
                else None
            try:
                if fmt is not None and t.dim() in (4, 5):
                    return t.to(device=device, dtype=d, memory_format=fmt)
                return t.to(device=device, dtype=d)
            except NotImplementedError as e:
                if str(e) != META_NO_DATA:
                    raise
                raise NotImplementedError(
                    f"{e} Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() "
                    "when moving module from meta to a different device.") from None

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
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

    def xpu(self, device=None) -> Module:
        return self._apply(lambda t: t.xpu(device))

    def ipu(self, device=None) -> Module:
        return self._apply(lambda t: t.ipu(device))

    def mtia(self, device=None) -> Module:
        return self._apply(lambda t: t.mtia(device))

    def share_memory(self) -> Module:
        """Move every parameter, buffer and existing gradient into memory shared with
        processes forked later (torch.multiprocessing's Hogwild pattern)."""
        with deferred_sharing():
            return self._apply(lambda t: t.share_memory_())


def _parse_to(args, kwargs):
    """`Module.to`'s arguments, read as `Tensor.to` reads them (the same three overloads and
    torch's TypeError): (device, dtype, non_blocking)."""
    from ...ops.copy import parse_to

    r = parse_to(args, kwargs)
    return r["device"], r["dtype"], r["non_blocking"]
