"""Binomial(total_count, probs | logits): successes in `total_count` independent trials.

Sampling follows PyTorch's CPU kernel (`sample_binomial`) draw for draw, one element after
another in memory order, each step a double uniform: inversion (counting geometric waiting
times) while count * p < 10, else Hormann's BTRS transformed rejection (1993), on the
smaller of p and 1 - p. A float32 tensor's own arithmetic stays in float32 where the
kernel's does (products of count and p, the sqrt, log1p).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math

import numpy as np

from .. import _grad_mode
from .._tensor import Size, Tensor
from ..ops.creation import arange, tensor
from . import constraints
from .distribution import Distribution
from .probs_logits import BinaryProbsLogits, expand_probs_or_logits, set_probs_or_logits

__all__ = ["Binomial"]


# log k! - (log sqrt(2 pi) + (k + 1/2) log(k + 1) - (k + 1)) for k = 0..9 (the table the
# kernel uses below k = 10, where the series takes over)
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _uniform(g) -> float:
    return float(g._doubles(1)[0])


@functools.cache
def _libm_log1pf():
    name = ctypes.util.find_library("m")
    try:
        fn = ctypes.CDLL(name).log1pf
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


def _log1p(x: float, single: bool) -> float:
    """log1p as the kernel calls it: libm's log1pf on a float, log1p on a double."""
    if not single:
        return math.log1p(x)
    fn = _libm_log1pf()
    return float(fn(x)) if fn is not None else float(np.float32(math.log1p(x)))


def _inversion(g, count: float, prob: float, r) -> float:
    logprob = _log1p(-prob, r is not float)
    geom_sum, num_geom = 0.0, 0.0
    while True:
        u = _uniform(g)
        geom = math.ceil((math.log(u) if u > 0 else -math.inf) / logprob)
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _btrs(g, count: float, prob: float, r) -> float:
    stddev = float(np.sqrt(r(r(count * prob) * r(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = r(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    ratio = r(prob / r(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(r(r(count + 1) * prob))
    while True:
        u = _uniform(g) - 0.5
        v = _uniform(g)
        us = 0.5 - abs(u)
        k = r(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (ratio * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(ratio * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= bound:
            return k


def _binomial_one(g, count: float, prob: float, single: bool) -> float:
    """One draw; `single`: the kernel's scalar_t is float (products rounded to float32)."""
    r = (lambda v: float(np.float32(v))) if single else float
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if r(count * prob) >= 10.0:
            return _btrs(g, count, prob, r)
        return _inversion(g, count, prob, r)
    if prob > 0.5:
        q = r(1.0 - prob)
        draw = _btrs(g, count, q, r) if r(count * q) >= 10.0 else _inversion(g, count, q, r)
        return r(count - draw)
    return math.nan


def binomial_sample(count: Tensor, probs: Tensor) -> Tensor:
    """Binomial(count, probs) samples, elementwise over two tensors of one shape (no
    gradient).

    NOTE: this is torch.binomial's CPU kernel; it belongs in ops/random_ops.py as
    `ember.binomial` (the distributions package owns none of the ops)."""
    from ..random import default_generator

    n = count.detach().numpy()
    p = probs.detach().numpy()
    single = n.dtype == np.float32
    vals = [_binomial_one(default_generator, a, b, single)
            for a, b in zip(n.reshape(-1).tolist(), p.reshape(-1).tolist())]
    out = np.array(vals, np.float64).astype(n.dtype).reshape(n.shape)
    return tensor(out, dtype=count.dtype, device=count.device)


def _clamp_by_zero(x: Tensor) -> Tensor:
    # clamp(x, min=0) with gradient 0.5 at 0
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryProbsLogits, Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        (total_count,) = set_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Binomial, batch_shape, _instance, "total_count")
        expand_probs_or_logits(new, self, new.batch_shape)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with _grad_mode.no_grad():
            return binomial_sample(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = (self.total_count + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (self.total_count - value + 1).lgamma()
        # k log p + (n - k) log(1 - p) = k logit - n max(logit, 0) - n log1p(e^-|logit|)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * (-self.logits.abs()).exp().log1p()
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
