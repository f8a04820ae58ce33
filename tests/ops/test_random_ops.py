"""Random ops give PyTorch's exact bits and leave the generator in PyTorch's exact state.

Each case runs the same call in both frameworks for seeds 0, 1, 42 and sizes 1..100,
1000 and 10007 (reseeding before every call), then compares the output bytes and the
5,056-byte generator state. Comparing the state is what catches a call that draws
one word too many or too few.
"""

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ember
from ember.ops.bernoulli import dropout_mask

from helpers import assert_same, no_data_reads, same_message, same_result, to_numpy_t, to_torch

SEEDS = (0, 1, 42)
SIZES = tuple(range(1, 101)) + (1000, 10007)
# For variations of a function already covered on every size: the boundaries of the
# 16-element blocks, and the large sizes.
SOME_SIZES = tuple(range(1, 21)) + (31, 32, 33, 47, 48, 63, 64, 99, 100, 1000, 10007)
FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int64", "int32", "int16", "int8", "uint8", "bool")

_rng = np.random.default_rng(7)
PROBS = {n: _rng.random(n).astype(np.float32) + np.float32(0.01) for n in SIZES}


def same(lib, arr):
    """The NumPy array `arr` as a tensor of `lib` (ember or torch), same bits."""
    e = ember.tensor(arr)
    return e if lib is ember else to_torch(e)


def assert_same_bits(e, t, where=""):
    assert isinstance(e, ember.Tensor), where
    a, b = e.numpy(), to_numpy_t(t)
    assert a.shape == b.shape and a.dtype == b.dtype, f"{where}: {a.shape}/{a.dtype} vs " \
        f"{b.shape}/{b.dtype}"
    assert e.stride() == t.stride(), f"{where}: strides {e.stride()} vs {t.stride()}"
    av = np.ascontiguousarray(a).view(np.uint8)
    bv = np.ascontiguousarray(b).view(np.uint8)
    if not np.array_equal(av, bv):
        bad = np.flatnonzero((a != b).reshape(-1))
        raise AssertionError(f"{where}: {bad.size} elements differ, first at {bad[:5]}: "
                             f"{a.reshape(-1)[bad[:3]]} vs {b.reshape(-1)[bad[:3]]}")


def assert_same_state(where=""):
    e = ember.get_rng_state().numpy().tobytes()
    t = torch.get_rng_state().numpy().tobytes()
    assert e == t, f"{where}: generator states differ"


def seed_both(seed):
    # NOTE: torch.manual_seed also seeds lazily-initialised accelerator backends, which
    # costs milliseconds; seeding the default CPU generator is what matters here.
    ember.default_generator.manual_seed(seed)
    torch.default_generator.manual_seed(seed)


def same_stream(fn, sizes=SIZES, seeds=SEEDS):
    """fn(lib, n) draws the same bits in ember and torch and uses the same words."""
    for seed in seeds:
        for n in sizes:
            seed_both(seed)
            where = f"seed {seed}, size {n}"
            assert_same_bits(fn(ember, n), fn(torch, n), where)
            assert_same_state(where)


def dt(lib, name):
    return getattr(lib, name)


# --- uniform and normal ------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + ("complex64", "complex128"))
def test_rand(dtype):
    same_stream(lambda L, n: L.rand(n, dtype=dt(L, dtype)))


@pytest.mark.parametrize("dtype", FLOATS + ("complex64",))
def test_randn_both_paths(dtype):
    # n < 16 takes the serial path (cached sample), n >= 16 the block-of-16 fill,
    # with its redrawn tail block when n % 16 != 0.
    same_stream(lambda L, n: L.randn(n, dtype=dt(L, dtype)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_on_non_contiguous_tensor_fills_in_memory_order(dtype):
    same_stream(lambda L, n: L.zeros(n, 3, dtype=dt(L, dtype)).t().normal_())


@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_like_keeps_the_layout_and_takes_the_serial_path(dtype):
    same_stream(lambda L, n: L.randn_like(L.zeros(n, 2, dtype=dt(L, dtype)).t()))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bounds", [(-1.1, 2.3), (0.3, 0.7), (-0.05, 0.05)])
def test_uniform_(dtype, bounds):
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).uniform_(*bounds))


