"""ember.nn: Module, Parameter, layers, losses, `functional` and `init`."""

from . import functional, init, utils
from .modules import *
from .parameter import Buffer, Parameter, UninitializedParameter
