"""ember.masked (torch.masked): reductions and normalizations that skip masked-out elements.

MaskedTensor (PyTorch's prototype tensor subclass) is not provided; its names raise the
usual "not implemented in ember" AttributeError.
"""

from ._ops import (
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]


def __getattr__(name: str):
    from ..compat import missing

    raise missing(__name__, name)
