"""Dirichlet(concentration): distributions over the probability simplex (the last dim)."""

from __future__ import annotations

from .._tensor import Size, Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import sample_dirichlet

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet with `concentration` (..., k): events are k-vectors summing to 1."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Dirichlet, batch_shape, _instance)
        new.concentration = self.concentration.expand(new.batch_shape + self.event_shape)
        return new

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1.0).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # every concentration below 1: the density peaks at a corner (the largest one's)
        mask = (self.concentration < 1).all(dim=-1)
        corner = mode[mask]
        mode[mask] = corner.new_zeros(corner.shape).scatter_(
            -1, corner.argmax(dim=-1, keepdim=True), 1.0)
        return mode

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((c - 1.0) * c.digamma()).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
