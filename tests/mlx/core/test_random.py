"""`ember.mlx.core.random` (`mx.random`) against MLX 0.32.4: the global key, the
public signatures, the dtypes and shapes of results, and the errors MLX raises."""

import threading
import time

import ml_dtypes
import numpy as np
import pytest

import ember.mlx.core as mx
from ember.mlx.core import random as mxr

mx_ref = pytest.importorskip("mlx.core")


def values(x) -> np.ndarray:
    """An ember or MLX array as NumPy (MLX's bfloat16 through its bits)."""
    if isinstance(x, mx_ref.array) and x.dtype == mx_ref.bfloat16:
        return np.array(x.view(mx_ref.uint16)).view(ml_dtypes.bfloat16)
    return np.asarray(x)


def assert_same(ours, ref) -> None:
    """Same shape, same dtype name, same bits."""
    assert ours.shape == tuple(ref.shape)
    assert ours.dtype.name == str(ref.dtype).removeprefix("mlx.core.")
    a, b = values(ours), values(ref)
    assert np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


# Each draw is written once and run against both modules (`m` is mx or mx_ref).
DRAWS = [
    lambda m: m.random.uniform(shape=(3,)),
    lambda m: m.random.uniform(-2, 5, (2, 3), m.float16),
    lambda m: m.random.normal((5,)),
    lambda m: m.random.normal((2, 2), m.bfloat16, loc=1.0, scale=2.0),
    lambda m: m.random.randint(0, 10, (7,)),
    lambda m: m.random.bernoulli(0.25, (9,)),
    lambda m: m.random.bernoulli(m.array([0.1, 0.9])),
    lambda m: m.random.truncated_normal(-1, 1, (4,)),
    lambda m: m.random.gumbel((3,)),
    lambda m: m.random.categorical(m.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])),
    lambda m: m.random.categorical(m.array([0.0, 1.0, 2.0]), num_samples=6),
    lambda m: m.random.permutation(11),
    lambda m: m.random.permutation(m.arange(12).reshape(3, 4), axis=1),
    lambda m: m.random.laplace((5,), loc=1.0, scale=0.5),
    lambda m: m.random.split(m.random.key(3), 3),
]


def test_seeded_sequence_of_global_draws_matches_mlx():
    mxr.seed(0)
    mx_ref.random.seed(0)
    for draw in DRAWS:
        assert_same(draw(mx), draw(mx_ref))
    assert_same(mxr.state[0], mx_ref.random.state[0])


def test_a_global_draw_uses_the_second_half_of_a_split():
    mxr.seed(7)
    expected = mxr.uniform(shape=(4,), key=mxr.split(mxr.key(7))[1])
    assert_same(mxr.uniform(shape=(4,)), expected)
    keep = mxr.split(mxr.key(7))[0]
    assert_same(mxr.state[0], keep)


def test_reseeding_restarts_the_sequence():
    mxr.seed(123)
    first = [mxr.normal((3,)), mxr.randint(0, 100, (3,))]
    mxr.seed(123)
    again = [mxr.normal((3,)), mxr.randint(0, 100, (3,))]
    for a, b in zip(first, again):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_explicit_key_leaves_the_global_key_alone():
    mxr.seed(5)
    before = np.asarray(mxr.state[0]).copy()
    mxr.uniform(shape=(3,), key=mxr.key(1))
    assert np.array_equal(np.asarray(mxr.state[0]), before)


def test_failed_call_still_consumes_the_global_key():
    # MLX's bindings take the next key before checking the dtype.
    for m in (mx, mx_ref):
        m.random.seed(1)
        with pytest.raises(ValueError):
            m.random.uniform(shape=(2,), dtype=m.int32)
    assert_same(mxr.uniform(shape=(3,)), mx_ref.random.uniform(shape=(3,)))


def test_state_is_a_read_only_one_element_sentinel():
    state = mxr.state
    assert state is mxr.state
    assert type(state).__name__ == type(mx_ref.random.state).__name__ == "_RandomState"
    assert len(state) == 1
    mxr.seed(9)
    assert_same(state[0], mxr.key(9))
    assert_same(state[-1], mxr.key(9))
    assert [k.tolist() for k in state] == [mxr.key(9).tolist()]
    with pytest.raises(IndexError, match="random state index out of range"):
        state[1]
    with pytest.raises(TypeError, match="does not support item assignment"):
        state[0] = mxr.key(1)
    mxr.uniform()
    assert state[0].tolist() != mxr.key(9).tolist()  # the sentinel follows the key


