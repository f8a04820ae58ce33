"""`torch.optim.radam`'s path: ember keeps RAdam beside Adam (ember.optim.adam)."""

from .adam import RAdam

__all__ = ["RAdam"]
