"""ember.optim: optimizers with PyTorch's state layout, and learning-rate schedulers."""

from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .asgd import ASGD, Rprop
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import Optimizer
from .rmsprop import Adadelta, Adagrad, RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop",
           "Adagrad", "Adadelta", "ASGD", "Rprop", "SparseAdam",
           "LBFGS", "Adafactor", "Muon", "lr_scheduler", "swa_utils"]


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
