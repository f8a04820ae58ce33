"""`_threefry` (MLX's PRNG in NumPy) against MLX 0.32.4, bit for bit.

Each sampler is called with the same key on both sides and the raw bytes compared.
The float kernels MLX's samplers use (glibc's logf/log1pf, MLX's exp/erf/erfinv) are
checked on their own first, on a few million inputs, since every sampler above them
inherits their exactness.
"""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from ember.mlx.core import _threefry as T

mx_ref = pytest.importorskip("mlx.core")

BF16 = ml_dtypes.bfloat16
FLOATS = [
    (np.float32, mx_ref.float32),
    (np.float16, mx_ref.float16),
    (BF16, mx_ref.bfloat16),
]
SHAPES = [(), (0,), (1,), (3,), (3, 4), (5, 3), (2, 3, 5), (10001,)]


def ref_np(x) -> np.ndarray:
    """An MLX array as NumPy (bfloat16 through its bits: NumPy cannot read it directly)."""
    if x.dtype == mx_ref.bfloat16:
        return np.array(x.view(mx_ref.uint16)).view(BF16)
    return np.array(x)


def assert_same_bits(ours: np.ndarray, ref) -> None:
    ref = ref_np(ref)
    assert ours.shape == ref.shape
    assert ours.dtype == ref.dtype
    assert np.array_equal(ours.reshape(-1).view(np.uint8), ref.reshape(-1).view(np.uint8))


def keys(seed: int):
    return T.key(seed), mx_ref.random.key(seed)


# -- threefry, keys, split, bits ---------------------------------------------------------


def test_threefry_matches_random123_known_answers():
    # threefry2x32-20 test vectors from Random123's kat_vectors (also used by JAX).
    cases = [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ]
    for key, (c0, c1), expected in cases:
        x0, x1 = T._threefry2x32(np.array(key, np.uint32), np.array([c0]), np.array([c1]))
        assert (int(x0[0]), int(x1[0])) == expected


@pytest.mark.parametrize("seed", [0, 1, 42, 2**32 + 5, 2**63 + 12345, 2**64 - 1])
def test_key_is_the_two_halves_of_the_seed(seed):
    ours, ref = keys(seed)
    assert_same_bits(ours, ref)
    assert ours.tolist() == [seed >> 32, seed & 0xFFFFFFFF]


@pytest.mark.parametrize("num", [0, 1, 2, 3, 7, 1000])
def test_split(num):
    ours, ref = keys(2024)
    assert_same_bits(T.split(ours, num), mx_ref.random.split(ref, num))


def test_split_of_a_split_key():
    ours, ref = keys(3)
    sub, sub_ref = T.split(ours, 3)[2], mx_ref.random.split(ref, 3)[2]
    assert_same_bits(T.split(sub, 5), mx_ref.random.split(sub_ref, 5))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 101, 10001])
def test_bits_odd_and_even_word_counts(n):
    # MLX's Python API has no `bits`; uniform is float32(bits) / 2**32, which keeps
    # enough of every word to tell a wrong word order (the odd-count middle word
    # comes from counter (n // 2, 0)) from the right one.
    ours, ref = keys(11)
    expected = ref_np(mx_ref.random.uniform(shape=(n,), key=ref))
    raw = T.bits(ours, (n,))
    assert raw.dtype == np.uint32
    assert np.array_equal(
        np.minimum(raw.astype(np.float32) / np.float32(2**32), expected), expected
    )
    assert_same_bits(T.uniform(ours, 0.0, 1.0, (n,)), mx_ref.random.uniform(shape=(n,), key=ref))


