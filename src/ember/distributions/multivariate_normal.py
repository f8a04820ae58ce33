"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril).

Everything goes through the lower Cholesky factor L of the covariance (kept without the
batch broadcast, as PyTorch does): samples are loc + L eps, log densities use the
Mahalanobis term |L^-1 (x - loc)|^2 and log det L = sum(log diag L)."""

from __future__ import annotations

import math

from .._tensor import Size, Tensor
from ..linalg import cholesky, solve_triangular
from ..ops.creation import empty, eye
from ..ops.join import broadcast_shapes
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def batch_mv(mat: Tensor, vec: Tensor) -> Tensor:
    return (mat @ vec.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(L: Tensor, x: Tensor) -> Tensor:
    """|L^-1 x|^2 over the last dim, broadcasting L's batch dims against x's."""
    n = x.shape[-1]
    batch = broadcast_shapes(L.shape[:-2], x.shape[:-1])
    L = L.expand(tuple(batch) + (n, n))
    x = x.expand(tuple(batch) + (n,))
    return solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    # The Cholesky factor of P read backwards gives that of P^-1 without forming P^-1.
    Lf = cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).mT
    Id = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(L_inv, Id, upper=False)


class MultivariateNormal(Distribution):
    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is None:
                continue
            if m.dim() < 2:
                raise ValueError(f"{name} matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions" if name == "scale_tril"
                                 else f"{name} must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = Size(broadcast_shapes(m.shape[:-2], loc.shape[:-1]))
            setattr(self, name, m.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(MultivariateNormal, batch_shape, _instance)
        loc_shape = tuple(new.batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        return new

    def _full(self, m: Tensor) -> Tensor:
        return m.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.mT)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # (from the factor, as PyTorch: (L L^T)^-1 by cholesky_inverse)
        from ..linalg.solvers import cholesky_inverse

        return self._full(cholesky_inverse(self._unbroadcasted_scale_tril))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        v = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return v.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = empty(shape, dtype=self.loc.dtype, device=self.loc.device).normal_()
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        M = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        H = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
