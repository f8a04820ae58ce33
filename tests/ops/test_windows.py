"""The window functions against torch: hann, hamming, blackman, bartlett and kaiser, periodic
and symmetric, every length class (0, 1, 2, odd, even, long), dtypes, factory arguments and
errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same

NAMES = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
         "kaiser_window"]
LENGTHS = [0, 1, 2, 5, 6, 64, 401]


@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_windows_match_torch(name, periodic):
    # bartlett is exact arithmetic: bit for bit in float32 / float64. The others go through
    # cos (or i0 for kaiser), a transcendental: float32 within an ulp or two of the window's
    # peak, float64 within a few ulps. float16 rounds each step: within 3 half ulps.
    for n in LENGTHS:
        for d, tol in (("float64", (1e-14, 1e-15)), ("float32", (0, 5e-7)),
                       ("float16", (0, 3 * 2.0 ** -10))):
            if name == "bartlett_window" and d != "float16":
                tol = (0, 0)
            if name == "kaiser_window" and d == "float32":
                # torch sums i0's Chebyshev series in float32 (a few ulps off), ember's i0
                # in float64 rounded once: the ratio of two of them, ~8 float32 ulps apart
                tol = (2e-6, 1e-7)
            got = getattr(ember, name)(n, periodic, dtype=getattr(ember, d))
            want = getattr(torch, name)(n, periodic, dtype=getattr(torch, d))
            assert_same(got, want, *tol)


def test_window_parameters_and_defaults_match_torch():
    assert_same(ember.hann_window(8), torch.hann_window(8), 0, 5e-7)
    assert_same(ember.hamming_window(7, False, 0.6, 0.3), torch.hamming_window(7, False, 0.6, 0.3),
                0, 5e-7)
    for beta in (0.0, 3.0, 12.0, 30.0):
        assert_same(ember.kaiser_window(9, False, beta, dtype=ember.float64),
                    torch.kaiser_window(9, False, beta, dtype=torch.float64), 1e-14, 0)
    w = ember.kaiser_window(5, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.dtype is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.bartlett_window(4).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    assert np.array_equal(ember.hann_window(6, periodic=True).numpy(),
                          ember.hann_window(7, periodic=False).numpy()[:-1])


@pytest.mark.parametrize("name", NAMES)
def test_window_errors_as_torch(name):
    for args, kw in (((-1,), {}), ((5,), {"dtype": "int64"}), ((5,), {"dtype": "complex64"}),
                     ((5.0,), {})):
        def call(m, args=args, kw=kw):
            k = {key: getattr(m, v) for key, v in kw.items()}
            return getattr(m, name)(*args, **k)

        with pytest.raises(Exception) as et:
            call(torch)
        with pytest.raises(type(et.value)) as ee:
            call(ember)
        assert str(ee.value) == str(et.value)
