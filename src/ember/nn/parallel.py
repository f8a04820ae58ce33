"""DataParallel for API compatibility: on one device it simply runs the wrapped module."""

from __future__ import annotations

from .modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Wraps `module` (registered as `module`, so state_dict keys gain a "module." prefix)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Needs a process group, which ember cannot create: constructing one raises."""

    def __init__(self, module: Module, *args, **kwargs) -> None:
        raise RuntimeError(
            "DistributedDataParallel needs torch.distributed.init_process_group, which ember does "
            "not provide; use the module directly (or DataParallel) in one process"
        )
