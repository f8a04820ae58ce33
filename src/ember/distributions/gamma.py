"""Gamma(concentration, rate), and the gamma and Dirichlet samplers Beta and Dirichlet share.

Sampling follows PyTorch's CPU kernels draw for draw: Marsaglia and Tsang's rejection method
(2000), one element after another, with a double normal (cached in the generator, as its
normal_distribution<double>) and a double uniform per try, a concentration below 1 boosted
by one extra uniform. So a seeded program gets PyTorch's samples bit for bit.

Reparameterised gradients are implicit (Figurnov et al. 2018): a sample x solves
F(x; alpha) = u for a fixed uniform u, so dx/dalpha = -(dF/dalpha) / pdf(x), evaluated by
PyTorch's fitted approximations (`_implicit_grads`), so gradients are PyTorch's too.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode
from .._tensor import Size, Tensor
from ..autograd.function import Function, once_differentiable
from ..ops import _rng_kernels as K
from ..ops.creation import tensor
from ..random import default_generator
from . import constraints
from ._implicit_grads import dirichlet_grad, standard_gamma_grad
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]

_THIRD_F32 = float(np.float32(1.0 / 3.0))  # PyTorch's 1.0f / 3.0f
_SQUEEZE_F32 = float(np.float32(0.0331))  # the squeeze test's constant, a float literal


def _gamma_one(g, alpha: float, single: bool) -> float:
    """One Gamma(alpha, 1) draw; `single`: alpha and d in float32 arithmetic, as the kernel
    computes them for a float32 tensor."""
    r = (lambda v: float(np.float32(v))) if single else float
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= math.pow(1.0 - float(g._doubles(1)[0]), r(1.0 / alpha))
        alpha = r(alpha + 1.0)
    d = r(alpha - _THIRD_F32)
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = float(K.normal_serial(g, 1, 0.0, 1.0)[0])
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - float(g._doubles(1)[0])
        xx = x * x
        if u < 1.0 - _SQUEEZE_F32 * xx * xx:  # (the cheap squeeze accepts most draws)
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gamma_draws(alpha: np.ndarray, single: bool) -> np.ndarray:
    g = default_generator
    return np.array([_gamma_one(g, a, single) for a in alpha.reshape(-1).tolist()],
                    np.float64).reshape(alpha.shape)


def standard_gamma_sample(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) samples of the same shape and dtype (no gradient)."""
    a = concentration.detach().numpy()
    np_dtype = a.dtype
    vals = _gamma_draws(a, np_dtype == np.float32).astype(np_dtype)
    vals = np.maximum(vals, np.finfo(np_dtype).tiny)
    return tensor(vals, dtype=concentration.dtype, device=concentration.device)


def dirichlet_sample(concentration: Tensor) -> Tensor:
    """Dirichlet samples: gammas drawn in double, normalised over the last dim, kept inside
    [tiny, the float below 1] of the dtype."""
    a = concentration.detach().numpy()
    gam = np.maximum(_gamma_draws(a.astype(np.float64), False), np.finfo(np.float64).tiny)
    x = (gam / gam.sum(-1, keepdims=True)).astype(a.dtype)
    x = np.clip(x, np.finfo(a.dtype).tiny, np.nextafter(a.dtype.type(1), a.dtype.type(0)))
    return tensor(x, dtype=concentration.dtype, device=concentration.device)


class _StandardGamma(Function):
    """Gamma(alpha, 1) samples whose gradient is the implicit one."""

    @staticmethod
    def forward(ctx, alpha):
        x = standard_gamma_sample(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        dx = standard_gamma_grad(x.detach().numpy(), alpha.detach().numpy())
        return grad * tensor(dx, dtype=x.dtype, device=x.device)


class _Dirichlet(Function):
    """Dirichlet samples with PyTorch's gradient: each coordinate's marginal Beta implicit
    gradient, shared with the other coordinates (which sum to 1 - x_i) in proportion."""

    @staticmethod
    def forward(ctx, concentration):
        x = dirichlet_sample(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, conc = ctx.saved_tensors
        # d x_j / d a_i = g_i (delta_ij - x_j), g_i the marginal Beta(a_i, total - a_i)'s
        # gradient over 1 - x_i: the share of the change that x_i keeps
        total = conc.detach().sum(-1, True).expand_as(conc)
        g = dirichlet_grad(x.detach().numpy(), conc.detach().numpy(), total.numpy())
        g = tensor(g, dtype=x.dtype, device=x.device)
        return g * (grad_output - (x * grad_output).sum(-1, True))


def standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) samples, differentiable in the concentration."""
    return _StandardGamma.apply(concentration)


def sample_dirichlet(concentration: Tensor) -> Tensor:
    """Dirichlet(concentration) samples, differentiable in the concentration."""
    return _Dirichlet.apply(concentration)


# --- the distribution ------------------------------------------------------------------------

class Gamma(ExponentialFamily):
    """Gamma with shape `concentration` and inverse scale `rate`."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        with _grad_mode.no_grad():  # (a quotient can underflow to 0: kept positive)
            value.clamp_(min=dt.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value) -> Tensor:
        if not isinstance(value, Tensor):
            value = tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return c.xlogy(self.rate) + (c - 1).xlogy(value) - self.rate * value - c.lgamma()

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration.igamma(self.rate * value)
