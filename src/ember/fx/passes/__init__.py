"""`torch.fx.passes`: analyses and rewrites over fx graphs."""

from . import shape_prop

__all__ = ["shape_prop"]
