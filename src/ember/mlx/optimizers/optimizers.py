"""`mlx.optimizers.optimizers`: the module MLX defines its optimizer classes in.

Programs import from it directly (`from mlx.optimizers.optimizers import Adam`) and reach
the tree helpers and `clip_grad_norm` through it, so it re-exports those names.
"""

from .. import core as mx
from ..nn import Module
from ..utils import tree_flatten, tree_map, tree_merge, tree_reduce, tree_unflatten
from .adafactor import Adafactor
from .adam import Adam, Adamax, AdamW
from .adaptive import AdaDelta, Adagrad, RMSprop
from .clip import clip_grad_norm
from .momentum import SGD, Lion
from .optimizer import MultiOptimizer, Optimizer
from .orthogonal import Muon

__all__ = ["Optimizer", "MultiOptimizer", "SGD", "Lion", "Adam", "AdamW", "Adamax",
           "RMSprop", "Adagrad", "AdaDelta", "Adafactor", "Muon", "clip_grad_norm",
           "Module", "mx", "tree_flatten", "tree_map", "tree_merge", "tree_reduce",
           "tree_unflatten"]

# MLX defines these classes here (`<class 'mlx.optimizers.optimizers.Adam'>`): say so
for _cls in (Optimizer, MultiOptimizer, SGD, Lion, Adam, AdamW, Adamax, RMSprop, Adagrad,
             AdaDelta, Adafactor, Muon):
    _cls.__module__ = __name__
del _cls
