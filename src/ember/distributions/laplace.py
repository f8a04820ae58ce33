"""Laplace(loc, scale): the double exponential, reparameterised through a uniform draw in
(eps - 1, 1) as PyTorch draws it: loc - scale * sign(u) * log1p(-|u|)."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Size, Tensor
from ..ops.creation import empty
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = dt.finfo(self.loc.dtype).eps
        # NOTE: the open end eps - 1 keeps log1p(-|u|) finite, as in PyTorch
        u = empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (
            -(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
