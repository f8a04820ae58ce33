"""`skip_init`: build a module without running its parameter initialization."""

from __future__ import annotations

import inspect

from ..modules.module import Module


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """Instantiate `module_cls(*args, **kwargs)` with uninitialized parameters and buffers:
    it is built on the meta device (so its init draws nothing from the RNG) and then given
    fresh memory on `device` (default cpu), for code that loads or sets the values itself."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
