"""csrc/gemm.c (ember's own float32 product) against float64 products, and the rule that
chooses it (native/blas.py `own_product`).

The product sums each element in order over k in runs (KC at most 384) added to C between
runs; BLAS groups its sums otherwise, so neither is compared with the other bit for bit:
each result must lie within n eps sum|a_ik b_kj| of the exact sum (n = k, the terms
summed; the bound of any order of float32 multiply-adds), with the exact sum and the
magnitudes taken in float64."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import ember
from ember import native
from ember.native import blas, kernels
from ember.ops import _conv_kernels as K
from ember.ops import _conv_native as CN
from ember.ops.conv import conv_input_grad_p, conv_p, conv_weight_grad_p

from helpers import rand_array

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

I64, P = ctypes.c_int64, ctypes.c_void_p


def _own():
    rt = native.runtime()
    if not rt.ember_own_gemm_built():
        pytest.skip("the runtime was built without AVX-512: no product of ember's own")
    fn = rt.ember_own_gemm_f32
    fn.argtypes = [ctypes.c_int, ctypes.c_int, I64, I64, I64, ctypes.c_float, P, I64, P, I64,
                   ctypes.c_float, P, I64]
    fn.restype = ctypes.c_int
    return fn


def _product(ta, tb, a, b, alpha=1.0, beta=0.0, c=None):
    """alpha op(a) op(b) + beta c by gemm.c (a and b row-major, possibly column slices of
    wider arrays: their row pitch is the leading dimension)."""
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    n = b.shape[0] if tb else b.shape[1]
    if c is None:
        c = np.full((m, n), np.nan, np.float32)  # beta == 0 must not read it
    got = _own()(ta, tb, m, n, k, alpha, a.ctypes.data, _pitch(a), b.ctypes.data, _pitch(b),
                 beta, c.ctypes.data, _pitch(c))
    assert got == 0
    return c


def _pitch(x: np.ndarray) -> int:
    """x's leading dimension, in elements (its rows' elements themselves adjacent)."""
    if x.size == 0:
        return max(x.shape[1], 1)
    assert x.shape[1] <= 1 or x.strides[1] == 4
    return max(x.strides[0] // 4, x.shape[1], 1)


def _check(got, a, b, ta, tb, alpha=1.0, beta=0.0, c0=None):
    A = (a.T if ta else a).astype(np.float64)
    B = (b.T if tb else b).astype(np.float64)
    want = alpha * (A @ B) + (beta * c0.astype(np.float64) if beta else 0)
    k = A.shape[1]
    eps = np.finfo(np.float32).eps
    mag = abs(alpha) * (np.abs(A) @ np.abs(B)) + (abs(beta * c0.astype(np.float64))
                                                  if beta else 0)
    bound = (k + 2) * eps * mag + 1e-30
    diff = np.abs(got.astype(np.float64) - want)
    assert (diff <= bound).all(), f"worst excess {np.max(diff - bound)}"


# (m, n, k): empty, one, odd, the micro-kernel's edges (12 rows, 32 columns), runs of k
# split (k > 384), more than one packed block of rows (144) and of columns (2048)
SHAPES = [(0, 5, 3), (4, 0, 3), (1, 1, 1), (3, 7, 5), (12, 32, 8), (13, 33, 17),
          (11, 31, 385), (145, 65, 40), (30, 2049, 9), (128, 96, 576), (7, 5, 0)]


@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_product_within_the_bound_of_a_sum(shape, ta, tb):
    m, n, k = shape
    a = rand_array((k, m) if ta else (m, k), np.float32, seed=1)
    b = rand_array((n, k) if tb else (k, n), np.float32, seed=2)
    got = _product(ta, tb, a, b)
    assert got.shape == (m, n)
    if k == 0:  # an empty sum: zeros, C's old values (NaN) not read
        np.testing.assert_array_equal(got, np.zeros((m, n), np.float32))
    _check(got, a, b, ta, tb)


@pytest.mark.parametrize("alpha, beta", [(1.0, 1.0), (0.5, 0.0), (-2.0, 0.25), (1.0, -1.0)])
def test_alpha_and_beta_as_blas(alpha, beta):
    a = rand_array((37, 400), np.float32, seed=3)
    b = rand_array((400, 45), np.float32, seed=4)
    c0 = rand_array((37, 45), np.float32, seed=5)
    got = _product(0, 0, a, b, alpha, beta, c0.copy())
    _check(got, a, b, 0, 0, alpha, beta, c0)


def test_leading_dimensions_of_slices():
    """Operands and result inside wider arrays: only their own columns are read or written."""
    big_a = rand_array((20, 50), np.float32, seed=6)
    big_b = rand_array((50, 70), np.float32, seed=7)
    c = np.full((20, 90), 7.0, np.float32)
    a, b = big_a[:, 3:33], big_b[3:33, 10:50]
    got = _product(0, 0, a, b, c=c[:, 20:60])
    _check(got, a, b, 0, 0)
    assert (c[:, :20] == 7).all() and (c[:, 60:] == 7).all()


def test_non_finite_values_spread_as_in_a_sum():
    a = rand_array((13, 9), np.float32, seed=8)
    b = rand_array((9, 33), np.float32, seed=9)
    a[2, 4], a[5, 0], b[3, 7] = np.inf, np.nan, -np.inf
    got = _product(0, 0, a, b)
    with np.errstate(invalid="ignore"):
        want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))


def test_the_same_bits_run_to_run():
    a = rand_array((100, 700), np.float32, seed=10)
    b = rand_array((700, 90), np.float32, seed=11)
    np.testing.assert_array_equal(_product(0, 0, a, b), _product(0, 0, a, b))


def test_rule_follows_the_blas_kernel_set(monkeypatch):
    """Own products where the runtime has AVX-512 and OpenBLAS runs narrower kernels; BLAS
    where its kernels are as wide, where the runtime lacks AVX-512, or with no OpenBLAS."""
    rt = native.runtime()

    class Built:
        def __init__(self, on):
            self.ember_own_gemm_built = lambda: on

    for core, built, want in [("Haswell", 1, True), ("Zen", 1, True), ("SkylakeX", 1, False),
                              ("COOPERLAKE", 1, False), ("SapphireRapids", 1, False),
                              ("Haswell", 0, False), (None, 1, False)]:
        monkeypatch.setitem(blas._found, "core", core)
        assert blas.own_product(Built(built)) is want, (core, built)
    monkeypatch.undo()
    assert kernels.own_product() == blas.own_product(rt)


@pytest.fixture
def own_products(monkeypatch):
    """The convolutions' float32 products on gemm.c whatever this machine's rule says."""
    _own()
    monkeypatch.setitem(kernels._state, "own_product", True)
    monkeypatch.setattr(CN, "_param_arrays", {})


def _conv_three(x, w, gy, **params):
    lib = native.library("conv")
    out = [native.twins(conv_p)[1](lib, x, w, **params),
           native.twins(conv_input_grad_p)[1](lib, gy, w, x_shape=x.shape, **params),
           native.twins(conv_weight_grad_p)[1](lib, x, gy, w_shape=w.shape, **params)]
    return out


@pytest.mark.parametrize("stride", [1, 2])
def test_convolutions_on_own_products_match_blas(own_products, monkeypatch, stride):
    """The im2col and Winograd paths on gemm.c agree with them on BLAS within the bound of
    their sums; deterministic algorithms pin BLAS's (the reference: the same bits as with
    the rule off)."""
    params = dict(stride=(stride, stride), padding=((1, 1), (1, 1)), dilation=(1, 1),
                  groups=1)
    x = rand_array((6, 32, 13, 12), np.float32, seed=12)
    w = rand_array((40, 32, 3, 3), np.float32, seed=13)
    oh, ow = (13 + 2 - 3) // stride + 1, (12 + 2 - 3) // stride + 1
    gy = rand_array((6, 40, oh, ow), np.float32, seed=14)
    own = _conv_three(x, w, gy, **params)
    ember.use_deterministic_algorithms(True)
    try:
        pinned = _conv_three(x, w, gy, **params)
    finally:
        ember.use_deterministic_algorithms(False)
    monkeypatch.setitem(kernels._state, "own_product", False)
    monkeypatch.setattr(CN, "_packed_product", lambda *_: False)
    blas_made = _conv_three(x, w, gy, **params)
    terms = [32 * 9, 40 * 9, 6 * oh * ow]
    eps = np.finfo(np.float32).eps
    for got, ref, n in zip(own, blas_made, terms):
        scale = np.abs(ref).max()
        np.testing.assert_allclose(got, ref, rtol=0, atol=4 * n * eps * scale)
    if stride == 2:  # (at stride 1 the pinned forward is im2col, not Winograd)
        for got, ref in zip(pinned, blas_made):
            np.testing.assert_array_equal(got, ref)
    # the plans conv.c ran carried both choices (a plan's key ends (own, packed))
    assert {key[-2] for key in CN._param_arrays} == {True, False}
    if (blas.corename() or "").lower() not in blas._WIDE_CORES:
        # OpenBLAS's AVX2 kernels group their sums otherwise (an AMD EPYC's: some bits
        # differ); its AVX-512 ones (an Intel Xeon's SkylakeX) may sum in gemm.c's order
        assert any(not np.array_equal(a, b) for a, b in zip(own, blas_made))


# (n, c, o, spatial, kernel, stride, padding, dilation, groups): convolutions whose
# columns conv.c can pack from split planes (2-d, stride 1 or 2 in both dims, or 1-d at
# stride 1); rows of 1, 3, 8 (whole vector moves), 16 and 33 outputs; one sample a
# product and several
PACKED = [(32, 64, 40, (16, 16), (3, 3), 2, ((1, 1), (1, 1)), (1, 1), 1),
          (3, 5, 7, (7, 9), (3, 3), 2, ((1, 1), (1, 1)), (1, 1), 1),
          (2, 6, 6, (11, 10), (3, 5), 1, ((1, 1), (2, 2)), (1, 1), 2),
          (1, 3, 2, (5, 5), (2, 2), 2, ((0, 0), (0, 0)), (1, 1), 1),
          (4, 8, 13, (9, 13), (5, 5), 2, ((2, 0), (1, 2)), (2, 1), 1),
          (5, 1, 32, (28, 28), (3, 3), 1, ((0, 0), (0, 0)), (1, 1), 1),
          (2, 3, 4, (1, 1), (3, 3), 1, ((1, 1), (1, 1)), (1, 1), 1),
          (2, 4, 5, (66, 9), (3, 3), 2, ((1, 1), (1, 1)), (1, 1), 1),
          (3, 16, 8, (33, 17), (3, 3), 2, ((1, 1), (1, 1)), (1, 1), 1),
          (3, 16, 30, (37,), (5,), 1, ((2, 1),), (2,), 1)]  # 1-d: stride 1 only


def test_packed_columns_are_the_own_products_bits(own_products, monkeypatch):
    """A forward whose columns are packed from the input straight into gemm.c's panels
    (conv.c G_PACKED) multiplies the same numbers in the same order as gemm.c on im2col's
    columns: the same bits, bias, NaN and inf included, on one thread and two; within the
    sum's bound of float64's exact products."""
    from native._differential import assert_bits, threads, with_specials
    conv = native.twins(conv_p)[1]
    lib = native.library("conv")
    eps = np.finfo(np.float32).eps
    for i, (n, c, o, hw, k, s, pads, dil, g) in enumerate(PACKED):
        params = dict(stride=(s,) * len(hw), padding=pads, dilation=dil, groups=g)
        x = rand_array((n, c) + hw, np.float32, seed=20 + i)
        w = rand_array((o, c // g) + k, np.float32, seed=40 + i)
        bias = rand_array((o,), np.float32, seed=60 + i) if i % 2 else None
        got = {}
        for packed in (True, False):
            monkeypatch.setattr(CN, "_packed_product", lambda *_, packed=packed: packed)
            for nt in (1, 2):
                with threads(nt):
                    got[packed, nt] = conv(lib, x, w, bias, **params)
            got[packed, "special"] = conv(lib, with_specials(x), w, bias, **params)
        for key in [(False, 1), (True, 2), (False, 2)]:
            assert_bits(got[True, 1], got[key])
        assert_bits(got[True, "special"], got[False, "special"])
        assert np.isnan(got[True, "special"]).any()
        if bias is not None:
            got[True, 1] = got[True, 1] - bias.reshape((-1,) + (1,) * len(hw))  # (the sum's)
        exact = conv(lib, x.astype(np.float64), w.astype(np.float64), **params)
        mag = conv(lib, np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), **params)
        terms = c // g * int(np.prod(k))
        assert (np.abs(got[True, 1] - exact) <= terms * eps * mag).all(), i
    monkeypatch.undo()
    # the rule: products of >= 24 output channels by >= 128 terms, where gemm.c is built;
    # never under deterministic algorithms
    def rule(c, o, k, groups=1):
        geo = K.geometry((2, c, 9, 9), (k, k), (2, 2), ((1, 1), (1, 1)), (1, 1), groups)
        return CN._packed_product(geo, c, o)
    built = kernels.own_built()
    assert rule(64, 128, 3) is built and rule(16, 24, 3) is built
    assert not rule(16, 8, 3) and not rule(3, 32, 3) and not rule(1, 32, 3)
    assert rule(64, 48, 3, groups=2) is built  # 24 rows, 288 terms a group
    assert not rule(14, 24, 3) and not rule(64, 44, 3, groups=2)  # 126 terms; 22 rows
    ember.use_deterministic_algorithms(True)
    try:
        assert rule(64, 128, 3) is False
    finally:
        ember.use_deterministic_algorithms(False)
