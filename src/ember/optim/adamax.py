"""`torch.optim.adamax`'s path: ember keeps Adamax beside Adam (ember.optim.adam)."""

from .adam import Adamax

__all__ = ["Adamax"]
