"""csrc/random.c (the generator's words, float and double uniforms and bernoulli values in
C) against the NumPy paths of `Generator._words`, `_floats` and `_doubles`, and against
torch.

Both paths read one MT19937 stream, so they must give the same numbers bit for bit and
leave the generator in the same state, whatever state the draw starts from (a fresh seed,
part way through the 624 state words, a pair of words straddling a twist).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import _rng_native as R
from native._differential import assert_bits, threads

needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
pytestmark = needs_native

# sizes 0, 1, odd, around a block of 512 and a twist of 624 words (312 uniforms)
SIZES = (0, 1, 2, 311, 312, 313, 511, 512, 513, 1000, 5003)
# words drawn before: none (fresh seed), one (odd start: pairs straddle twists), most of
# the state, all of it but one, exactly all of it
BEFORE = (0, 1, 311, 623, 624)


@pytest.fixture(autouse=True)
def _every_size(monkeypatch):
    """The native path for every size (it normally leaves draws under MIN_DRAWS to NumPy)."""
    monkeypatch.setattr(R, "MIN_DRAWS", 0)


def _gen(seed: int, before: int) -> ember.Generator:
    g = ember.Generator().manual_seed(seed)
    g._words(before)
    return g


def _state(g) -> bytes:
    return g.get_state().numpy().tobytes()


def _both(draw, seed, before):
    """draw(g) on the native and the NumPy path from the same state: the two results, and
    the states and next words after."""
    out = []
    for mode in ("native", "numpy"):
        g = _gen(seed, before)
        with native.use(mode):
            v = draw(g)
        out.append((v, _state(g), g._words(3)))
    return out


@pytest.fixture(params=["in place", "through state"])
def state_route(request, monkeypatch):
    """How the C code reaches the generator's state: NumPy's struct in place (where it is
    laid out as checked at first use), or taken out and put back through `state`."""
    assert R._struct_readable()  # (NumPy's struct as mt19937.h declares it, on this build)
    if request.param == "through state":
        monkeypatch.setattr(R, "_in_place", [False])
    return request.param


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("before", BEFORE)
@pytest.mark.parametrize("draw", ["_words", "_floats", "_doubles", "_words64"])
def test_draws_are_numpys_and_leave_its_state(draw, before, n_threads, state_route):
    for n in SIZES:
        with threads(n_threads):
            (a, sa, wa), (b, sb, wb) = _both(lambda g, n=n: getattr(g, draw)(n), 3 + n, before)
        if a.dtype.kind == "f":
            assert_bits(a, b)
        else:
            np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype and a.shape == (n,)
        assert sa == sb, f"size {n}: states differ"
        np.testing.assert_array_equal(wa, wb)


@pytest.mark.parametrize("before", BEFORE)
def test_randperm_is_the_numpy_swaps_and_leaves_its_state(before, state_route):
    for n in (2, 3, 313, 625, 1797, 5003):
        (a, sa, wa), (b, sb, wb) = _both(lambda g, n=n: ember.randperm(n, generator=g).numpy(),
                                         n, before)
        np.testing.assert_array_equal(a, b)
        assert sorted(a.tolist()) == list(range(n))
        assert sa == sb and (wa == wb).all(), f"size {n}: states differ"


@pytest.mark.parametrize("n", [256, 1797, 100_000])
def test_randperm_is_torchs_and_so_is_the_stream_after(n, monkeypatch):
    """Three permutations in a row, then a uniform draw: the numbers torch gives (the
    digits loader's shuffle is n = 1797)."""
    monkeypatch.setattr(R, "MIN_DRAWS", 256)  # (as shipped: the C path from 256 words)
    e, t = ember.Generator().manual_seed(n), torch.Generator().manual_seed(n)
    for _ in range(3):
        np.testing.assert_array_equal(ember.randperm(n, generator=e).numpy(),
                                      torch.randperm(n, generator=t).numpy())
    assert_bits(ember.rand(5, generator=e).numpy(), torch.rand(5, generator=t).numpy())


@pytest.mark.parametrize("fn", [R.words, R.floats, R.doubles])
def test_native_draws_leave_the_fresh_state_alone_when_they_draw_nothing(fn):
    g = ember.Generator().manual_seed(5)
    fresh = _state(g)
    assert fn(g, 0) is None and _state(g) == fresh


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("before", BEFORE)
def test_bernoulli_values_are_the_numpy_comparison(dtype, before):
    t = dtype(4) / dtype(3)
    values = [(0.3, 1, 0), (0.75, t, dtype(0)), (0.5, np.inf, -0.0), (0.0, 1, 0), (1.0, 1, 0),
              (0.5, np.nan, dtype(-2.5))]
    for n in SIZES:
        for p, one, zero in values:
            g = _gen(n, before)
            with native.use("native"):
                a = R.bernoulli(g, n, p, one, zero, dtype)
            sa, wa = _state(g), g._words(3)
            g = _gen(n, before)
            with native.use("numpy"):
                u = g._doubles(n)
            b = np.where(u < p, dtype(one), dtype(zero))
            assert_bits(a if n else np.empty(0, dtype), b)
            assert sa == _state(g) and (wa == g._words(3)).all()


def test_bernoulli_at_exactly_p_is_zero():
    """u < p: a uniform equal to p draws `zero` (and the one just below it `one`)."""
    g = _gen(0, 0)
    with native.use("numpy"):
        u = g._doubles(2000)
    for k in (0, 7, 1999):
        g = _gen(0, 0)
        a = R.bernoulli(g, 2000, float(u[k]), 1, 0, np.float64)
        assert a[k] == 0
        np.testing.assert_array_equal(a, (u < u[k]).astype(np.float64))


def test_other_dtypes_are_left_to_numpy():
    g = _gen(0, 0)
    before = _state(g)
    assert R.bernoulli(g, 100, 0.5, 1, 0, np.float16) is None
    assert R.bernoulli(g, 100, 0.5, 1, 0, np.int64) is None
    assert _state(g) == before


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.25, 0.5])
def test_large_dropout_and_bernoulli_are_torchs(dtype, p):
    """The MNIST step's dropout (64, 64, 12, 12), and bernoulli_ on a transposed tensor: the
    bits and the generator state PyTorch leaves."""
    for L in (ember, torch):
        L.manual_seed(11)
    x = np.random.default_rng(0).standard_normal((64, 64, 12, 12)).astype(dtype)
    for L in (ember, torch):
        L.manual_seed(11)
    e = ember.nn.functional.dropout(ember.tensor(x), p, True)
    t = torch.nn.functional.dropout(torch.tensor(x), p, True)
    assert_bits(e.numpy(), t.numpy())
    assert ember.get_rng_state().numpy().tobytes() == torch.get_rng_state().numpy().tobytes()
    e = ember.zeros(300, 7, dtype=getattr(ember, dtype)).t().bernoulli_(p)
    t = torch.zeros(300, 7, dtype=getattr(torch, dtype)).t().bernoulli_(p)
    assert_bits(e.numpy(), t.numpy())
    assert ember.get_rng_state().numpy().tobytes() == torch.get_rng_state().numpy().tobytes()


def test_threads_drawing_from_one_generator_share_the_stream_without_repeats():
    """Draws from Python threads at once take disjoint runs of words: together they are the
    stream one thread draws, in some order (each draw whole)."""
    import threading

    n, k = 4000, 8
    g = ember.Generator().manual_seed(9)
    got = [None] * k

    def work(i):
        got[i] = g._doubles(n)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(k)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ref = ember.Generator().manual_seed(9)
    with native.use("numpy"):
        chunks = [ref._doubles(n) for _ in range(k)]
    assert sorted(c[0] for c in chunks) == sorted(c[0] for c in got)
    firsts = {c[0]: c for c in chunks}
    for c in got:
        assert_bits(c, firsts[c[0]])
