"""RelaxedOneHotCategorical(temperature, probs | logits): the Concrete / Gumbel-softmax
relaxation of OneHotCategorical (Maddison et al. 2017; Jang et al. 2017), points inside the
simplex with reparameterised samples. It is exp of ExpRelaxedCategorical, whose samples are
log-softmax((logits + Gumbel noise) / temperature), the noise from clamped uniforms."""

from __future__ import annotations

from .._tensor import Size, Tensor
from ..ops.random_ops import rand
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs, delegated

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # (the true support is a submanifold of it)
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ExpRelaxedCategorical, batch_shape, _instance, "_categorical")
        new.temperature = self.temperature
        return new

    param_shape = delegated("_categorical", "param_shape")
    logits = delegated("_categorical", "logits")
    probs = delegated("_categorical", "probs")

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        from ..ops.creation import full_like

        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (full_like(self.temperature, float(k)).lgamma()
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Tensor, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    temperature = delegated("base_dist", "temperature")
    logits = delegated("base_dist", "logits")
    probs = delegated("base_dist", "probs")
