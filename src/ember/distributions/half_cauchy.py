"""HalfCauchy(scale): |X| for X ~ Cauchy(0, scale) (half_symmetric.py builds it); its mean
is infinite."""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..ops.creation import full
from .cauchy import Cauchy
from .half_symmetric import HalfSymmetric

__all__ = ["HalfCauchy"]


class HalfCauchy(HalfSymmetric):
    _base = Cauchy
    _cast_value = True

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
