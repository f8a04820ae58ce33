"""`torch.optim.adamw`'s path: ember keeps AdamW beside Adam (ember.optim.adam)."""

from .adam import AdamW

__all__ = ["AdamW"]
