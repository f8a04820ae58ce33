"""NegativeBinomial(total_count, probs | logits): successes before `total_count` failures,
sampled as a Poisson whose rate is Gamma(total_count, exp(-logits)) (PyTorch's order: the
gamma draws, then the Poisson ones)."""

from __future__ import annotations

from .. import _grad_mode
from .._tensor import Size, Tensor
from ..ops.random_ops import poisson
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .probs_logits import BinaryProbsLogits, expand_probs_or_logits, set_probs_or_logits
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbsLogits, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        (total_count,) = set_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(NegativeBinomial, batch_shape, _instance, "total_count")
        expand_probs_or_logits(new, self, new.batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # (not validated: total_count may be zero)
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=Size()) -> Tensor:
        with _grad_mode.no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        from ..nn.functional import logsigmoid

        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * logsigmoid(-self.logits)
                                 + value * logsigmoid(self.logits))
        log_normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                             + self.total_count.lgamma())
        # total_count = value = 0 has probability 1, though lgamma(0) is infinite
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
