"""csrc/erfinv.c (float64 erfinv in C) against the NumPy kernel it twins
(`unary_math._erfinv64`) and against torch. The NumPy kernel's erf and erfc are ember's
own fits (a few ulps) where the C one takes the C library's, so their roots differ in the
last bits: within a few ulps of each other, and the C one within 2 ulps of torch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import unary_math as U
from native._differential import assert_bits, threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

EDGES = np.array([0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 5e-324, -5e-324,
                  0.5, np.nextafter(0.5, 1), np.nextafter(0.5, 0), 1 - 2.0**-53, -1 + 2.0**-53])


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    tails = 1 - 10.0 ** rng.uniform(-16, 0, 2000)
    return np.concatenate([EDGES, rng.uniform(-1, 1, 6000), tails, -tails,
                           10.0 ** rng.uniform(-320, 0, 1000)])


def test_erfinv_float64_matches_the_numpy_kernel_and_torch():
    fn, nat = native.twins(U.erfinv_p)
    lib = native.library("math_maps")
    x = _inputs()
    with np.errstate(all="ignore"):
        want = fn(x)
    got = nat(lib, x)
    for n in (0, 1, 15, 16, 17, len(x)):  # (any size, any thread count: the same values)
        for t in (1, 2):
            with threads(t):
                assert_bits(nat(lib, x[:n]), got[:n])
    m = len(EDGES) - 2  # (the last two edges, 1 - 2^-53 and its negative, are tail values)
    assert_bits(got[:m], want[:m])  # (zeros keep their sign, +-1 give +-inf, NaN outside)
    # (the NumPy kernel's fits go through NumPy's exp and log, whose SIMD loops differ by
    # CPU: 1 ulp off at 1 - 2^-53 on an AMD EPYC Zen 3, equal on the AVX-512 machines)
    err = np.abs(got[m:] - want[m:]) / np.spacing(np.abs(want[m:]))
    assert err.max() <= 8, err.max()
    ref = torch.from_numpy(x[m:]).erfinv().numpy()
    assert (np.abs(got[m:] - ref) / np.spacing(np.abs(ref))).max() <= 2


def test_erfinv_op_runs_native_on_strided_float64():
    x = ember.tensor(_inputs()[16:4016]).reshape(40, 100).t()  # (a transposed view)
    got = x.erfinv().numpy()
    assert_bits(got, native.twins(U.erfinv_p)[1](native.library("math_maps"),
                                                  np.ascontiguousarray(x.numpy())))
