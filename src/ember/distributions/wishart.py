"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): distributions over SPD matrices.

A sample is L A A^T L^T with L the scale's Cholesky factor and A the Bartlett factor: square
roots of Chi2(df - i) on the diagonal (reparameterised), standard normals below it (Odell and
Feiveson 1966), drawn in PyTorch's order so a seeded program gets its samples.

NOTE: PyTorch's rsample flags a sample "singular" when it *passes* the positive-definite
check, so it warns "Singular sample detected." and draws a second time for every sample (the
returned samples are the second draws). ember follows it, warning and draws alike, so that
seeded programs keep PyTorch's stream.
"""

from __future__ import annotations

import math
import warnings

from .. import _dtype as dt
from .._tensor import Size, Tensor
from .._user_warnings import user_stacklevel
from ..linalg import cholesky, slogdet
from ..ops.composite import tril_indices
from ..ops.creation import arange, eye, tensor
from ..ops.join import broadcast_shapes
from ..ops.random_ops import randn
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma: sum over i < p of digamma(x - i / 2)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = arange(p, dtype=x.dtype, device=x.device).div(2).expand(tuple(x.shape) + (-1,))
    return (x.unsqueeze(-1) - halves).digamma().sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    return x.clamp(min=dt.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart with `df` degrees of freedom and a p x p scale matrix, given one of three ways."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Tensor):
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        else:
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=user_stacklevel())
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape) -> Chi2:
        """Chi2(df - i) for i < p: the squared diagonal of the Bartlett factor."""
        tril = self._unbroadcasted_scale_tril
        steps = arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        new._event_shape = self._event_shape  # (read by _bartlett_chi2)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], device=tril.device, dtype=tril.dtype)
        return identity.cholesky_solve(tril).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self) -> Tensor:
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan  # (no mode for df <= p + 1)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        d = v.diagonal(dim1=-2, dim2=-1)
        outer = d.unsqueeze(-1) * d.unsqueeze(-2)  # (one product each, as einsum's)
        return self.df.view(self._batch_shape + (1, 1)) * (v.pow(2) + outer)

    def _bartlett_sampling(self, sample_shape=Size()) -> Tensor:
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        noise = noise.diag_embed(dim1=-2, dim2=-1)
        i, j = tril_indices(p, p, offset=-1, device=noise.device)
        noise[..., i, j] = randn(Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                                 dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=None) -> Tensor:
        """Bartlett samples; see the module's NOTE on PyTorch's resampling, followed here."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)  # (sic: PyTorch's test, see above)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=user_stacklevel())
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        log_det_scale = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = value.cholesky_solve(self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_scale) - (nu / 2).mvlgamma(p=p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        log_det_scale = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_scale) + (nu / 2).mvlgamma(p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + (y + (p + 1) / 2).mvlgamma(p=p))
