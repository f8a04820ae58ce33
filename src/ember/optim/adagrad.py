"""`torch.optim.adagrad`'s path: ember keeps Adagrad beside RMSprop (ember.optim.rmsprop)."""

from .rmsprop import Adagrad

__all__ = ["Adagrad"]
