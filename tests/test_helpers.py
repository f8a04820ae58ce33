"""The test helpers' own checks: assert_ulp passes what it should and fails what it should."""

import re

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

from helpers import assert_ulp, numeric_grad, ulp_of

WHY = "a reduction whose order depends on the vector width"
BITS = {np.float16: np.int16, ml_dtypes.bfloat16: np.int16, np.float32: np.int32,
        np.float64: np.int64}


def _step(values, dtype, k):
    """`values` in `dtype`, each moved k representable values up (positive inputs)."""
    a = np.asarray(values, dtype=dtype)
    return (a.view(BITS[dtype]) + k).view(dtype)


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_refuses_a_missing_reason(reason):
    with pytest.raises(ValueError, match="reason"):
        assert_ulp(np.float32(1), np.float32(1), 1, reason)


@pytest.mark.parametrize("ulps", [-1, float("nan"), float("inf")])
def test_refuses_a_bad_ulp_count(ulps):
    with pytest.raises(ValueError, match="ulps"):
        assert_ulp(np.float32(1), np.float32(1), ulps, WHY)


@pytest.mark.parametrize("dtype", list(BITS))
def test_counts_ulps_in_every_float_dtype(dtype):
    want = np.asarray([1.5, 3.25, 1e-3, 7.0], dtype=dtype)
    assert_ulp(want.copy(), want, 0, WHY)
    one, three = _step(want, dtype, 1), _step(want, dtype, 3)
    assert_ulp(one, want, 1, WHY)
    with pytest.raises(AssertionError, match="4 / 4 elements more than 0 ulps"):
        assert_ulp(one, want, 0, WHY)
    with pytest.raises(AssertionError, match=r"worst 3 ulps") as info:
        assert_ulp(three, want, 2, WHY)
    assert WHY in str(info.value)


def test_reports_the_worst_element():
    want = np.ones(5, np.float32)
    got = want.copy()
    got[1] = _step(1.0, np.float32, 2)
    got[3] = _step(1.0, np.float32, 6)
    msg = "2 / 5 elements more than 1 ulps apart (float32); worst 6 ulps at index (3,)"
    with pytest.raises(AssertionError, match=re.escape(msg)):
        assert_ulp(got, want, 1, WHY)


def test_nan_inf_and_signed_zero_must_agree_exactly():
    f = np.float32
    assert_ulp(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], f),
               np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], f), 0, WHY)
    big = f(np.finfo(f).max)
    for got, want in [(1.0, np.nan), (np.nan, 1.0), (np.inf, -np.inf), (big, np.inf),
                      (np.inf, big), (0.0, -0.0), (-0.0, 0.0)]:
        with pytest.raises(AssertionError, match="worst inf ulps"):
            assert_ulp(np.array([got], f), np.array([want], f), 1e30, WHY)


def test_scale_measures_a_cancelled_sum_in_ulps_of_its_terms():
    got, want = np.float32(1e-8), np.float32(0.0)
    with pytest.raises(AssertionError):
        assert_ulp(got, want, 1000, WHY)  # in ulps of the tiny result
    assert_ulp(got, want, 1, WHY, scale=1.0)  # in ulps of the terms' size (2**-23)
    with pytest.raises(AssertionError):
        assert_ulp(np.float32(3e-7), want, 1, WHY, scale=1.0)


def test_complex_compares_each_part():
    want = np.array([1.5 + 2.5j], np.complex64)
    got = (_step(want.real, np.float32, 2) + 1j * want.imag).astype(np.complex64)
    assert_ulp(got, want, 2, WHY)
    with pytest.raises(AssertionError, match=r"\(real part\)"):
        assert_ulp(got, want, 1, WHY)
    got = (want.real + 1j * _step(want.imag, np.float32, 2)).astype(np.complex64)
    with pytest.raises(AssertionError, match=r"\(imag part\)"):
        assert_ulp(got, want, 1, WHY)


def test_dtype_shape_and_integers():
    with pytest.raises(AssertionError, match="dtype"):
        assert_ulp(np.ones(2, np.float32), np.ones(2, np.float64), 1, WHY)
    with pytest.raises(AssertionError, match="shape"):
        assert_ulp(np.ones(2, np.float32), np.ones(3, np.float32), 1, WHY)
    with pytest.raises(TypeError, match="exactly"):
        assert_ulp(np.ones(2, np.int32), np.ones(2, np.int32), 1, WHY)


def test_tensors_and_literals():
    e = ember.tensor([0.1, 0.2], dtype=ember.bfloat16)
    t = torch.tensor([0.1, 0.2], dtype=torch.bfloat16)
    assert_ulp(e, t, 0, WHY)
    assert_ulp(ember.tensor(0.1), 0.1, 0, WHY)  # the literal rounds once to float32
    with pytest.raises(AssertionError):
        assert_ulp(ember.tensor(0.1, dtype=ember.float64), np.float64(0.1) * 1.0000001, 1, WHY)


def test_ulp_of():
    assert ulp_of(1.0, np.float32) == 2.0 ** -23
    assert ulp_of(0.75, np.float16) == 2.0 ** -11
    assert ulp_of(0.0, np.float64) == 2.0 ** -1074
    assert ulp_of(-3.0, ml_dtypes.bfloat16) == 2.0 ** -6


def test_numeric_grad_perturbs_arrays_of_any_layout():
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    got = numeric_grad(lambda t: t * t, [a], 0)
    np.testing.assert_allclose(got, 2 * a, rtol=1e-6)