def test_unknown_module_attribute():
    for m in (mxr, mx_ref.random):
        with pytest.raises(AttributeError, match="Module 'random' has no attribute 'nope'"):
            m.nope  # noqa: B018


@pytest.mark.parametrize("m", [mx, mx_ref], ids=["ember", "mlx"])
def test_new_threads_start_from_the_process_time_seed(m):
    # One key per thread, every thread's first key made from one clock reading (in ms).
    m.random.seed(0)
    found = []
    for _ in range(2):
        t = threading.Thread(target=lambda: found.append(m.random.state[0].tolist()))
        t.start()
        t.join()
    assert found[0] == found[1] != m.random.key(0).tolist()
    ms = found[0][0] << 32 | found[0][1]
    assert 1_600_000_000_000 < ms <= time.time() * 1000
    assert m.random.state[0].tolist() == m.random.key(0).tolist()  # this thread's key


@pytest.mark.parametrize("shape", [(), (0,), (1,), (3,), (3, 4), (2, 0, 3), (10001,)])
def test_result_shapes_and_dtypes(shape):
    for name, kwargs in [
        ("uniform", {}),
        ("normal", {}),
        ("gumbel", {}),
        ("laplace", {}),
        ("randint", {"low": 0, "high": 9}),
        ("bernoulli", {"p": 0.5}),
        ("truncated_normal", {"lower": -1, "upper": 1}),
    ]:
        ours = getattr(mxr, name)(shape=shape, key=mxr.key(4), **kwargs)
        ref = getattr(mx_ref.random, name)(shape=shape, key=mx_ref.random.key(4), **kwargs)
        assert_same(ours, ref)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_float_dtypes(dtype):
    for name in ("uniform", "normal", "gumbel", "laplace"):
        ours = getattr(mxr, name)(shape=(257,), dtype=getattr(mx, dtype), key=mxr.key(2))
        ref = getattr(mx_ref.random, name)(
            shape=(257,), dtype=getattr(mx_ref, dtype), key=mx_ref.random.key(2)
        )
        assert_same(ours, ref)


def test_array_arguments():
    k, kr = mxr.key(6), mx_ref.random.key(6)
    lo = [0.0, 1.0, 2.0]
    assert_same(
        mxr.uniform(mx.array(lo), 5.0, (2, 3), key=k),
        mx_ref.random.uniform(mx_ref.array(lo), 5.0, (2, 3), key=kr),
    )
    assert_same(
        mxr.uniform(np.array(lo), 5.0, (3,), key=k),  # float64 NumPy -> float32, as MLX
        mx_ref.random.uniform(np.array(lo), 5.0, (3,), key=kr),
    )
    assert_same(
        mxr.normal((3,), loc=mx.zeros((2, 3)), key=k),
        mx_ref.random.normal((3,), loc=mx_ref.zeros((2, 3)), key=kr),
    )
    assert_same(
        mxr.randint(mx.array([0, 50]), mx.array([10, 60]), (4, 2), key=k),
        mx_ref.random.randint(mx_ref.array([0, 50]), mx_ref.array([10, 60]), (4, 2), key=kr),
    )
    assert_same(
        mxr.categorical(mx.array([[0.0, 5.0], [5.0, 0.0]]), axis=0, shape=(3, 2), key=k),
        mx_ref.random.categorical(
            mx_ref.array([[0.0, 5.0], [5.0, 0.0]]), axis=0, shape=(3, 2), key=kr
        ),
    )
    assert_same(
        mxr.permutation(mx.array([[1.5, 2.5], [3.5, 4.5]], mx.float16), key=k),
        mx_ref.random.permutation(mx_ref.array([[1.5, 2.5], [3.5, 4.5]], mx_ref.float16), key=kr),
    )