@pytest.mark.parametrize("width,dtype", [(1, np.uint8), (2, np.uint16)])
@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 8, 9, 13, 4001])
def test_narrow_bits_are_the_bytes_of_the_same_word_count(width, dtype, size):
    # The kernel hashes ceil(size * width / 4) words and returns their leading bytes
    # (mlx/backend/cpu/primitives.cpp, RandomBits::eval_cpu).
    k = T.key(5)
    words = T.bits(k, (-(-size * width // 4),))
    narrow = T.bits(k, (size,), width)
    assert narrow.dtype == dtype and narrow.shape == (size,)
    assert np.array_equal(narrow, words.view(dtype)[:size])


def test_bits_shape_and_errors():
    k = T.key(0)
    assert T.bits(k, (2, 3, 4)).shape == (2, 3, 4)
    assert T.bits(k, ()).shape == ()
    with pytest.raises(ValueError, match=r"\[bits\] Negative dimensions not allowed\."):
        T.bits(k, (-1,))
    with pytest.raises(ValueError, match=r"Bit width must be in \{1, 2, 4\} but got 3\."):
        T.bits(k, (2,), 3)
    with pytest.raises(ValueError, match=r"Expected key type uint32 but received int32\."):
        T.bits(k.astype(np.int32), (2,))
    with pytest.raises(ValueError, match=r"Expected key shape \(2\) but received \(3\)\."):
        T.bits(np.zeros(3, np.uint32), (2,))


# -- the float kernels under the samplers --------------------------------------------------


def _float_inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    every_bit_pattern = rng.integers(0, 2**32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    specials = np.array(
        [0, -0.0, 1, -1, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, 88, -88]
        + [88.5, -88.5, 3.4e38, 6.125, -6.125],
        np.float32,
    )
    return np.concatenate(
        [
            every_bit_pattern.view(np.float32),
            rng.uniform(-1, 1, 1_000_000).astype(np.float32),
            rng.uniform(-100, 100, 200_000).astype(np.float32),
            specials,
        ]
    )


@pytest.mark.parametrize(
    "ours,ref",
    [
        (T._logf, mx_ref.log),
        (T._log1pf, mx_ref.log1p),
        (T._expf, mx_ref.exp),
        (T._erff, mx_ref.erf),
        (T._erfinvf, mx_ref.erfinv),
    ],
    ids=["log", "log1p", "exp", "erf", "erfinv"],
)
def test_float32_kernels_match_mlx_bit_for_bit(ours, ref):
    x = _float_inputs()
    got, want = ours(x), ref_np(ref(mx_ref.array(x)))
    both_nan = np.isnan(got) & np.isnan(want)
    assert np.array_equal(got.view(np.uint32)[~both_nan], want.view(np.uint32)[~both_nan])
    assert np.array_equal(np.isnan(got), np.isnan(want))


def test_logf_is_glibcs_not_the_correctly_rounded_log():
    # ~1% of glibc's logf results are one ulp off the correctly rounded value;
    # MLX inherits them, so the port must too.
    x = np.linspace(0.5, 2.0, 200_001, dtype=np.float32)
    rounded = np.log(x.astype(np.float64)).astype(np.float32)
    mlx_log = ref_np(mx_ref.log(mx_ref.array(x)))
    assert np.count_nonzero(rounded != mlx_log) > 0
    assert np.array_equal(T._logf(x), mlx_log)


def _nearest_float32(q: Fraction) -> np.float32:
    """The float32 nearest the rational ``q`` (ties to even), found exactly."""
    guess = np.float32(float(q))
    best = None
    for cand in (np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.inf)):
        err = abs(Fraction(float(cand)) - q)
        even = int(cand.view(np.uint32)) % 2 == 0
        if best is None or err < best[0] or (err == best[0] and even):
            best = (err, cand)
    return best[1]


def test_fmaf_rounds_once():
    rng = np.random.default_rng(1)
    a, b, c = (rng.normal(size=300).astype(np.float32) for _ in range(3))
    # Cases where rounding a*b+c to double and then to float would be off by one:
    # an exact float32 tie plus a tiny term below double precision.
    one = np.float32(1)
    tie = np.float32(1 + 2**-23)
    a = np.concatenate([a, [tie, tie]]).astype(np.float32)
    b = np.concatenate([b, [tie, -tie]]).astype(np.float32)
    c = np.concatenate([c, [-one, one]]).astype(np.float32)
    got = T._fmaf(a, b, c)
    for ai, bi, ci, gi in zip(a, b, c, got):
        exact = Fraction(float(ai)) * Fraction(float(bi)) + Fraction(float(ci))
        assert gi == _nearest_float32(exact)


# -- samplers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("np_dt,mx_dt", FLOATS, ids=["float32", "float16", "bfloat16"])
def test_uniform_scalar_bounds(shape, np_dt, mx_dt):
    ours, ref = keys(42)
    assert_same_bits(
        T.uniform(ours, 0.0, 1.0, shape, np_dt),
        mx_ref.random.uniform(shape=shape, dtype=mx_dt, key=ref),
    )
    assert_same_bits(
        T.uniform(ours, -3.5, 2.25, shape, np_dt),
        mx_ref.random.uniform(-3.5, 2.25, shape, dtype=mx_dt, key=ref),
    )


@pytest.mark.parametrize("np_dt,mx_dt", FLOATS, ids=["float32", "float16", "bfloat16"])
def test_uniform_array_bounds_broadcast(np_dt, mx_dt):
    ours, ref = keys(8)
    low = np.array([0.0, 1.0, -2.0], np.float32)
    high = np.array([[1.0], [5.0]], np.float32)
    assert_same_bits(
        T.uniform(ours, low, high, (2, 3), np_dt),
        mx_ref.random.uniform(mx_ref.array(low), mx_ref.array(high), (2, 3), mx_dt, key=ref),
    )
    ints = np.array([0, 10], np.int32)
    assert_same_bits(
        T.uniform(ours, ints, 100, (4, 2), np_dt),
        mx_ref.random.uniform(mx_ref.array(ints), 100, (4, 2), mx_dt, key=ref),
    )


def test_uniform_stays_below_high():
    # Words near 2**32 map to 1.0 in float32 before the clamp to nextafter(1, 0).
    k = T.key(0)
    for dt in (np.float32, np.float16, BF16):
        assert T.uniform(k, 0.0, 1.0, (10001,), dt).astype(np.float32).max() < 1


def test_uniform_errors():
    k = T.key(0)
    with pytest.raises(ValueError, match=r"Cannot generate random values of shape \(\) from"):
        T.uniform(k, np.zeros(3, np.float32), 1.0, ())
    with pytest.raises(ValueError, match=r"\[broadcast_shapes\] Shapes \(2\) and \(3\)"):
        T.uniform(k, np.zeros(3, np.float32), 1.0, (2,))
    with pytest.raises(ValueError, match=r"only generate uniform numbers with real floating"):
        T.uniform(k, 0, 1, (2,), np.int32)
    with pytest.raises(RuntimeError, match=r"\[uniform\] Unsupported type\."):
        T.uniform(k, 0, 1, (2,), np.float64)


@pytest.mark.parametrize("shape", SHAPES)
def test_randint(shape):
    ours, ref = keys(9)
    assert_same_bits(T.randint(ours, -5, 17, shape), mx_ref.random.randint(-5, 17, shape, key=ref))


def test_randint_dtypes_and_array_bounds():
    ours, ref = keys(10)
    low = np.array([0, 10, -100], np.int32)
    assert_same_bits(
        T.randint(ours, low, 1000, (4, 3)),
        mx_ref.random.randint(mx_ref.array(low), 1000, (4, 3), key=ref),
    )
    assert_same_bits(
        T.randint(ours, 0, 255, (300,), np.uint8),
        mx_ref.random.randint(0, 255, (300,), dtype=mx_ref.uint8, key=ref),
    )
    assert_same_bits(
        T.randint(ours, -(2**31), 2**31 - 1, (1000,)),
        mx_ref.random.randint(-(2**31), 2**31 - 1, (1000,), key=ref),
    )
    assert_same_bits(
        T.randint(ours, 0.5, 10.5, (50,)), mx_ref.random.randint(0.5, 10.5, (50,), key=ref)
    )


@pytest.mark.parametrize("shape", SHAPES)
def test_bernoulli(shape):
    ours, ref = keys(12)
    assert_same_bits(T.bernoulli(ours, 0.3, shape), mx_ref.random.bernoulli(0.3, shape, key=ref))


def test_bernoulli_array_p():
    ours, ref = keys(13)
    p = np.array([0.0, 0.2, 0.5, 1.0, 1.5], np.float32)
    assert_same_bits(
        T.bernoulli(ours, p, (3, 5)), mx_ref.random.bernoulli(mx_ref.array(p), (3, 5), key=ref)
    )
    assert_same_bits(T.bernoulli(ours, p), mx_ref.random.bernoulli(mx_ref.array(p), key=ref))
    got = T.bernoulli(ours, p, (1000, 5))
    assert not got[:, 0].any() and got[:, 3].all()
    p16 = p.astype(np.float16)
    assert_same_bits(T.bernoulli(ours, p16), mx_ref.random.bernoulli(mx_ref.array(p16), key=ref))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("np_dt,mx_dt", FLOATS, ids=["float32", "float16", "bfloat16"])
def test_gumbel(shape, np_dt, mx_dt):
    ours, ref = keys(14)
    assert_same_bits(T.gumbel(ours, shape, np_dt), mx_ref.random.gumbel(shape, mx_dt, key=ref))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 10001])
def test_permutation_of_an_int(n):
    ours, ref = keys(15)
    perm = T.permutation(ours, n)
    assert_same_bits(perm, mx_ref.random.permutation(n, key=ref))
    assert np.array_equal(np.sort(perm), np.arange(n))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_permutation_of_an_array(axis):
    ours, ref = keys(16)
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    assert_same_bits(
        T.permutation(ours, x, axis), mx_ref.random.permutation(mx_ref.array(x), axis, key=ref)
    )


LOGITS = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"axis": 0}, {"shape": (3, 4)}, {"num_samples": 5}, {"axis": 0, "num_samples": 3}],
)
def test_categorical_gumbel_max_path(kwargs):
    ours, ref = keys(17)
    assert_same_bits(
        T.categorical(ours, LOGITS, **kwargs),
        mx_ref.random.categorical(mx_ref.array(LOGITS), key=ref, **kwargs),
    )


