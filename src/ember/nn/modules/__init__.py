"""Every layer class of ember.nn, grouped by family as in PyTorch."""

from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .module import Module