# Calls that MLX rejects: (source of the call, with `m` for the module under test).
ERRORS = [
    "m.random.uniform(shape=(2,), dtype=m.int32, key=m.random.key(0))",
    "m.random.uniform(shape=(2,), dtype=m.float64, key=m.random.key(0))",
    "m.random.uniform(m.zeros((3,)), 1, (2,), key=m.random.key(0))",
    "m.random.uniform(m.zeros((3,)), 1, key=m.random.key(0))",
    "m.random.uniform(shape=(-1,), key=m.random.key(0))",
    "m.random.uniform(shape=(2,), key=m.array([1, 2]))",
    "m.random.uniform(shape=(2,), key=m.array([1, 2, 3], m.uint32))",
    "m.random.uniform(low=[0.0, 1.0], shape=(2,))",
    "m.random.normal((2,), dtype=m.int32, key=m.random.key(0))",
    "m.random.randint(0, 5, (3,), dtype=m.float32, key=m.random.key(0))",
    "m.random.bernoulli(1, key=m.random.key(0))",
    "m.random.bernoulli(m.array([0.5, 0.5]), (3,), key=m.random.key(0))",
    "m.random.truncated_normal(0, 1, dtype=m.int32, key=m.random.key(0))",
    "m.random.truncated_normal(m.zeros((2,)), m.ones((3,)), key=m.random.key(0))",
    "m.random.gumbel((2,), dtype=m.int32, key=m.random.key(0))",
    "m.random.laplace((2,), dtype=m.int32, key=m.random.key(0))",
    "m.random.categorical(m.zeros((2, 3)), axis=3, key=m.random.key(0))",
    "m.random.categorical(m.array(1.0), key=m.random.key(0))",
    "m.random.categorical(m.zeros((2, 3)), shape=(4,), key=m.random.key(0))",
    "m.random.categorical(m.zeros((2, 3)), shape=(4,), num_samples=2, key=m.random.key(0))",
    "m.random.categorical(m.zeros((0,)), shape=(3,), key=m.random.key(0))",
    "m.random.permutation(-1, key=m.random.key(0))",
    "m.random.permutation(m.arange(6).reshape(2, 3), axis=2, key=m.random.key(0))",
    "m.random.split(m.random.key(0), -1)",
    "m.random.split(m.array([0, 1]))",
    "m.random.gumbel((2,), stream=m.gpu)",
    "m.random.uniform(m.zeros((3,)), m.zeros((2,)), (3,), key=m.random.key(0))",
    "m.random.normal((3,), loc=m.zeros((2,)), key=m.random.key(0))",
    "m.random.truncated_normal(m.zeros((3,)), m.zeros((2,)), (3,), key=m.random.key(0))",
]

TYPE_ERRORS = [
    "m.random.seed(-1)",
    "m.random.seed(2**64)",
    "m.random.seed(1.0)",
    "m.random.key(-1)",
    "m.random.uniform(shape=3)",
    "m.random.uniform(shape=(2.0,))",
    "m.random.uniform(key=np.array([0, 1], np.uint32))",
    "m.random.uniform(dtype=np.float32)",
    "m.random.permutation(5.0)",
    "m.random.permutation([3, 1, 2])",
    "m.random.categorical([0.0, 1.0])",
    "m.random.split(np.array([0, 1], np.uint32))",
]


def _raised(src: str, m):
    try:
        eval(src, {"m": m, "np": np})
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e), str(e)
    return None, None


@pytest.mark.parametrize("src", ERRORS)
def test_errors_match_mlx(src):
    ours, ref = _raised(src, mx), _raised(src, mx_ref)
    assert ref[0] is not None
    assert ours == ref


@pytest.mark.parametrize("src", TYPE_ERRORS)
def test_type_errors_match_mlx(src):
    # nanobind's message lists the signature and the argument types; compare the gist.
    ours, ref = _raised(src, mx), _raised(src, mx_ref)
    assert ours[0] is ref[0] is TypeError
    assert ours[1].split("\n")[0] == ref[1].split("\n")[0]


def test_accepted_argument_forms():
    mxr.seed(True)
    mxr.seed(np.int64(3))
    assert mxr.key(2**64 - 1).tolist() == [2**32 - 1, 2**32 - 1]
    assert mxr.uniform(shape=np.array([2, 3]), key=mxr.key(0)).shape == (2, 3)
    assert mxr.uniform(shape=[2], dtype=None, key=mxr.key(0)).dtype == mx.float32
    assert mxr.permutation(True, key=mxr.key(0)).tolist() == [0]
    assert mxr.gumbel((2,), stream=mx.cpu).shape == (2,)
    assert mxr.split(mxr.key(0), 0).shape == (0, 2)


# -- multivariate_normal --------------------------------------------------------------------

def _mvn(m, mean, cov, **kwargs):
    return np.array(m.random.multivariate_normal(m.array(mean), m.array(cov), **kwargs))


