"""`replace_all_batch_norm_modules_`: batch norm modules made usable under vmap.

A BatchNorm module that tracks running statistics updates its buffers in place, once per
call; vmap over its input would need one update per example, and refuses. Dropping the
buffers (so the module normalises by each batch's own statistics, in eval mode too) is
PyTorch's remedy.
"""

from __future__ import annotations

from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module


def _without_running_stats(module: Module) -> None:
    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Stop every BatchNorm module in `root` (root included) from tracking running
    statistics, in place: its `running_mean`, `running_var` and `num_batches_tracked`
    become None and `track_running_stats` False. Returns `root`."""
    for module in root.modules():
        _without_running_stats(module)
    return root
