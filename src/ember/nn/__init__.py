"""ember.nn: Module, Parameter, layers, losses, `functional` and `init`."""

from . import functional, init, utils
from ._factory_kwargs import factory_kwargs
from .modules import *
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
