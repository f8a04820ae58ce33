"""ember.special: the `torch.special` functions ember has, under their special-module names."""

from __future__ import annotations

from . import erf, erfc, erfinv, exp2, expm1, log1p, logit, logsumexp, round, sigmoid
from .nn.functional import log_softmax, softmax

expit = sigmoid

__all__ = ["erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit",
           "logsumexp", "round", "softmax"]


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
