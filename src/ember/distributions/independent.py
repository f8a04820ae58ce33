"""Independent(base, n): the base distribution's rightmost n batch dims read as event dims
(log_prob and entropy summed over them), e.g. a diagonal Gaussian from a batch of Normals."""

from __future__ import annotations

from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution

__all__ = ["Independent"]


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


class Independent(Distribution):
    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}"
            )
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Independent, batch_shape, _instance)
        n = self.reinterpreted_batch_ndims
        new.base_dist = self.base_dist.expand(new.batch_shape + self.event_shape[:n])
        new.reinterpreted_batch_ndims = n
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        base = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            return constraints.independent(base, self.reinterpreted_batch_ndims)
        return base

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist}, {self.reinterpreted_batch_ndims})"
