"""Multinomial(total_count, probs | logits): class counts of `total_count` Categorical draws
(the event is the last dim)."""

from __future__ import annotations

import math

from .._tensor import Size, Tensor
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all, delegated

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Multinomial, batch_shape, _instance, "_categorical")
        new.total_count = self.total_count
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    logits = delegated("_categorical", "logits")
    probs = delegated("_categorical", "probs")
    param_shape = delegated("_categorical", "param_shape")

    def sample(self, sample_shape=Size()) -> Tensor:
        from ..ops.creation import ones_like, zeros

        sample_shape = Size(sample_shape)
        # total_count Categorical draws, leading; moved last, then counted per class
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        order = list(range(samples.dim()))
        order.append(order.pop(0))
        samples = samples.permute(*order)
        counts = zeros(self._extended_shape(sample_shape), dtype=samples.dtype,
                       device=samples.device)
        counts.scatter_add_(-1, samples, ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        from ..ops.creation import tensor

        n = tensor(self.total_count)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value: Tensor) -> Tensor:
        from ..ops.ternary import where

        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # an impossible class drawn zero times contributes 0 (not 0 * -inf)
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
