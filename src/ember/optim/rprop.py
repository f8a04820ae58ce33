"""`torch.optim.rprop`'s path: ember keeps Rprop beside ASGD (ember.optim.asgd)."""

from .asgd import Rprop

__all__ = ["Rprop"]
