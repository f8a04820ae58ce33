"""PyTorch's Cephes-derived modified Bessel functions of the second kind K0, K1 (plain and
exp-scaled), replayed in the input's own precision: the kernels of `special_ops.py`'s
modified_bessel_k0 / _k1 and scaled_modified_bessel_k0 / _k1.

PyTorch sums Chebyshev series in the tensor's dtype: in x^2 - 2 up to x = 2 (with the log
term log(x/2) I_nu(x), I_nu from its modified_bessel_i* forms), in 8/x - 2 beyond. (ember's
earlier float64 series and integrals were closer to the true values but 1-60 ulps from
PyTorch's.) These take PyTorch's steps, order and FMA contractions (per
`ember.random.get_kernel_profile()`), and the C library's exp and log, so results match
PyTorch's bit for bit. One quirk kept: float32 K0 below 2 forms its log term in double
(PyTorch writes `std::log(0.5 * x)` with a double 0.5) and rounds the difference once.
The coefficient tables are Cephes' (3-clause BSD, as PyTorch's ATen/native/Math.h cites).
"""

from __future__ import annotations

import numpy as np

from ._cephes_bessel import _chbevl, _dtype_kernel, _i_family, libm
from ._fma import fma
from ._rng_kernels import avx2

_K0_A = (
    1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11,
    1.904516377220209e-09, 2.5347910790261494e-07, 2.286212103119452e-05,
    0.001264615411446926, 0.0359799365153615, 0.3442898999246285, -0.5353273932339028)
_K0_B = (
    5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17,
    -1.678231096805412e-16, 5.512055978524319e-16, -1.848593377343779e-15,
    6.3400764774050706e-15, -2.2275133269916698e-14, 8.032890775363575e-14,
    -2.9800969231727303e-13, 1.140340588208475e-12, -4.514597883373944e-12,
    1.8559491149547177e-11, -7.957489244477107e-11, 3.577397281400301e-10,
    -1.69753450938906e-09, 8.574034017414225e-09, -4.660489897687948e-08,
    2.766813639445015e-07, -1.8317555227191195e-06, 1.39498137188765e-05,
    -0.00012849549581627802, 0.0015698838857300533, -0.0314481013119645, 2.4403030820659555)
_K1_A = (
    -7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13,
    -1.4114883926335278e-10, -2.213387630734726e-08, -2.4334061415659684e-06,
    -0.0001730288957513052, -0.006975723859639864, -0.12261118082265715,
    -0.3531559607765449, 1.5253002273389478)
_K1_B = (
    -5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17,
    1.838093544366639e-16, -6.057047248373319e-16, 2.038703165624334e-15,
    -7.019837090418314e-15, 2.4771544244813043e-14, -8.976705182324994e-14,
    3.3484196660784293e-13, -1.2891739609510289e-12, 5.13963967348173e-12,
    -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10,
    2.015049755197033e-09, -1.0345762465678097e-08, 5.7410841254500495e-08,
    -3.5019606030878126e-07, 2.406484947837217e-06, -1.936197974166083e-05,
    0.00019521551847135162, -0.002857816859622779, 0.10392373657681724, 2.7206261904844427)


def _k(x: np.ndarray, nu: int, scaled: bool) -> np.ndarray:
    t = x.dtype.type
    fused = avx2()
    out = np.empty_like(x)
    small = x <= 2  # (NaN takes the large-x branch and stays NaN)
    with np.errstate(all="ignore"):
        xs = x[small]
        w = fma(xs, xs, np.full_like(xs, t(-2))) if fused else xs * xs - t(2)
        c = _chbevl(w, _K0_A if nu == 0 else _K1_A, fused)
        i = _i_family(xs, nu, False, modified=True)
        if nu == 0 and not scaled:
            # c - log(0.5 x) I0(x), in double for either dtype (see the module's note)
            lg = libm("log", 0.5 * xs.astype(np.float64))
            c64, i64 = c.astype(np.float64), i.astype(np.float64)
            ks = (fma(-lg, i64, c64) if fused else c64 - lg * i64).astype(x.dtype)
        else:
            lg = libm("log", t(0.5) * xs)
            if nu == 0:  # (c - log(x/2) I0(x)) e^x
                ks = fma(-lg, i, c) if fused else c - lg * i
            else:  # log(x/2) I1(x) + c / x
                ks = fma(lg, i, c / xs) if fused else lg * i + c / xs
            if scaled:
                ks = ks * libm("exp", xs)
        out[small] = ks
        xl = x[~small]
        cl = _chbevl(t(8) / xl - t(2), _K0_B if nu == 0 else _K1_B, fused)
        out[~small] = (cl if scaled else libm("exp", -xl) * cl) / np.sqrt(xl)
    out[x == 0] = np.inf
    out[x < 0] = np.nan
    return out


@_dtype_kernel
def k0(x: np.ndarray) -> np.ndarray:
    return _k(x, 0, False)


@_dtype_kernel
def k1(x: np.ndarray) -> np.ndarray:
    return _k(x, 1, False)


@_dtype_kernel
def k0e(x: np.ndarray) -> np.ndarray:
    return _k(x, 0, True)


@_dtype_kernel
def k1e(x: np.ndarray) -> np.ndarray:
    return _k(x, 1, True)
