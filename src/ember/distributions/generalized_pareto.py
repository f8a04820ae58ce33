"""GeneralizedPareto(loc, scale, concentration): the peaks-over-threshold tail model.

The concentration xi picks the tail: xi > 0 heavy (Pareto-like), xi = 0 exponential,
xi < 0 bounded above at loc - scale / xi. Near xi = 0 every formula switches to its limit
(where `isclose(xi, 0)`), with a safe xi of 1 in the other branch so that no NaN leaks into
gradients. A sample is icdf(u) for one uniform u, so rsample is reparameterised.
"""

from __future__ import annotations

import math

from .._tensor import Size, Tensor
from ..ops.binary_math import isclose
from ..ops.creation import ones_like, tensor, zeros_like
from ..ops.random_ops import rand
from ..ops.ternary import where
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto with location `loc`, scale `scale` and shape `concentration`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance,
                              "loc", "scale", "concentration")

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def _safe_concentration(self) -> tuple[Tensor, Tensor]:
        """(xi == 0, xi with its zeros replaced by 1).

        NOTE: compared with a float32 zero, as PyTorch does: for float64 parameters
        PyTorch's log_prob and survival function raise isclose's dtype RuntimeError, and so
        do ember's."""
        c = self.concentration
        eq_zero = isclose(c, tensor(0.0))
        return eq_zero, where(eq_zero, ones_like(c), c)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + ones_like(z)
        nonzero = where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        """log P(X <= value)."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        c = self.concentration
        eq_zero = isclose(c, zeros_like(c))
        safe = where(eq_zero, ones_like(c), c)
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        return where(eq_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).broadcast_to(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(lower, upper)
