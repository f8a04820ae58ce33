"""ember.special: the `torch.special` functions ember has, under their special-module names."""

from __future__ import annotations

from . import erf, erfc, erfinv, exp2, expm1, log1p, logit, logsumexp, round, sigmoid
from ._aliases import with_aliases
from .nn.functional import log_softmax, softmax

expit = sigmoid
# torch.special's softmax and log_softmax take `axis=` (torch.nn.functional's do not).
log_softmax = with_aliases(log_softmax, "log_softmax", module=__name__)
softmax = with_aliases(softmax, "softmax", module=__name__)

__all__ = ["erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit",
           "logsumexp", "round", "softmax"]


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