def test_uniform_on_a_strided_view():
    same_stream(lambda L, n: L.zeros(4, n, dtype=L.float64)[::2].uniform_(-3, 5))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mean_std", [(0.5, 2.0), (-3.0, 0.1)])
def test_normal_(dtype, mean_std):
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).normal_(*mean_std))


@pytest.mark.parametrize("dtype", ("float32", "float64", "bfloat16"))
def test_normal_overloads(dtype):
    def mean(L, n):
        return same(L, PROBS[n]).to(dt(L, dtype))

    def std(L, n):
        return same(L, PROBS[n][::-1].copy()).to(dt(L, dtype))

    same_stream(lambda L, n: L.normal(mean(L, n), std(L, n)), sizes=SOME_SIZES)
    same_stream(lambda L, n: L.normal(mean(L, n), 0.7), sizes=SOME_SIZES)
    same_stream(lambda L, n: L.normal(1.5, std(L, n)), sizes=SOME_SIZES)
    same_stream(lambda L, n: L.normal(1.5, 0.25, (n,), dtype=dt(L, dtype)))


def test_rand_like_keeps_the_layout():
    same_stream(lambda L, n: L.rand_like(L.zeros(n, 2, dtype=L.float16).t()))


# --- integers and permutations --------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_random_without_bounds(dtype):
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).random_())


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_randint_small_range(dtype):
    lo = 0 if dtype in ("uint8", "bool") else -5
    hi = 2 if dtype == "bool" else 100
    same_stream(lambda L, n: L.randint(lo, hi, (n,), dtype=dt(L, dtype)))
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).random_(hi), sizes=SOME_SIZES)


@pytest.mark.parametrize("bounds", [(0, 2**28 - 1), (0, 2**28), (3, 2**32 + 7), (-2**40, 2**40),
                                    (0, 2**62), (-2**63, 2**63 - 1)])
def test_randint_range_widths(bounds):
    # One word per element below a range of 2**28, one 64-bit draw from there on.
    same_stream(lambda L, n: L.randint(*bounds, (n,)))


def test_randint_wide_ranges_in_narrow_dtypes():
    same_stream(lambda L, n: L.randint(0, 2**30, (n,), dtype=L.int32), sizes=SOME_SIZES)
    same_stream(lambda L, n: L.randint(-2**24, 2**24, (n,), dtype=L.float32), sizes=SOME_SIZES)
    same_stream(lambda L, n: L.empty(n, dtype=L.int16).random_(-7, None), sizes=SOME_SIZES)
    same_stream(lambda L, n: L.empty(n, dtype=L.int64).random_(-2**63, None), sizes=SOME_SIZES)


def test_randint_like():
    same_stream(lambda L, n: L.randint_like(L.zeros(n, 2).t(), 3, 10))


@pytest.mark.parametrize("dtype", ("int64", "int32", "float32", "float64"))
def test_randperm(dtype):
    same_stream(lambda L, n: L.randperm(n, dtype=dt(L, dtype)), sizes=(0,) + SIZES)
    if dtype == "int64":
        same_stream(lambda L, n: L.randperm(n), sizes=(10**6,), seeds=(0,))


# --- bernoulli, dropout, exponential, multinomial, poisson ---------------------------

