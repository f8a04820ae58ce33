"""RelaxedBernoulli(temperature, probs | logits): the Concrete relaxation of Bernoulli
(Maddison et al. 2017), values in (0, 1) with reparameterised samples. It is the sigmoid of
LogitRelaxedBernoulli, whose samples are (logit(u) + logit(p)) / temperature for a clamped
uniform u."""

from __future__ import annotations

from .._tensor import Size, Tensor
from ..ops.random_ops import rand
from . import constraints
from .distribution import Distribution
from .probs_logits import BinaryProbsLogits, expand_probs_or_logits, set_probs_or_logits
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, delegated

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryProbsLogits, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Tensor, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        set_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        expand_probs_or_logits(new, self, new.batch_shape)
        return new

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        # (PyTorch builds the base without passing validate_args on; so does ember)
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    temperature = delegated("base_dist", "temperature")
    logits = delegated("base_dist", "logits")
    probs = delegated("base_dist", "probs")
