"""`mlx.nn` on ember: `Module`, layers, losses, initializers and `value_and_grad`."""

from . import init, losses
from .layers import *  # noqa: F403
from .utils import average_gradients, value_and_grad
