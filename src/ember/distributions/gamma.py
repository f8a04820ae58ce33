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
from .. import _grad_mode, native
from .._tensor import Size, Tensor
from ..autograd.function import Function, once_differentiable
from ..native import calls
from ..ops import _rng_kernels as K
from ..ops import _rng_math as M
from ..ops._cephes_bessel import libm
from ..ops._common import type_name
from ..ops.creation import tensor
from ..random import default_generator
from . import constraints
from ._implicit_grads import dirichlet_grad, standard_gamma_grad
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]

_THIRD_F32 = float(np.float32(1.0 / 3.0))  # PyTorch's 1.0f / 3.0f
_SQUEEZE_F32 = float(np.float32(0.0331))  # the squeeze test's constant, a float literal


class _Ahead(K.DoublesAhead):
    """Doubles drawn ahead, with the serial Box-Muller pair a normal drawn at each position
    would give (angle from the double there, radius from the next), computed for whole
    blocks; the generator's cached normal is the caller's to keep. Lists for a Python loop
    to index, or (`arrays`) NumPy arrays for a native one."""

    def __init__(self, g, guess: int, arrays: bool = False) -> None:
        self.cos: list[float] | np.ndarray = np.empty(0) if arrays else []
        self.sin: list[float] | np.ndarray = np.empty(0) if arrays else []
        super().__init__(g, guess, arrays)

    def added(self, fresh: np.ndarray) -> None:
        raw = np.concatenate([np.asarray(self.u[-1:], np.float64), fresh])
        radius = np.sqrt(-2.0 * M.libm_log1p(-raw[1:]))  # (the pair needs the next double)
        theta = (2.0 * math.pi) * raw[:-1]
        cos, sin = radius * M.libm_cos(theta), radius * M.libm_sin(theta)
        if self.arrays:
            self.cos, self.sin = np.concatenate([self.cos, cos]), np.concatenate([self.sin, sin])
        else:
            self.cos.extend(cos.tolist())
            self.sin.extend(sin.tolist())
        super().added(fresh)


def _gamma_constants(a: np.ndarray, single: bool):
    """Per element, for the whole array at once: whether a uniform boosts it (a < 1 and
    not 0), the boost's exponent 1/a, and Marsaglia-Tsang's d and c. `single`:
    rounded to float32 where the kernel computes in float for a float32 tensor."""
    rnd = (lambda v: v.astype(np.float32).astype(np.float64)) if single else (lambda v: v)
    with np.errstate(all="ignore"):  # NaN and negative concentrations flow on, as in torch
        boost = (a < 1.0) & (a != 0.0)
        expo = rnd(1.0 / a)
        d = rnd(np.where(boost, rnd(a + 1.0), a) - _THIRD_F32)
        c = 1.0 / np.sqrt(9.0 * d)
    return boost, expo, d, c


def _native_tries(lib, live, boosted, d, c, ahead: _Ahead, cache, out, boost_at, n: int):
    """The tries of `_gamma_draws`'s loop in C (csrc/rejection.c: the same steps and the C
    library's log), over the stream drawn ahead (`ahead.arrays`), grown where it runs out;
    the stream's position and cached normal after them."""
    fn = calls.entry(lib, "gamma_tries", [calls.P, calls.I64, calls.I64] + [calls.P] * 6 +
                     [calls.I64, calls.F64, calls.P, calls.P, calls.P], calls.I64)
    live = np.ascontiguousarray(live, np.int64)
    flags = np.ascontiguousarray(boosted, np.uint8)
    d, c = np.ascontiguousarray(d, np.float64), np.ascontiguousarray(c, np.float64)
    state = np.array([0, 0, 0], np.int64)  # gamma_stream: p, cache (its bits), held
    if cache is not None:
        state[1:] = np.float64(cache).view(np.int64), 1
    k = 0
    while True:
        k = fn(calls.ptr(live), live.size, k, calls.ptr(flags), calls.ptr(d), calls.ptr(c),
               calls.ptr(ahead.u), calls.ptr(ahead.cos), calls.ptr(ahead.sin), len(ahead.cos),
               _SQUEEZE_F32, calls.ptr(state), calls.ptr(out), calls.ptr(boost_at))
        if k == live.size:
            return int(state[0]), float(state[1:2].view(np.float64)[0]) if state[2] else None
        ahead.grow(2 * (n - int(live[k])) + 64)


