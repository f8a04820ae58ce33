"""csrc/mlx_random.c (the native twins of `_threefry`'s hash, logf, log1pf and erfinv)
against the NumPy ports bit for bit, the ports' blocked runs against their one-call runs,
and sampled `ember.mlx.core.random` draws against MLX 0.32.4 with native kernels on and off.

The twins do the same float32 / float64 steps in the same order (C's fmaf is correctly
rounded, as `_fmaf`), so every comparison here is exact; only a NaN's sign bit is left out
(it is the CPU path's, not part of MLX's contract).
"""

from fractions import Fraction

import numpy as np
import pytest

import ember.mlx.core as mx
from ember import native
from ember.mlx.core import _threefry as T

mlx = pytest.importorskip("mlx.core")


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def _edge_values() -> np.ndarray:
    """Every branch of logf, log1pf and erfinv: NaN, +-inf, +-0, subnormals, the normal boundary,
    values next to +-1 (where erfinv's tail polynomial runs), and random bit patterns."""
    one = np.float32(1)
    near_one = np.nextafter(one, np.float32(0)) - np.arange(0, 3000, dtype=np.float32) * 2**-24
    rng = np.random.default_rng(7)
    return np.concatenate([
        np.array([0, -0.0, 1, -1, 2, -2, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45,
                  1e-40, 1.1754942e-38, 1.1754944e-38, 3.4e38, 0.5, 6.125, 0.9986501,
                  0.41422, 0.41421, -0.29289, -0.2929, 2**-29, -(2**-29), 2**-54, 2**-55,
                  9e15, 1e16, 1 + 2**-23, 2**-20, -(2**-20), 3, 7, 2**24 - 1, 1 - 2**-23,
                  3 - 2**-22],
                 np.float32),
        near_one, -near_one, 1 - rng.uniform(0, 2e-3, 3000).astype(np.float32),
        rng.integers(0, 2**32, 60_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
        rng.uniform(-1, 1, 60_000).astype(np.float32),
    ]).astype(np.float32)


@pytest.fixture
def native_for_every_size(monkeypatch):
    if native.library("mlx_random") is None:
        pytest.skip("no native kernels here")
    monkeypatch.setitem(T.NATIVE_MIN, "elements", 0)


def test_logf_log1pf_and_erfinv_twins_are_the_ports_bit_for_bit(native_for_every_size):
    x = _edge_values()
    with np.errstate(invalid="ignore"):  # (signalling NaNs among the bit patterns)
        tail = np.abs(T._logf(T._fmaf(x, -x, 1))) > 6.125
    assert np.count_nonzero(tail) > 1000  # (erfinv's tail polynomial runs)
    twins = ((T.erfinv_f32, T._erfinvf), (T.log_f32, T._logf), (T.log1p_f32, T._log1pf))
    for twin, port in twins:
        _same(twin(x), port(x))
        for n in (0, 1, 2, 7, 17, 255, 4097):  # (sizes off every vector width and block)
            part = x[-n:] if n else x[:0]
            _same(twin(part), port(part))
        _same(twin(x[:6].reshape(2, 3)), port(x[:6].reshape(2, 3)))
        _same(twin(np.float32(0.25)), port(np.float32(0.25)))


def test_threefry_words_twin_is_the_port_for_every_width_and_count(native_for_every_size):
    for seed in (0, 2**64 - 1):
        k = T.key(seed)
        for n in (0, 1, 2, 3, 5, 8, 9, 4097, 70_001):
            for width in (1, 2, 4):
                got = T.bits(k, (n,), width)
                with native.use("numpy"):
                    want = T.bits(k, (n,), width)
                assert got.dtype == want.dtype and np.array_equal(got, want), (seed, n, width)
    sub = T.split(T.key(5), 3)[1]  # (a key that is a row of another array)
    got = T.bits(sub, (3, 5))
    with native.use("numpy"):
        assert np.array_equal(got, T.bits(sub, (3, 5)))


def test_blocked_numpy_runs_equal_one_call():
    # Over T._BLOCK values the NumPy ports run a block at a time (and the hash a block of
    # counters at a time): the same values as one call over everything.
    n = 2 * T._BLOCK + 3
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    with native.use("numpy"):
        _same(T.erfinv_f32(x), T._erfinvf(x))
        _same(T.log_f32(np.abs(x)), T._logf(np.abs(x)))
        k = T.key(9)
        words = T._words(k, 2 * n + 1)
    half = n
    counter = np.arange(half, dtype=np.uint32)
    x0, x1 = T._threefry2x32(k, counter, counter + np.uint32(half + 1))
    assert np.array_equal(words[:half], x0) and np.array_equal(words[half + 1 :], x1)
    assert words[half] == T._threefry2x32(k, np.array([half], np.uint32), np.array([0]))[0][0]


def test_fmaf_rounds_a_halfway_product_towards_the_addend():
    # a * b lands exactly halfway between two floats and c is below double precision there:
    # the double sum is the halfway point, and only c's sign says which way fmaf rounds.
    a, b = np.float32(1 + 3 * 2**-12), np.float32(1 + 5 * 2**-12)
    got = []
    for c in (np.float32(2.0**-60), np.float32(-(2.0**-60))):
        exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
        guess = np.float32(float(exact))
        steps = (np.nextafter(guess, np.float32(-np.inf)), guess,
                 np.nextafter(guess, np.float32(np.inf)))
        got.append(T._fmaf(a, b, c))
        assert got[-1] == min(steps, key=lambda v: abs(Fraction(float(v)) - exact))
    assert got[0] > got[1]  # (rounding the double sum to float32 gives one value for both)


def _draws(m):
    """A few samplers over 5001 values (past the native gate) and one small call."""
    key = m.random.key(31)
    return [
        m.random.normal((5001,), key=key),
        m.random.normal((3,), m.float16, loc=1.0, scale=2.0, key=key),
        m.random.normal((2501,), m.complex64, key=key),
        m.random.uniform(-2.0, 3.0, (5001,), key=key),
        m.random.uniform(shape=(5001,), dtype=m.bfloat16, key=key),
        m.random.truncated_normal(-1.5, 0.5, (5001,), key=key),
        m.random.gumbel((5001,), key=key),
        m.random.laplace((5001,), key=key),
        m.random.bernoulli(0.3, (5001,), key=key),
        m.random.randint(-7, 100, (5001,), key=key),
        m.random.split(key, 2049),
    ]


@pytest.mark.parametrize("mode", ["native", "numpy"])
def test_samplers_draw_mlxs_numbers(mode):
    theirs = [np.array(a.view(mlx.uint16) if a.dtype == mlx.bfloat16 else a) for a in
              _draws(mlx)]
    with native.use(mode):
        ours = [np.array(a.view(mx.uint16) if a.dtype == mx.bfloat16 else a) for a in
                _draws(mx)]
    for got, want in zip(ours, theirs):
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
