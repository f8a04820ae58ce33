"""`torch.get_device_module`: the module a device type is served by (`ember.cpu`,
`ember.cuda`, ...), as device-generic PyTorch code looks it up."""

from __future__ import annotations

import sys

from ._device import device as _device


def get_device_module(device: _device | str | None = None):
    """The module for `device`'s type (`ember.cpu` for None: ember has no accelerator)."""
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    elif device is None:
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    module = getattr(sys.modules["ember"], name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return module