@pytest.mark.parametrize(
    "logits",
    [LOGITS[0], LOGITS[:1], np.array([-np.inf, 0, np.inf, np.inf], np.float32)],
    ids=["1d", "1xn", "infinite"],
)
@pytest.mark.parametrize("kwargs", [{"shape": (7,)}, {"shape": (3, 5)}, {"num_samples": 10001}])
def test_categorical_inverse_cdf_path(logits, kwargs):
    # One distribution with an explicit sample shape: MLX searches a CDF instead.
    ours, ref = keys(18)
    assert_same_bits(
        T.categorical(ours, logits, **kwargs),
        mx_ref.random.categorical(mx_ref.array(logits), key=ref, **kwargs),
    )


def test_categorical_errors():
    k = T.key(0)
    with pytest.raises(IndexError, match=r"Invalid axis 2 for logits with 2 dimensions"):
        T.categorical(k, LOGITS, axis=2)
    with pytest.raises(ValueError, match=r"At most one of shape or num_samples"):
        T.categorical(k, LOGITS, shape=(4,), num_samples=2)
    with pytest.raises(ValueError, match=r"\[argmax\] Cannot argmax reduce zero size array"):
        T.categorical(k, np.zeros(0, np.float32), shape=(3,))


# -- the erfinv family: at most 1 ulp from MLX, and in fact bit for bit ---------------------


