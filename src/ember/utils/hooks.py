"""ember.utils.hooks: the handle every `register_*hook` returns (PyTorch's `torch.utils.hooks`)."""

from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle"]
