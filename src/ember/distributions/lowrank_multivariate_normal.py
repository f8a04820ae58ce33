"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): a Gaussian whose covariance is
W W^T + diag(D) for a tall factor W (n x m, m << n).

Densities never form the n x n covariance: the Woodbury identity and the matrix determinant
lemma reduce them to the m x m "capacitance" C = I + W^T D^-1 W (through its Cholesky
factor), as PyTorch does. A sample is loc + W eps_W + sqrt(D) eps_D, the m normals drawn
before the n."""

from __future__ import annotations

import math

from .._tensor import Size, Tensor
from ..linalg import cholesky, solve_triangular
from ..ops.creation import empty, eye
from ..ops.join import broadcast_tensors
from . import constraints
from .distribution import Distribution
from .multivariate_normal import batch_mahalanobis, batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(K: Tensor) -> Tensor:
    # (PyTorch adds 1 to the diagonal in place; adding the identity is the same sum)
    return K + eye(K.shape[-1], dtype=K.dtype, device=K.device)


def batch_capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """The Cholesky factor of I + W^T D^-1 W, batched."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return cholesky(_plus_identity(Wt_Dinv @ W))


def batch_lowrank_logdet(W: Tensor, D: Tensor, capacitance_tril: Tensor) -> Tensor:
    """log |W W^T + D| = log |C| + log |D| (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def batch_lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor,
                              capacitance_tril: Tensor) -> Tensor:
    """x^T (W W^T + D)^-1 x by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = batch_mv(Wt_Dinv, x)
    return (x.pow(2) / D).sum(-1) - batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


def batch_trace_XXT(bmat: Tensor) -> Tensor:
    """trace(X X^T) over the last two dims, batched."""
    n, m = bmat.size(-1), bmat.size(-2)
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(bmat.shape[:-2])


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LowRankMultivariateNormal, batch_shape, _instance)
        loc_shape = new.batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    def _full(self, m: Tensor) -> Tensor:
        return m.expand(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        # the Cholesky factor of D^(1/2) (I + D^-1/2 W W^T D^-1/2) D^(1/2)
        sqrt_D = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / sqrt_D
        return self._full(sqrt_D * cholesky(_plus_identity(Dinvsqrt_W @ Dinvsqrt_W.mT)))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W = self._unbroadcasted_cov_factor
        return self._full(W @ W.mT + self._unbroadcasted_cov_diag.diag_embed())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return self._full(self._unbroadcasted_cov_diag.reciprocal().diag_embed() - A.mT @ A)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        W_shape = shape[:-1] + self.cov_factor.shape[-1:]
        kw = {"dtype": self.loc.dtype, "device": self.loc.device}
        eps_W = empty(W_shape, **kw).normal_()
        eps_D = empty(shape, **kw).normal_()
        return (self.loc + batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self) -> Tensor:
        return batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                    self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        M = batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                      self._unbroadcasted_cov_diag, value - self.loc,
                                      self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self) -> Tensor:
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
