"""Categorical(probs | logits): one of K classes per batch element (the last dim of the
parameter holds the K weights; they are normalised on construction)."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Size, Tensor
from ..ops.creation import arange, full
from ..ops.join import broadcast_tensors
from ..ops.random_ops import multinomial
from . import constraints
from .distribution import Distribution
from .probs_logits import expand_probs_or_logits, one_of_probs_logits
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        one_of_probs_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Categorical, batch_shape, _instance)
        new._num_events = self._num_events
        expand_probs_or_logits(new, self, new.batch_shape + Size((self._num_events,)))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        draws = multinomial(probs_2d, sample_shape.numel(), True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=dt.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, dtype=dt.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
