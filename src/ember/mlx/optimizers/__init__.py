"""`mlx.optimizers` on ember: MLX's optimizers, `clip_grad_norm` and schedules.

    import ember.mlx.optimizers as optim
    optimizer = optim.AdamW(learning_rate=optim.cosine_decay(1e-3, 1000))
    optimizer.update(model, grads)      # model: an ember.mlx.nn.Module
"""

import math

from .. import core as mx
from .._listing import listing
from ..nn import Module
from ..utils import tree_flatten, tree_map, tree_merge, tree_reduce, tree_unflatten
from . import _memo, optimizers, schedulers
from .adafactor import Adafactor
from .adam import Adam, Adamax, AdamW
from .adaptive import AdaDelta, Adagrad, RMSprop
from .clip import clip_grad_norm
from .momentum import SGD, Lion
from .optimizer import MultiOptimizer, Optimizer
from .orthogonal import Muon
from .schedules import (
    cosine_decay,
    exponential_decay,
    join_schedules,
    linear_schedule,
    step_decay,
)

_memo.register(SGD, Lion, Adam, AdamW, Adamax, RMSprop, Adagrad, AdaDelta, Adafactor, Muon)

__all__ = ["Optimizer", "MultiOptimizer", "SGD", "Lion", "Adam", "AdamW", "Adamax",
           "RMSprop", "Adagrad", "AdaDelta", "Adafactor", "Muon",
           "clip_grad_norm", "cosine_decay",
           "exponential_decay", "step_decay", "linear_schedule", "join_schedules"]

# MLX's package has the submodules `optimizers` and `schedulers` (ember's optimizers live in
# modules of their own), and lists these imports too
__dir__ = listing(globals(), (*__all__, "optimizers", "schedulers", "math", "mx", "Module",
                              "tree_flatten", "tree_map", "tree_merge", "tree_reduce",
                              "tree_unflatten"))
