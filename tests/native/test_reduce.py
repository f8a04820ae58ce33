"""csrc/reduce.c (sum, mean, prod, amax / amin, vector_norm of ord 1, 2, +-inf and the two
reductions of logsumexp in C) against the NumPy kernels they twin: the same bits on every
layout the native kernel takes (C order, a transposed or otherwise permuted C-order array,
the reduced dims one run in memory order), every run of dims, special values and edge
sizes, with one and two threads; NumPy's pairwise summation order along a line over many
lengths; and the layouts it leaves to NumPy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ember import native
from ember.ops import extrema as E
from ember.ops import reduce as R
from ember.ops import softmax as SM
from ember.ops import stats as S
from native._differential import assert_bits, layouts, threads, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

# (member, extra params): every reduction with a native twin here
MEMBERS = [(R.SUM_DIMS, {}), (R.SUM, {}), (R.MEAN_DIMS, {}), (R.PROD_DIM, {}),
           (E.AMAX, {}), (E.AMIN, {}), (E.MAX_ALL, {}), (E.MIN_ALL, {}),
           (SM.LOGSUMEXP, {})] + [
    (S.VECTOR_NORM, {"ord": o}) for o in (1.0, 2.0, np.inf, -np.inf)]
# sizes 1, odd, past a vector width, a pairwise block (128) and a column block (64)
SHAPES = [(1,), (7,), (129,), (1, 1), (3, 17), (9, 8), (40, 12), (5, 300), (130, 3),
          (3, 1, 5), (2, 65, 3), (4, 6, 33), (2, 3, 4, 5)]


def _values(shape, dtype, rng, product=False):
    """Magnitudes over six decades (the order of additions shows in the bits), zeros of
    both signs in a line of their own, and NaN / inf planted; near 1 for a product."""
    a = rng.standard_normal(shape) * 10 ** rng.uniform(-3, 3, shape)
    if product:
        a = 1 + a * 1e-3
    a = a.astype(dtype)
    if a.ndim >= 2 and a.shape[-2] >= 3:
        a[..., 0, :] = 0.0
        a[..., 1, :] = -0.0
        a[..., 2, :] = -np.abs(a[..., 2, :])  # (a line whose maximum is a zero)
    return a


def _cases(dtype):
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        for product in (False, True):
            a = _values(shape, dtype, rng, product)
            for perm in itertools.permutations(range(a.ndim)):  # (every memory order)
                yield shape, perm, product, np.ascontiguousarray(
                    a.transpose(perm)).transpose(np.argsort(perm))
            if a.size >= 4:
                yield shape, "specials", product, with_specials(a)


def _runs(ndim):
    return [dims for r in range(1, ndim + 1) for dims in itertools.combinations(range(ndim), r)]


@pytest.mark.filterwarnings("ignore:invalid value encountered", "ignore:overflow",
                            "ignore:divide by zero")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reductions_match_their_numpy_kernels_bit_for_bit(dtype):
    lib = native.library("reduce")
    taken = 0
    for shape, layout, product, a in _cases(dtype):
        for member, params in MEMBERS:
            if (member in (R.PROD_DIM,)) != product:
                continue
            numpy_kernel, native_kernel = native.twins(member)
            full = member in (R.SUM, E.MAX_ALL, E.MIN_ALL)
            for dims in [tuple(range(a.ndim))] if full else _runs(a.ndim):
                if member is R.PROD_DIM and len(dims) > 1:
                    continue
                for keepdim in (False, True):
                    want = None
                    for t in (1, 2):
                        with threads(t):
                            got = native_kernel(lib, a, dims=dims, keepdim=keepdim, **params)
                        if got is NotImplemented:
                            break
                        if want is None:
                            want = np.asarray(numpy_kernel(a, dims=dims, keepdim=keepdim,
                                                           **params))
                        taken += 1
                        assert got.flags.c_contiguous, (member.name, shape, layout, dims)
                        assert_bits(got, want), (member.name, params, shape, layout, dims, t)
    assert taken > 2000  # (the cases above mostly reach the native kernel)


def _pairwise_lengths():
    return [*range(0, 40), 63, 64, 65, 127, 128, 129, 130, 255, 256, 257, 999, 1000, 1001,
            4097, 8191, 8192, 8193, 8200, 16385, 20001]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_line_sums_follow_numpys_pairwise_order(dtype):
    """Along a line NumPy sums pairwise (8 partial sums per block of up to 128, halves
    split at a multiple of 8, no chunking at its 8192-element buffer): over these lengths
    any other order shows in the bits of sums over six decades."""
    lib = native.library("reduce")
    rng = np.random.default_rng(1)
    for n in _pairwise_lengths():
        a = (rng.standard_normal((3, n)) * 10 ** rng.uniform(-3, 3, (3, n))).astype(dtype)
        for op, ref in (("sum", np.add.reduce), ("mean", np.mean)):
            for rows in (a, a[:1]):  # (three lines side by side, and one alone)
                if n == 0:
                    assert R._reduce_native(op)(lib, rows, dims=(1,), keepdim=False) \
                        is NotImplemented
                    continue
                want = np.asarray(ref(rows, axis=1, dtype=dtype))
                assert_bits(R._reduce_native(op)(lib, rows, dims=(1,), keepdim=False), want)
        want = np.asarray(np.add.reduce(a[0]))
        if n:
            assert_bits(R._reduce_native("sum")(lib, a[0], dims=(0,), keepdim=False), want)


def test_sums_of_negative_zeros_are_positive_zero_as_numpys():
    lib = native.library("reduce")
    for shape, dims in [((5,), (0,)), ((3, 200), (1,)), ((200, 3), (0,)), ((4, 9, 3), (1,))]:
        a = np.full(shape, -0.0, np.float32)
        got = R._reduce_native("sum")(lib, a, dims=dims, keepdim=False)
        assert_bits(got, np.asarray(np.add.reduce(a, axis=dims)))
        assert not np.signbit(got).any()


def test_other_layouts_stay_numpys():
    lib = native.library("reduce")
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    cases = [
        (a, (0, 2), "not one run of dims"),
        (a[:, :, ::2], (2,), "strided (not a permuted C-order array)"),
        (layouts(np.ones((4, 5), np.float32))["broadcast"], (1,), "broadcast"),
        (a[::-1], (0,), "negative stride"),
        (np.zeros((0, 3), np.float32), (0,), "empty"),
        (np.float32(2.0) * np.ones((), np.float32), (), "0-d"),
        (a.astype(np.float16), (2,), "float16"),
        (np.ones((100, 12), np.float32), (1,), "short rows, which `along` sums down columns"),
    ]
    for arr, dims, why in cases:
        assert R._reduce_native("sum")(lib, arr, dims=dims, keepdim=False) \
            is NotImplemented, why
    ones = np.ones((1, 50), np.float32)  # (one product: a single chain, NumPy's)
    assert R._reduce_native("prod")(lib, ones, dims=(1,), keepdim=False) is NotImplemented