def ulps(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place, on the sign-magnitude integer line."""
    width = {2: np.int16, 4: np.int32, 8: np.int64}[ours.dtype.itemsize]

    def line(x):
        i = x.reshape(-1).view(width).astype(np.int64)
        return np.where(i < 0, np.iinfo(width).min - i, i)

    return np.abs(line(ours) - line(ref_np(ref)))


def assert_within_one_ulp_and_exact(ours: np.ndarray, ref) -> None:
    assert ours.shape == tuple(ref.shape)
    d = ulps(ours, ref)
    assert d.size == 0 or d.max() <= 1
    # NOTE: exact here because glibc's logf/log1pf are ported op for op (x86-64, glibc
    # 2.36); a libm with different rounding would show up as 1-ulp differences.
    assert np.count_nonzero(d) == 0


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("np_dt,mx_dt", FLOATS, ids=["float32", "float16", "bfloat16"])
def test_normal(shape, np_dt, mx_dt):
    ours, ref = keys(19)
    assert_within_one_ulp_and_exact(
        T.normal(ours, shape, np_dt), mx_ref.random.normal(shape, mx_dt, key=ref)
    )
    assert_within_one_ulp_and_exact(
        T.normal(ours, shape, np_dt, 1.5, 0.3),
        mx_ref.random.normal(shape, mx_dt, loc=1.5, scale=0.3, key=ref),
    )


def test_normal_array_loc_scale_and_complex():
    ours, ref = keys(20)
    loc = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_within_one_ulp_and_exact(
        T.normal(ours, (3,), np.float32, loc, 2.0),
        mx_ref.random.normal((3,), loc=mx_ref.array(loc), scale=2.0, key=ref),
    )
    assert_same_bits(
        T.normal(ours, (5,), np.complex64, None, 2.0),
        mx_ref.random.normal((5,), mx_ref.complex64, scale=2.0, key=ref),
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("np_dt,mx_dt", FLOATS, ids=["float32", "float16", "bfloat16"])
def test_truncated_normal(shape, np_dt, mx_dt):
    ours, ref = keys(21)
    got = T.truncated_normal(ours, -1.0, 2.0, shape, np_dt)
    assert_within_one_ulp_and_exact(
        got, mx_ref.random.truncated_normal(-1.0, 2.0, shape, mx_dt, key=ref)
    )
    assert got.size == 0 or (
        got.astype(np.float32).min() >= -1 and got.astype(np.float32).max() <= 2
    )


def test_truncated_normal_array_bounds_default_shape():
    ours, ref = keys(22)
    lower, upper = np.array([-1.0, 0.0], np.float32), np.array([[1.0], [3.0]], np.float32)
    assert_within_one_ulp_and_exact(
        T.truncated_normal(ours, lower, upper),
        mx_ref.random.truncated_normal(mx_ref.array(lower), mx_ref.array(upper), key=ref),
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("np_dt,mx_dt", FLOATS, ids=["float32", "float16", "bfloat16"])
def test_laplace(shape, np_dt, mx_dt):
    ours, ref = keys(23)
    assert_within_one_ulp_and_exact(
        T.laplace(ours, shape, np_dt), mx_ref.random.laplace(shape, mx_dt, key=ref)
    )
    assert_within_one_ulp_and_exact(
        T.laplace(ours, shape, np_dt, 0.5, 3.0),
        mx_ref.random.laplace(shape, mx_dt, loc=0.5, scale=3.0, key=ref),
    )