@pytest.mark.parametrize("dtype", FLOATS + ("uint8", "bool"))
def test_bernoulli_scalar_p(dtype):
    same_stream(lambda L, n: L.zeros(n, 2, dtype=dt(L, dtype)).t().bernoulli_(0.3))
    same_stream(lambda L, n: L.bernoulli(L.zeros(n, 2, dtype=dt(L, dtype)).t(), 0.25),
                sizes=SOME_SIZES)


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_probability_tensor(dtype):
    # A float64 probability draws a double uniform (2 words), any other a float (1 word).
    same_stream(lambda L, n: L.bernoulli(same(L, PROBS[n] - 0.01).to(dt(L, dtype))))
    same_stream(lambda L, n: L.zeros(n, 3, dtype=L.float32).bernoulli_(
        same(L, np.array([0.1, 0.5, 0.9])).to(dt(L, dtype))), sizes=SOME_SIZES)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_dropout_mask_is_torch_dropout_noise(dtype, p):
    def noise(L, n):
        x = L.ones(n, 3, dtype=dt(L, dtype))
        return F.dropout(x, p, training=True) if L is torch else dropout_mask(x, p)

    same_stream(noise)


def test_dropout_mask_edge_probabilities_draw_nothing():
    x = ember.ones(5)
    state = ember.get_rng_state()
    assert dropout_mask(x, 0.0) is None
    assert dropout_mask(ember.ones(0), 0.5) is None
    assert not dropout_mask(x, 1.0).numpy().any()
    assert ember.get_rng_state().equal(state)


def test_feature_dropout_mask():
    def noise(L, n):
        x = L.ones(2, n, 3, 3)
        return F.dropout2d(x, 0.4, training=True) if L is torch else \
            x * dropout_mask(x, 0.4, feature=True)

    same_stream(noise, sizes=SOME_SIZES[:-1])


@pytest.mark.parametrize("dtype", FLOATS)
def test_exponential_and_other_serial_distributions(dtype):
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).exponential_(2.5))
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).cauchy_(0.5, 2.0),
                sizes=SOME_SIZES)
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).log_normal_(0.5, 0.75),
                sizes=SOME_SIZES)
    same_stream(lambda L, n: L.empty(n, dtype=dt(L, dtype)).geometric_(0.3),
                sizes=SOME_SIZES)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial(dtype, replacement):
    def probs(L, n, rows):
        p = PROBS[n] if rows == 1 else np.stack([PROBS[n], PROBS[n][::-1], PROBS[n] ** 2])
        return same(L, p).to(dt(L, dtype))

    # (k > 1 without replacement is top-k of probs / q; float16 / bfloat16 make ties
    # there, which torch breaks by its topk's partial-sort order: reproduced too)
    for k in (1, 3):
        for rows in (1, 3):
            def draw(L, n, k=k, rows=rows):
                return L.multinomial(probs(L, n, rows), k if replacement else min(k, n),
                                     replacement)

            same_stream(draw, sizes=SIZES if (k, rows) == (1, 1) else SOME_SIZES)


@pytest.mark.parametrize("dtype", FLOATS)
def test_multinomial_zero_probabilities_without_replacement(dtype):
    # more samples than nonzero categories: the zero ones tie at 0 in probs / q, and come
    # in the order torch's topk leaves them (not ascending: [[3, 1, 4, 0, 2]] for seed 0)
    def draw(L, n, rows=1):
        p = same(L, np.stack([PROBS[n], PROBS[n][::-1]])[:rows]).to(dt(L, dtype))
        p[:, ::3] = 0  # (n >= 2: index 1 of each row stays nonzero)
        return L.multinomial(p, n)

    sizes = tuple(n for n in SOME_SIZES if n >= 2)
    same_stream(draw, sizes=sizes)
    same_stream(lambda L, n: draw(L, n, 2), sizes=sizes)


@pytest.mark.parametrize("dtype", FLOATS)
def test_poisson(dtype):
    same_stream(lambda L, n: L.poisson(same(L, PROBS[n] * 20).to(dt(L, dtype))),
                sizes=tuple(range(1, 30)) + (1000,))
    # The result is contiguous and drawn in row-major order even for a transposed input.
    same_stream(lambda L, n: L.poisson(same(L, np.stack([PROBS[n], PROBS[n] * 12]).T.copy())
                                       .to(dt(L, dtype)).t()), sizes=range(1, 21))


# --- generators, sequences, layouts ----------------------------------------------------

