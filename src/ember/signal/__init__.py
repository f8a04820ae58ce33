"""ember.signal: signal-processing helpers (torch.signal); today its window functions."""

from . import windows

__all__ = ["windows"]
