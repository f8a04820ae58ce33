"""Worker-process helpers under PyTorch's module path; they live in `..dataloader`."""

from ..dataloader import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
