"""PyTorch's Hurwitz zeta (Cephes' zeta) and polygamma of order >= 2, replayed step for step:
the kernels of `special_ops.py`'s special.zeta and polygamma(n >= 2).

zeta(x, q) = sum_k (q + k)^-x: direct terms until at least nine are taken and the shift
passes 9 (stopping early once a term falls below double epsilon of the sum), then the
Euler-Maclaurin tail with Bernoulli-number coefficients. PyTorch accumulates in double for
float32 too (its CPU acc_type), but takes the first term with the input dtype's pow (powf).
polygamma(n, x) = (-1)^(n+1) exp(lgamma(n + 1)) zeta(n + 1, x), with the C library's
lgamma and exp in the input's dtype, so its n! is not exact. Nothing here is contracted or
vectorised by PyTorch's build, so results match PyTorch's bit for bit; ember's own zeta
(`_special_math`, which still serves its lgamma's coefficients) was 1-6 ulps away.
"""

from __future__ import annotations

import numpy as np

from ._cephes_bessel import libm

_F64 = np.float64
_MACHEP = 1.11022302462515654042e-16
_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
      1.8152105401943546773e17, -7.1661652561756670113e18)  # (2k)! / B_2k


def _pow(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """C's double pow (NumPy's own float64 power differs from glibc's in the last bit of
    some values)."""
    return libm("pow", a, e)


def _zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """zeta(x, q) for equal-shaped 1-d float32 or float64 arrays, in their dtype."""
    out = np.full(x.shape, np.nan, _F64)
    with np.errstate(all="ignore"):
        # (C's order: x = 1, x < 1, then a pole in q, which a NaN x reaches)
        pole = (x == 1) | (~(x < 1) & (q <= 0) & (q == np.floor(q)))
        out[pole] = np.inf
        ok = ~(x == 1) & ~(x < 1) & ~pole & ~((q <= 0) & (x != np.floor(x)))
        live = np.nonzero(ok)[0]
        x64, q64 = x.astype(_F64), q.astype(_F64)
        # the first term in the input's dtype (std::pow of two scalar_t), the rest in double
        s = np.zeros(x.shape, _F64)
        s[live] = libm("pow", q[live], -x[live]).astype(_F64)
        a, b = q64.copy(), np.zeros(x.shape, _F64)
        i = 0
        while live.size:
            go = (i < 9) | (a[live] <= 9)
            live = live[go]
            if not live.size:
                break
            i += 1
            a[live] += 1
            b[live] = _pow(a[live], -x64[live])
            s[live] += b[live]
            sl, bl = s[live], b[live]
            conv = (-_MACHEP * sl < bl) & (bl < _MACHEP * sl)
            out[live[conv]] = sl[conv]
            ok[live[conv]] = False
            live = live[~conv]
        tail = np.nonzero(ok)[0]
        xt, w, bt, st = x64[tail], a[tail], b[tail], s[tail]
        st = st + bt * w / (xt - 1)
        st = st - 0.5 * bt
        at, k = np.ones_like(xt), 0.0
        done = np.zeros(tail.shape, bool)
        for coef in _A:
            at = at * (xt + k)
            bt = bt / w
            t = at * bt / coef
            st = np.where(done, st, st + t)
            done |= np.abs(t / st) < _MACHEP
            k += 1
            at = at * (xt + k)
            bt = bt / w
            k += 1
        out[tail] = st
    return out.astype(x.dtype)


def zeta(x: np.ndarray, q: np.ndarray, dtype=None) -> np.ndarray:
    """The binary kernel (`_via64`: float64, and as `.float32` float32 / 16-bit)."""
    x, q = (np.ascontiguousarray(v).ravel() for v in np.broadcast_arrays(x, q))
    return _zeta(x, q)


zeta.float32 = zeta


def polygamma_high(x: np.ndarray, n: int) -> np.ndarray:
    """calc_polygamma for n >= 2 in x's dtype: +-exp(lgamma(n + 1)) zeta(n + 1, x)."""
    t = x.dtype.type
    fact = libm("exp", libm("lgamma", np.array([t(n) + t(1)])))[0]
    sign = t(1) if n % 2 else t(-1)
    z = _zeta(np.full(x.shape, t(n + 1)).ravel(), x.ravel()).reshape(x.shape)
    with np.errstate(all="ignore"):
        return sign * fact * z
