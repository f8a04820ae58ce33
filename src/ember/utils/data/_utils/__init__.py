"""`torch.utils.data._utils`: the paths programs import collation and worker helpers from
(`from torch.utils.data._utils.collate import collate, default_collate_fn_map`)."""

from . import collate, worker

__all__ = ["collate", "worker"]
