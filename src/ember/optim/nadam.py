"""`torch.optim.nadam`'s path: ember keeps NAdam beside Adam (ember.optim.adam)."""

from .adam import NAdam

__all__ = ["NAdam"]
