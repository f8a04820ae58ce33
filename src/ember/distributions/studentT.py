"""StudentT(df, loc, scale): loc + scale * X / sqrt(Z / df) for a standard normal X and a
Chi2(df) Z, drawn in that order (the normals, then the gammas), as PyTorch draws them."""

from __future__ import annotations

import math

from .._tensor import Size, Tensor
from ..ops.creation import empty
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(StudentT, batch_shape, _instance, "df", "loc", "scale", "_chi2")

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        # NOTE: masked writes, not `where`, as in PyTorch: the df <= 2 entries never see
        # df / (df - 2), so no 0 * inf reaches their gradients
        df = self.df
        m = df.clone()
        big = df > 2
        m[big] = self.scale[big].pow(2) * df[big] / (df[big] - 2)
        m[(df <= 2) & (df > 1)] = math.inf
        m[df <= 1] = math.nan
        return m

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        X = empty(shape, dtype=self.df.dtype, device=self.df.device).normal_()
        Z = self._chi2.rsample(sample_shape)
        Y = X * (Z / self.df).rsqrt()
        return self.loc + self.scale * Y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - Z

    def entropy(self) -> Tensor:
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return (self.scale.log()
                + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma()
                                         - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)
