"""`torch.optim.adadelta`'s path: ember keeps Adadelta beside RMSprop (ember.optim.rmsprop)."""

from .rmsprop import Adadelta

__all__ = ["Adadelta"]
