"""LKJCholesky(dim, concentration): the LKJ prior over Cholesky factors of correlation matrices.

The density of the correlation matrix L L^T is proportional to det(L L^T)^(eta - 1), so
eta = 1 is uniform over correlation matrices and a larger eta pulls them towards the identity.
Sampling is the onion method (Lewandowski, Kurowicka and Joe 2009, section 3), in PyTorch's
order of draws: one Beta per row (the squared norm of the row's off-diagonal part), then a
standard normal matrix whose strictly lower triangle, normalised per row, gives directions.
"""

from __future__ import annotations

import math

from .. import _dtype as dt
from .._tensor import Size, Tensor
from ..ops.creation import arange
from ..ops.join import cat
from ..ops.random_ops import randn
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution over lower Cholesky factors of `dim` x `dim` correlation matrices."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # row i's squared off-diagonal norm is Beta(i / 2, eta + (dim - 2 - (i - 1)) / 2)
        # (row 0's Beta is drawn and then unused, as PyTorch does)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype,
                        device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LKJCholesky, batch_shape, _instance, "concentration")
        new.dim = self.dim
        new._beta = self._beta.expand(Size(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=Size()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = randn(self._extended_shape(sample_shape), dtype=y.dtype,
                         device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)  # (row 0 was 0 / 0)
        w = y.sqrt() * u_hypersphere
        tiny = dt.finfo(w.dtype).tiny
        diag = (1 - (w ** 2).sum(dim=-1)).clamp(min=tiny).sqrt()
        w += diag.diag_embed()
        return w

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = (alpha - 0.5).mvlgamma(dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
