"""OneHotCategorical(probs | logits): Categorical's classes as one-hot vectors (the event is
the last dim), and OneHotCategoricalStraightThrough, its straight-through reparameterisation."""

from __future__ import annotations

from .._tensor import Size, Tensor
from ..ops.creation import eye
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import delegated

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _one_hot(indices: Tensor, num_classes: int) -> Tensor:
    from ..nn.functional import one_hot

    return one_hot(indices, num_classes)


class OneHotCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(OneHotCategorical, batch_shape, _instance, "_categorical")

    _param = delegated("_categorical", "_param")
    probs = delegated("_categorical", "probs")
    logits = delegated("_categorical", "logits")
    param_shape = delegated("_categorical", "param_shape")

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return _one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        probs = self._categorical.probs
        indices = self._categorical.sample(Size(sample_shape))
        return _one_hot(indices, self._categorical._num_events).to(probs)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose `rsample` passes gradients straight through to the
    probabilities (Bengio et al., 2013): the one-hot sample plus probs - probs.detach()."""

    has_rsample = True

    def rsample(self, sample_shape=Size()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
