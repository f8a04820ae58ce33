"""TransformedDistribution: a base distribution pushed through a list of transforms.

A sample is `transforms[-1](...transforms[0](base.sample()))`; `log_prob(y)` undoes the
transforms one by one, subtracting each one's log |det J|, and scores what is left under
the base distribution.
"""

from __future__ import annotations

from .. import _grad_mode
from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .independent import Independent, sum_rightmost
from .transforms import ComposeTransform, Transform

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms,
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = transform.forward_shape(base_shape)
        expanded = transform.inverse_shape(forward_shape)
        if base_shape != expanded:  # (a transform's parameters broadcast the base)
            base_distribution = base_distribution.expand(
                expanded[:len(expanded) - base_event_dim])
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(Size(forward_shape[:cut]), Size(forward_shape[cut:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(TransformedDistribution, batch_shape, _instance)
        shape = new.batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    def sample(self, sample_shape=Size()) -> Tensor:
        with _grad_mode.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=Size()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        # a decreasing transform turns the base's cdf into 1 - cdf
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value