@pytest.mark.parametrize("n,batch,shape", [(2, (), ()), (2, (), (50,)), (3, (4,), (50, 4)),
                                           (5, (2, 3), ()), (8, (), (20,))])
def test_multivariate_normal_matches_mlx(n, batch, shape):
    # NOTE: MLX's square root of cov comes from a float32 SVD, ours from a float64 one (the
    # same unique PSD root): the samples differ by that SVD's rounding. Measured up to
    # 1e-5 absolute on samples of magnitude ~20 (cond(cov) ~ 150); the bound is 1e-5 of
    # the largest |sample| plus 1e-5 relative.
    rng = np.random.default_rng(n)
    a = rng.standard_normal((*batch, n, n)).astype(np.float32)
    cov = (a @ np.swapaxes(a, -1, -2) + 0.1 * np.eye(n)).astype(np.float32)
    mean = rng.standard_normal((*batch, n)).astype(np.float32)
    ours = _mvn(mx, mean, cov, shape=shape, key=mx.random.key(1))
    ref = _mvn(mx_ref, mean, cov, shape=shape, key=mx_ref.random.key(1))
    assert ours.shape == ref.shape and ours.dtype == ref.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_multivariate_normal_singular_cov_and_global_key():
    # a diagonal cov: the root is exact on both sides, so the samples are bit-equal, and
    # the global key is consumed as every other draw consumes it
    cov, mean = np.diag([4.0, 0.0, 1.0]).astype(np.float32), np.array([1.0, 2.0, 3.0], np.float32)
    mxr.seed(5)
    mx_ref.random.seed(5)
    assert np.array_equal(_mvn(mx, mean, cov, shape=(30,)), _mvn(mx_ref, mean, cov, shape=(30,)))
    assert_same(mxr.uniform(shape=(3,)), mx_ref.random.uniform(shape=(3,)))
    # rank 1: the square root of near-zero singular values magnifies float32's SVD error
    # to ~sqrt(eps) (measured 1.5e-4 of the largest sample)
    v = np.array([[1.0], [-0.5], [2.0]], np.float32)
    ours = _mvn(mx, np.zeros(3, np.float32), v @ v.T, shape=(200,), key=mx.random.key(0))
    ref = _mvn(mx_ref, np.zeros(3, np.float32), v @ v.T, shape=(200,), key=mx_ref.random.key(0))
    np.testing.assert_allclose(ours, ref, atol=1e-3 * np.abs(ref).max())


def test_multivariate_normal_result_dtypes_and_broadcast_shapes():
    k = (mx.random.key(0), mx_ref.random.key(0))
    for i, m in enumerate((mx, mx_ref)):
        eye = m.array([[1, 0], [0, 1]])
        assert m.random.multivariate_normal(m.array([1, 2]), eye, key=k[i]).dtype == m.float32
        assert m.random.multivariate_normal(
            m.array([1, 2], m.float16), eye, dtype=None, key=k[i]).dtype == m.float32
        assert m.random.multivariate_normal(m.ones((4, 1, 2)), m.ones((3, 2, 2)),
                                            shape=[2, 1, 1, 1], key=k[i]).shape == (2, 1, 4, 3, 2)


MVN_ERRORS = [
    "m.random.multivariate_normal(m.ones(2), m.eye(2), dtype=m.float16)",
    "m.random.multivariate_normal(m.array(1.0), m.eye(2))",
    "m.random.multivariate_normal(m.ones(2), m.ones(2))",
    "m.random.multivariate_normal(m.ones(2), m.ones((2, 3)))",
    "m.random.multivariate_normal(m.ones(3), m.eye(2))",
    "m.random.multivariate_normal(m.ones((4, 2)), m.ones((3, 2, 2)))",
    "m.random.multivariate_normal(m.ones((4, 2)), m.eye(2), shape=[3])",
]


@pytest.mark.parametrize("src", MVN_ERRORS)
def test_multivariate_normal_errors_match_mlx(src):
    ours, ref = _raised(src, mx), _raised(src, mx_ref)
    assert ref[0] is not None
    assert ours == ref


def test_multivariate_normal_type_error_matches_mlx():
    src = "m.random.multivariate_normal([1.0, 2.0], [[1.0, 0.0], [0.0, 1.0]])"
    ours, ref = _raised(src, mx), _raised(src, mx_ref)
    assert ours[0] is ref[0] is TypeError
    assert ours[1].split("\n")[:2] == ref[1].split("\n")[:2]
