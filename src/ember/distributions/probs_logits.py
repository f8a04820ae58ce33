"""Families given either `probs` or `logits` (Bernoulli, Binomial, Geometric, Categorical,
...): the one-of check, holding and expanding whichever was given, and the binary
families' pair of properties that computes the other one on first use."""

from __future__ import annotations

from .._tensor import Tensor
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BinaryProbsLogits", "expand_probs_or_logits", "one_of_probs_logits",
           "set_probs_or_logits"]


def one_of_probs_logits(probs, logits) -> tuple[str, object]:
    """("probs", probs) or ("logits", logits): whichever is given (exactly one must be)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


def set_probs_or_logits(d, probs, logits, *others) -> list:
    """Sets whichever of `probs` / `logits` is given on distribution `d` (and as `d._param`),
    broadcast with `others`, which come back broadcast (in their order)."""
    name, given = one_of_probs_logits(probs, logits)
    *others, param = broadcast_all(*others, given)
    setattr(d, name, param)
    d._param = param
    return others


def expand_probs_or_logits(new, d, shape) -> None:
    """Gives `new` whichever of `d`'s probs / logits are held (given or already computed),
    expanded to `shape`; the last one set is `new._param`."""
    for name in ("probs", "logits"):
        if name in d.__dict__:
            setattr(new, name, d.__dict__[name].expand(shape))
            new._param = new.__dict__[name]


class BinaryProbsLogits:
    """The probs / logits pair of a family over a binary event (probs = sigmoid(logits)):
    the one not given is computed from the other on first use."""

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)