def _gamma_draws(alpha: np.ndarray, single: bool, g=None) -> np.ndarray:
    """Gamma(alpha, 1) draws: one element after another on the stream, as PyTorch draws
    them, with everything that does not depend on the stream computed for whole arrays."""
    g = default_generator if g is None else g
    a = alpha.reshape(-1).astype(np.float64)
    n = a.size
    out = np.zeros(n, np.float64)  # each draw's v; a concentration of 0 gives 0, drawing nothing
    if n == 0:
        return out.reshape(alpha.shape)
    boost, expo, d_all, c_all = _gamma_constants(a, single)
    live = np.flatnonzero(a != 0.0)
    boost_at = np.full(n, -1, np.int64)  # where each boost's uniform sits in the stream
    lib = native.library("rejection")
    ahead = _Ahead(g, 3 * live.size + 64, arrays=lib is not None)
    u, cos, sin = ahead.u, ahead.cos, ahead.sin
    p, cache = 0, g._normal
    log, squeeze = math.log, _SQUEEZE_F32
    try:
        if lib is not None:  # (the loop below then has nothing left to draw)
            p, cache = _native_tries(lib, live, boost[live], d_all[live], c_all[live], ahead,
                                     cache, out, boost_at, n)
            live = live[:0]
        for i, boosted, d, c in zip(live.tolist(), boost[live].tolist(), d_all[live].tolist(),
                                    c_all[live].tolist()):
            if p + 4 > len(cos):  # a try reads at most a pair and a uniform, after a boost
                ahead.grow(n - i + 64)
            if boosted:
                boost_at[i] = p
                p += 1
            while True:
                while True:  # torch's `do ... while (y <= 0)`: a NaN y goes on
                    if p + 3 > len(cos):
                        ahead.grow(n - i + 64)
                    if cache is None:
                        x, cache = cos[p], sin[p]
                        p += 2
                    else:
                        x, cache = cache, None
                    y = 1.0 + c * x
                    if not y <= 0:
                        break
                v = y * y * y
                w = 1.0 - u[p]
                p += 1
                xx = x * x
                if w < 1.0 - squeeze * xx * xx or log(w) < 0.5 * xx + d * (1.0 - v + log(v)):
                    out[i] = v
                    break
    finally:  # (an interrupt too) the generator moves on by the draws made
        ahead.finish(p)
        g._normal = cache
    scale = np.ones(n, np.float64)
    at = np.flatnonzero(boost_at >= 0)
    if at.size:  # the boosts' scales, pow from libm as PyTorch's
        w = 1.0 - np.asarray(ahead.u, np.float64)[boost_at[at]]
        scale[at] = libm("pow", w, np.ascontiguousarray(expo[at], np.float64))
    return (scale * d_all * out).reshape(alpha.shape)  # (scale * d) * v, in PyTorch's order


def _at_least_tiny(x: np.ndarray) -> np.ndarray:
    """PyTorch's `max(tiny, x)`: NaN (from a NaN or negative concentration) becomes tiny."""
    tiny = np.finfo(x.dtype).tiny
    return np.where(x > tiny, x, x.dtype.type(tiny))


def standard_gamma_sample(concentration: Tensor, generator=None) -> Tensor:
    """Gamma(concentration, 1) samples of the same shape and dtype (no gradient)."""
    a = concentration.detach().numpy()
    np_dtype = a.dtype
    vals = _gamma_draws(a, np_dtype == np.float32, generator).astype(np_dtype)
    vals = _at_least_tiny(vals)
    return tensor(vals, dtype=concentration.dtype, device=concentration.device)


def dirichlet_sample(concentration: Tensor, generator=None) -> Tensor:
    """Dirichlet samples: gammas drawn in double, normalised over the last dim, kept inside
    [tiny, the float below 1] of the dtype."""
    a = concentration.detach().numpy()
    gam = _at_least_tiny(_gamma_draws(a.astype(np.float64), False, generator))
    with np.errstate(invalid="ignore"):  # an infinite gamma gives inf / inf, as in torch
        x = _at_least_tiny((gam / gam.sum(-1, keepdims=True)).astype(a.dtype))
    top = np.nextafter(a.dtype.type(1), a.dtype.type(0))
    x = np.where(x < top, x, top)
    return tensor(x, dtype=concentration.dtype, device=concentration.device)


class _StandardGamma(Function):
    """Gamma(alpha, 1) samples whose gradient is the implicit one."""

    @staticmethod
    def forward(ctx, alpha, generator=None):
        x = standard_gamma_sample(alpha, generator)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        dx = standard_gamma_grad(x.detach().numpy(), alpha.detach().numpy())
        return grad * tensor(dx, dtype=x.dtype, device=x.device), None


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


def standard_gamma(concentration: Tensor, generator=None) -> Tensor:
    """Gamma(concentration, 1) samples, differentiable in the concentration."""
    return _StandardGamma.apply(concentration, generator)


def sample_dirichlet(concentration: Tensor) -> Tensor:
    """Dirichlet(concentration) samples, differentiable in the concentration."""
    return _Dirichlet.apply(concentration)


def _float_only(t: Tensor, kernel: str) -> None:
    if t.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(t.dtype)}\'')


def _standard_gamma(input: Tensor, generator=None) -> Tensor:
    """torch._standard_gamma: Gamma(input, 1) samples, differentiable in `input`."""
    _float_only(input, "gamma_cpu")
    return standard_gamma(input, generator)


def _sample_dirichlet(input: Tensor, generator=None) -> Tensor:
    """torch._sample_dirichlet: Dirichlet(input) samples over the last dim (no gradient)."""
    _float_only(input, "dirichlet")
    return dirichlet_sample(input, generator)


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