def test_explicit_generators_leave_the_default_alone():
    ember.manual_seed(3)
    before = ember.get_rng_state()
    ge = ember.Generator().manual_seed(11)
    gt = torch.Generator().manual_seed(11)
    calls = [
        lambda L, g: L.rand(7, generator=g),
        lambda L, g: L.randn(40, generator=g),
        lambda L, g: L.randint(0, 9, (5,), generator=g),
        lambda L, g: L.randperm(12, generator=g),
        lambda L, g: L.empty(9).uniform_(-1, 1, generator=g),
        lambda L, g: L.empty(9).normal_(2, 3, generator=g),
        lambda L, g: L.bernoulli(L.full((6,), 0.5), generator=g),
        lambda L, g: L.multinomial(L.ones(8), 3, generator=g),
    ]
    for call in calls:
        assert_same_bits(call(ember, ge), call(torch, gt))
        assert ge.get_state().numpy().tobytes() == gt.get_state().numpy().tobytes()
    assert ember.get_rng_state().equal(before)


def test_mixed_call_sequence_stays_in_step():
    # The serial normal's cached sample survives across calls and dtypes.
    seq = [
        lambda L: L.randn(1), lambda L: L.randn(2, dtype=L.float64), lambda L: L.rand(3),
        lambda L: L.randn(17), lambda L: L.randn(5).t(), lambda L: L.empty(3, 5).t().normal_(),
        lambda L: L.randint(0, 10, (4,)), lambda L: L.randn(3, dtype=L.float16),
        lambda L: L.empty(33).exponential_(), lambda L: L.randperm(9),
        lambda L: L.bernoulli(L.full((5,), 0.3)), lambda L: L.empty(20).uniform_(-2, 2),
        lambda L: L.randn(15), lambda L: L.multinomial(L.ones(4, 6), 4, True),
    ]
    for seed in SEEDS:
        seed_both(seed)
        for rnd in range(3):
            for i, call in enumerate(seq):
                where = f"seed {seed}, round {rnd}, call {i}"
                assert_same_bits(call(ember), call(torch), where)
                assert_same_state(where)


def _untemper(y: np.ndarray) -> np.ndarray:
    """The MT19937 state word whose tempered output is y (inverting each step)."""
    y = y.astype(np.uint64)
    y ^= y >> np.uint64(18)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    x = y
    for _ in range(5):
        x = y ^ ((x << np.uint64(7)) & np.uint64(0x9D2C5680))
    x &= np.uint64(0xFFFFFFFF)
    y = x
    for _ in range(3):
        x = y ^ (x >> np.uint64(11))
    return x & np.uint64(0xFFFFFFFF)


