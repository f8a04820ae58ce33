"""The bit-level arithmetic behind the random kernels, checked against exact arithmetic."""

from fractions import Fraction

import numpy as np

from ember.ops import _rng_math as M


def rn(exact: Fraction, dtype) -> float:
    """`exact` rounded to nearest-even in `dtype`, by exhaustive neighbour comparison."""
    guess = dtype(float(exact))
    cands = [guess, np.nextafter(guess, dtype(np.inf)), np.nextafter(guess, dtype(-np.inf))]
    best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                     int(np.array(v).view(np.uint32 if dtype is np.float32
                                                          else np.uint64)) & 1))
    return best


def test_fma32_rounds_once_even_where_float64_would_round_twice():
    f = np.float32
    # exact = 2^30 + 2^7 + 2^6 - 2^-40: just below the midpoint between 2^30 + 2^7 (odd)
    # and 2^30 + 2^8. Rounding through float64 lands on the midpoint and then on 2^30 + 2^8.
    a, b, c = f(2.0**6 * (1 + 2.0**-23)), f(1 - 2.0**-23), f(2.0**30 + 2.0**7)
    naive = (np.float64(a) * np.float64(b) + np.float64(c)).astype(f)
    got = M.fma32(np.array([a]), b, c)[0]
    want = rn(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)), f)
    assert got == want == f(2.0**30 + 2.0**7) and naive != want


def test_fma32_and_fma64_against_exact_arithmetic():
    rng = np.random.default_rng(0)
    for dtype, fma in ((np.float32, M.fma32), (np.float64, M.fma64)):
        a = rng.standard_normal(300).astype(dtype)
        b = rng.standard_normal(300).astype(dtype)
        c = (rng.standard_normal(300) * 10.0 ** rng.integers(-8, 8, 300)).astype(dtype)
        got = fma(a, b, c)
        for i in range(300):
            exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
            assert got[i] == rn(exact, dtype), (dtype, a[i], b[i], c[i])


def test_randperm_swaps_is_the_sequential_shuffle():
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 7, 50, 513):
        z = np.array([rng.integers(0, n - i) for i in range(n - 1)], np.int64)
        r = list(range(n))
        for i in range(n - 1):
            j = i + int(z[i])
            r[i], r[j] = r[j], r[i]
        assert M.randperm_swaps(z, n).tolist() == r


def test_cephes_log_is_close_to_the_true_log():
    # Bit-exactness against torch is covered through randn; here: it is a log.
    x = np.linspace(2.0**-24, 1.0, 10001).astype(np.float32)
    np.testing.assert_allclose(M.log_f32(x), np.log(x.astype(np.float64)), rtol=2e-7,
                               atol=1e-7)
    theta = np.linspace(0, 2 * np.pi, 10001).astype(np.float32)
    sin, cos = M.sincos_f32(theta)
    np.testing.assert_allclose(sin, np.sin(theta.astype(np.float64)), atol=2e-7)
    np.testing.assert_allclose(cos, np.cos(theta.astype(np.float64)), atol=2e-7)