def test_float32_box_muller_on_hard_inputs():
    # A hand-made state whose next 622 words are chosen: u1 = 1 (log 0), the smallest
    # u1, both sides of sqrt(1/2), u2 at every octant boundary of the sincos reduction.
    k = np.concatenate([
        [0, 1, 2, 2**24 - 1, 2**23, 2**23 - 1, 2**23 + 1, 4913933, 4913934, 4913932],
        np.arange(0, 2**24, 2**24 // 8), np.arange(0, 2**24, 2**24 // 8) - 1,
        np.arange(0, 2**24, 2**24 // 8) + 1,
        np.random.default_rng(5).integers(0, 2**24, 622),
    ])[:608] % 2**24
    words = np.zeros(624, np.uint64)
    words[2:2 + k.size] = _untemper(k.astype(np.uint64))
    state = np.zeros(5056, np.uint8)
    header = np.array([0], "<u8").tobytes() + np.array([623, 1], "<i4").tobytes() + \
        np.array([2], "<u8").tobytes()
    state[:24] = np.frombuffer(header, np.uint8)
    state[24:24 + 624 * 8] = np.frombuffer(words.astype("<u8").tobytes(), np.uint8)
    for order in (1, -1):
        state_t = torch.from_numpy(state.copy())
        torch.set_rng_state(state_t)
        ember.set_rng_state(ember.from_numpy(state.copy()))
        t = torch.randn(608 // 16 * 16) if order == 1 else torch.randn(600)
        e = ember.randn(608 // 16 * 16) if order == 1 else ember.randn(600)
        assert_same_bits(e, t)
        assert_same_state()


# --- autograd, meta, errors --------------------------------------------------------------

def test_in_place_draws_respect_autograd_rules():
    leaf = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.normal_()
    with ember.no_grad():
        leaf.uniform_(-1, 1)
    assert leaf.requires_grad and leaf.is_leaf
    y = leaf * 2
    y.normal_()
    assert type(y.grad_fn).__name__ == "NormalBackward0"
    y.sum().backward()
    assert not leaf.grad.numpy().any()  # the old values got a zero gradient


def test_meta_tensors_draw_nothing():
    state = ember.get_rng_state()
    a = ember.randn(4, 5, device="meta")
    b = ember.empty(3, device="meta").uniform_()
    c = ember.randint(0, 5, (2,), device="meta")
    assert a.shape == (4, 5) and a.is_meta and b.is_meta and c.dtype is ember.int64
    assert ember.get_rng_state().equal(state)


@pytest.mark.parametrize("call", [
    lambda L: L.rand(3, dtype=L.int64),
    lambda L: L.randn(3, dtype=L.int32),
    lambda L: L.empty(3).uniform_(2, 1),
    lambda L: L.empty(3).normal_(0, -1),
    lambda L: L.randint(5, 5, (3,)),
    lambda L: L.randint(0, 300, (3,), dtype=L.uint8),
    lambda L: L.empty(3).bernoulli_(1.5),
    lambda L: L.empty(3).exponential_(0),
    lambda L: L.multinomial(L.ones(3), 4),
    lambda L: L.multinomial(L.tensor([1.0, -1.0]), 1),
    lambda L: L.multinomial(L.zeros(3), 1),
    lambda L: L.multinomial(L.ones(2, 2, 2), 1),
    lambda L: L.empty(3).expand(2, 3).normal_(),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(Exception) as ee:
        call(ember)
    assert type(ee.value) is type(te.value), f"{ee.value!r} vs {te.value!r}"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("bounds", [(0, float("inf")), (float("-inf"), 0), (float("nan"), 1),
                                    (0, float("nan")), (-1e39, 0), (0, 1e39), (-3e38, 3e38),
                                    (1e5, 1e5 + 1), (2, 1)])
def test_uniform_bounds_are_checked_against_the_dtype_first(dtype, bounds):
    # each bound within the real dtype's finite range (inf, nan and 1e5 for float16 refused,
    # naming the C++ type), then from <= to, then to - from finite; else a draw
    def call(L):
        return L.empty(3, dtype=getattr(L, dtype)).uniform_(*bounds)

    try:
        call(torch)
    except RuntimeError:
        same_message(call)
    else:
        assert call(ember).shape == (3,)


def test_normal_std_nan_is_refused_and_log_normal_overflows_to_inf(recwarn):
    nan = float("nan")
    same_message(lambda L: L.normal(L.zeros(3), L.tensor([1.0, nan, 1.0])))
    same_message(lambda L: L.empty(2).normal_(0, nan))
    for d in ("float32", "float64", "float16"):
        # exp of a huge normal sample is inf (C's exp), with no NumPy warning on the way
        for lib in (ember, torch):
            lib.manual_seed(0)
        e = ember.empty(4, dtype=getattr(ember, d)).log_normal_(1e6, 1)
        t = torch.empty(4, dtype=getattr(torch, d)).log_normal_(1e6, 1)
        assert_same(e, t)
    for lib in (ember, torch):
        lib.manual_seed(0)
    assert_same(ember.empty(20).normal_(float("inf"), 1), torch.empty(20).normal_(float("inf"), 1))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("fill", [
    lambda x: x.uniform_(), lambda x: x.normal_(), lambda x: x.exponential_(),
    lambda x: x.cauchy_(), lambda x: x.log_normal_(), lambda x: x.geometric_(0.5),
    lambda x: x.random_(), lambda x: x.bernoulli_(0.5), lambda x: x.bernoulli_(x.detach()),
    lambda x: x[:2].normal_(),
])
def test_a_refused_random_fill_draws_nothing(fill):
    # a leaf that requires grad (or a view of one) is refused before the kernel runs, so
    # the generator is left where it was, as in PyTorch
    for L in (ember, torch):
        L.manual_seed(0)
        x = L.rand(3, requires_grad=True)
        state = L.get_rng_state()
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            fill(x)
        assert L.get_rng_state().equal(state)


def test_generator_argument_type_is_checked():
    with pytest.raises(TypeError, match="Generator"):
        ember.rand(2, generator=3)


def test_default_kernel_profile_matches_torchs_scalar_build():
    # torch with ATEN_CPU_CAPABILITY=default runs its scalar kernels: libm logf/sinf/cosf
    # in float32 randn and no FMA in uniform_; ember's 'default' profile reproduces them.
    code = (
        "import torch, pickle, sys\n"
        "out = []\n"
        "for n in (5, 17, 100):\n"
        "    torch.manual_seed(n); out.append(torch.randn(n).numpy())\n"
        "    out.append(torch.empty(n).uniform_(-1.1, 2.3).numpy())\n"
        "    out.append(torch.empty(n, dtype=torch.float64).normal_(0.5, 2.0).numpy())\n"
        "    out.append(torch.randn(n, dtype=torch.float16).numpy())\n"
        "sys.stdout.buffer.write(pickle.dumps(out))\n"
    )
    import os
    import pickle

    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    ref = pickle.loads(done.stdout)
    previous = ember.random.get_kernel_profile()
    ember.random.set_kernel_profile("default")
    try:
        got = []
        for n in (5, 17, 100):
            ember.manual_seed(n)
            got.append(ember.randn(n).numpy())
            got.append(ember.empty(n).uniform_(-1.1, 2.3).numpy())
            got.append(ember.empty(n, dtype=ember.float64).normal_(0.5, 2.0).numpy())
            got.append(ember.randn(n, dtype=ember.float16).numpy())
    finally:
        ember.random.set_kernel_profile(previous)
    for g, r in zip(got, ref):
        assert g.tobytes() == r.tobytes()


def test_bfloat16_values_are_bfloat16():
    ember.manual_seed(0)
    a = ember.rand(4, dtype=ember.bfloat16)
    assert a.dtype is ember.bfloat16 and a.numpy().dtype == ml_dtypes.bfloat16


def test_zero_dim_and_empty_tensors():
    calls = [
        lambda L: L.empty((), dtype=L.int64).random_(),
        lambda L: L.empty(()).normal_(),
        lambda L: L.empty((), dtype=L.float64).uniform_(-1, 1),
        lambda L: L.empty(()).bernoulli_(0.5),
        lambda L: L.randn(0, 3),
        lambda L: L.empty(0).exponential_(),
        lambda L: L.randperm(0),
    ]
    seed_both(4)
    for i, call in enumerate(calls):
        assert_same_bits(call(ember), call(torch), f"call {i}")
        assert_same_state(f"call {i}")


@pytest.mark.parametrize("draw", [
    lambda L, p: L.bernoulli(p), lambda L, p: p.new_zeros(7, 2).t().bernoulli_(p),
    lambda L, p: L.multinomial(p, 3), lambda L, p: L.multinomial(p, 9, True),
    lambda L, p: L.poisson(p * 30),
], ids=["bernoulli", "bernoulli_", "multinomial", "multinomial_replacement", "poisson"])
def test_draws_from_tensors_bind_their_kernels(draw):
    # the probabilities or rates are read only by the op's kernel (the noise is drawn
    # before it, in PyTorch's order), so the stream stays PyTorch's bit for bit
    probs = np.stack([PROBS[7], PROBS[7][::-1]])
    seed_both(3)
    p = ember.tensor(probs) * 1  # (built outside the guard)
    with no_data_reads():
        e = draw(ember, p)
    assert_same_bits(e, draw(torch, torch.tensor(probs)), "guarded")
    assert_same_state("guarded")
    m = draw(ember, ember.empty(2, 7, device="meta"))
    assert m.device.type == "meta" and m.shape == e.shape and m.dtype is e.dtype


DRAWS_FROM_PARAMS = {
    "normal_tt": lambda m, mu, sd: m.normal(mu, sd),
    "normal_tf": lambda m, mu, sd: m.normal(mu, 2.0),
    "normal_ft": lambda m, mu, sd: m.normal(1.0, sd),
    "poisson": lambda m, mu, sd: m.poisson(sd),
    "bernoulli": lambda m, mu, sd: m.bernoulli(sd * 0.5),
}


@pytest.mark.parametrize("name", DRAWS_FROM_PARAMS)
@pytest.mark.parametrize("grad", [True, False])
def test_draws_from_parameters_join_the_graph_with_zero_gradients_as_torch(name, grad):
    res = []
    for m in (ember, torch):
        m.manual_seed(0)
        mu = m.zeros(3, requires_grad=True)
        sd = m.ones(3, requires_grad=True)
        with m.set_grad_enabled(grad):
            r = DRAWS_FROM_PARAMS[name](m, mu, sd)
        node = None if r.grad_fn is None else r.grad_fn.name()
        grads = None
        if r.requires_grad:
            (r * m.arange(3.0)).sum().backward()
            grads = [None if t.grad is None else t.grad.tolist() for t in (mu, sd)]
        res.append((r.tolist(), r.requires_grad, node, grads))
    assert res[0] == res[1]


@pytest.mark.parametrize("call", [
    lambda L: L.bernoulli(L.full((3,), 1.5)),
    lambda L: L.bernoulli(L.tensor([0.5, -0.5], dtype=L.float64)),
    lambda L: L.bernoulli(L.full((2,), float("nan"), dtype=L.float16)),
    lambda L: L.zeros(3).bernoulli_(L.full((3,), 2.0)),
], ids=["float32", "float64", "nan_float16", "in_place"])
def test_probability_tensor_out_of_range_message_is_torchs(call):
    # PyTorch's check here has no message of its own, so it names the condition and adds
    # its standard request for a better message; ember words it the same way
    with pytest.raises(RuntimeError) as te:
        call(torch)
    with pytest.raises(RuntimeError) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("out", [
    lambda L: L.empty(4, dtype=L.int64), lambda L: L.empty(4, dtype=L.bool),
    lambda L: L.empty(4, dtype=L.float64), lambda L: L.empty(2, 3),
    lambda L: L.empty(0, dtype=L.uint8), lambda L: L.empty(4, 1, dtype=L.int32).t(),
], ids=["int64", "bool", "float64", "resized", "empty", "strided"])
@pytest.mark.parametrize("pdtype", ["float32", "float64", "float16"])
def test_bernoulli_out_takes_any_dtype_and_draws_as_bernoulli_(out, pdtype):
    # out= is `out.resize_(probs.shape).bernoulli_(probs)`: any dtype, no resize warning,
    # the same stream as without out=
    res = []
    for L in (ember, torch):
        probs = L.tensor([0.2, 0.5, 0.9, 0.4], dtype=getattr(L, pdtype))
        got = L.bernoulli(probs, generator=L.Generator().manual_seed(1), out=out(L))
        res.append((got.tolist(), str(got.dtype)[6:], tuple(got.shape)))
    assert res[0] == res[1]


@pytest.mark.parametrize("call", [
    lambda L: L.bernoulli(L.full((3,), 0.5, requires_grad=True), out=L.empty(3)),
    lambda L: L.bernoulli(L.full((3,), 0.5), 0.5, out=L.empty(3)),
], ids=["requires_grad", "float_p"])
def test_bernoulli_out_refusals_match_torch(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(Exception) as ee:
        call(ember)
    assert type(ee.value) is type(te.value)
    assert str(ee.value).splitlines()[0] == str(te.value).splitlines()[0]


@pytest.mark.parametrize("args, kwargs", [
    ((10,), {}), ((0, 5, 3), {}), ((0.5, 5.5, (3,)), {}), ((1, 2, 3, (2,)), {}),
    ((5, 3), {}), ((5.0, (2,)), {}), ((5, "a"), {}), ((5,), {"size": 3}),
    ((0.5,), {"size": (3,)}), ((), {"high": 2.5, "size": (3,)}), ((1, 5.5), {"size": (3,)}),
], ids=str)
def test_randint_refuses_what_torchs_parser_refuses_in_its_words(args, kwargs):
    import torch

    msgs = []
    for m in (ember, torch):
        with pytest.raises(TypeError) as e:
            m.randint(*args, **kwargs)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_randint_takes_its_overloads():
    for args, kwargs, shape in [((10, (3,)), {}, (3,)), ((0, 10, (2, 2)), {}, (2, 2)),
                                ((5,), {"size": (2,)}, (2,)), ((5, [2, 2]), {}, (2, 2)),
                                ((), {"low": 1, "high": 5, "size": (2,)}, (2,))]:
        t = ember.randint(*args, **kwargs)
        assert tuple(t.shape) == shape and t.dtype == ember.int64


@pytest.mark.parametrize("shape,fmt", [((2, 3, 2, 2, 2), "channels_last_3d"),
                                       ((2, 4, 3, 3, 3), "channels_last_3d"),
                                       ((2, 4, 3, 3), "channels_last"),
                                       ((2, 4, 3, 3), "contiguous_format")])
@pytest.mark.parametrize("name", ["rand_like", "randn_like", "randint_like"])
def test_like_draws_are_laid_out_in_their_memory_format(name, shape, fmt):
    # the values are drawn in memory order, so a channels-last draw is torch's bit for bit
    a = np.zeros(shape, np.float64)
    args = (10,) if name == "randint_like" else ()
    ember.manual_seed(4)
    e = getattr(ember, name)(ember.tensor(a), *args, memory_format=getattr(ember, fmt))
    torch.manual_seed(4)
    t = getattr(torch, name)(torch.tensor(a), *args, memory_format=getattr(torch, fmt))
    assert_same(e, t, rtol=0, atol=0, check_stride=True)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "complex64", "uint16"])
@pytest.mark.parametrize("fill", ["exponential_", "cauchy_", "log_normal_", "geometric_"])
def test_continuous_fills_refuse_other_dtypes_in_torchs_words(fill, dtype):
    """Exponential and Cauchy refuse a non-float tensor with a RuntimeError (the dtype printed
    as `Long` and as C++'s `long int`); log-normal's kernel, and geometric's for bool, complex
    and the wide unsigned ints, with a NotImplementedError."""
    def call(L):
        t = L.zeros(3, dtype=getattr(L, dtype))
        return getattr(t, fill)(0.5) if fill == "geometric_" else getattr(t, fill)()

    torch.manual_seed(0)
    ok = fill == "geometric_" and dtype in ("int64", "int32", "uint8")
    if ok:  # (one double uniform per element in both: the same stream)
        ember.manual_seed(0)
        same_result(call)
    else:
        kind = RuntimeError if fill in ("exponential_", "cauchy_") else NotImplementedError
        same_message(call, kind)


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(2, dtype=L.long).exponential_(-1.0),
    lambda L: L.zeros(2, dtype=L.long).cauchy_(0.0, -1.0),
    lambda L: L.zeros(2, dtype=L.long).log_normal_(1.0, -1.0),
    lambda L: L.zeros(2, dtype=L.bool).geometric_(2.0),
])
def test_fill_parameter_is_checked_before_the_dtype(call):
    same_message(call)
