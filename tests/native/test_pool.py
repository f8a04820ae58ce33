"""csrc/pool.c (max pooling, values and indices, and its backward) against the NumPy twins
of ops/pooling.py and against torch.

Max pooling does no arithmetic: the indices are NumPy's and torch's exactly (first of equal
maxima, last NaN, a -inf window at its first tap inside the input), the values torch's bit
for bit. NumPy's own values agree as numbers; only the sign of a zero may differ from the
NumPy twin's, whose running np.maximum keeps the first or the second of -0.0 and 0.0
depending on its vector path (the C kernel, as torch, writes the winner's value). The
backward adds in NumPy's order (np.add.at, flat order), so it is the NumPy twin's bits.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import native
from ember.ops.pooling import adaptive_max_pool_p, max_pool_backward_p, max_pool_p
from native._differential import DTYPES, assert_bits, layouts, threads, with_specials

from helpers import rand_array

needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
FORWARD = native.twins(max_pool_p)
BACKWARD = native.twins(max_pool_backward_p)

# (input shape, kernel, stride, padding, dilation, ceil_mode): sizes 0 and 1, odd sizes,
# padding, dilation, overlapping windows, ceil_mode's partial last window; 1-d, 2-d, 3-d
CASES = [
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 9, 7), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((1, 2, 7, 9), (3, 2), (1, 2), (1, 1), (2, 1), False),
    ((3, 1, 5, 5), (3, 3), (1, 1), (1, 1), (1, 1), False),
    ((2, 2, 11, 6), (2, 3), (3, 2), (1, 0), (1, 2), True),
    ((0, 3, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 0, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 1, 1, 1), (1, 1), (1, 1), (0, 0), (1, 1), False),
    ((4, 6, 6), (2, 2), (1, 1), (1, 1), (1, 1), True),
    ((2, 3, 13), (3,), (2,), (1,), (1,), True),
    ((4, 9), (2,), (1,), (0,), (2,), False),
    ((2, 3, 6, 7, 5), (2, 3, 2), (2, 2, 1), (1, 1, 0), (1, 1, 2), True),
    ((1, 2, 5, 5, 5), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), False),
    ((3, 4, 6, 6), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
    ((0, 2, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
]
IDS = [f"{c[0]}-k{c[1]}-s{c[2]}-p{c[3]}-d{c[4]}-{'ceil' if c[5] else 'floor'}" for c in CASES]


def _params(case):
    _, k, s, p, d, ceil = case
    return dict(kernel=k, stride=s, padding=p, dilation=d, ceil_mode=ceil)


def _ties(shape, dtype, seed=0):
    """Values in a few levels (equal maxima in many windows), NaN / inf / -0.0 planted, a
    run of -inf (windows of -inf only) and of zeros of both signs."""
    x = np.floor(rand_array(shape, np.float64, low=-3, high=3, seed=seed))
    flat = x.reshape(-1)
    if flat.size > 12:
        flat[6:12] = -np.inf
        flat[12:20] = [0.0, -0.0, -0.0, 0.0, -0.0, -0.0, 0.0, 0.0][: flat.size - 12]
    return with_specials(x).astype(dtype)


def _layouts(x):
    out = layouts(x)
    if x.ndim == 4:  # channels-last: a (n, h, w, c) buffer read as (n, c, h, w)
        out["channels-last"] = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if x.ndim == 5:  # (and a (n, d, h, w, c) one read as (n, c, d, h, w))
        out["channels-last"] = np.ascontiguousarray(
            x.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)
    out.pop("broadcast", None)
    return out


def _numbers_equal(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # (NaN equals NaN here; -0.0 equals 0.0)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_max_pool_forward_matches_numpy(case, dtype, n_threads):
    numpy_k, native_k = FORWARD
    kw = _params(case)
    x0 = _ties(case[0], dtype)
    want_v, want_i = numpy_k(x0, **kw)
    for name, x in _layouts(x0).items():
        with threads(n_threads):
            got = native_k(native.library("pool"), x, **kw)
        assert got is not NotImplemented, name
        np.testing.assert_array_equal(got[1], want_i, err_msg=name)
        _numbers_equal(got[0], want_v)


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", [c for c in CASES if c[0][0] and c[0][1]], ids=str)
def test_max_pool_forward_is_torchs_bit_for_bit(case, dtype):
    """Values (zero signs included) and indices as torch's max_pool{1,2,3}d_with_indices."""
    kw = _params(case)
    x = _ties(case[0], dtype, seed=1)
    got_v, got_i = FORWARD[1](native.library("pool"), x, **kw)
    fn = (TF.max_pool1d, TF.max_pool2d, TF.max_pool3d)[len(kw["kernel"]) - 1]
    tv, ti = fn(torch.from_numpy(x), kw["kernel"], kw["stride"], kw["padding"], kw["dilation"],
                kw["ceil_mode"], True)
    np.testing.assert_array_equal(got_i, ti.numpy())
    assert_bits(got_v, tv.numpy())


@needs_native
@pytest.mark.filterwarnings("ignore:invalid value encountered")  # (inf + -inf in a sum)
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_max_pool_backward_is_numpys_bit_for_bit(case, dtype, n_threads):
    """Overlapping windows add several gradients into one input cell: in NumPy's order."""
    kw = _params(case)
    x = rand_array(case[0], dtype, seed=2)
    _, index = FORWARD[0](x, **kw)
    g0 = with_specials(rand_array(index.shape, np.float64, seed=3).astype(dtype))
    want = BACKWARD[0](g0, index, shape=x.shape, nd=len(kw["kernel"]))
    for name, g in layouts(g0).items():
        with threads(n_threads):
            got = BACKWARD[1](native.library("pool"), g, index, shape=x.shape,
                              nd=len(kw["kernel"]))
        assert got is not NotImplemented, name
        assert_bits(got, want)


ADAPTIVE = [((2, 3, 7, 9), (3, 4)), ((3, 10, 5), (4, 3)), ((1, 2, 5, 5), (7, 2)),
            ((2, 3, 6, 6), (6, 6)), ((0, 2, 5, 5), (3, 3)), ((2, 1, 1, 1), (2, 3))]


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape, size", ADAPTIVE, ids=str)
def test_adaptive_max_pool_matches_numpy_and_torch(shape, size, dtype, n_threads):
    numpy_k, native_k = native.twins(adaptive_max_pool_p)
    x0 = _ties(shape, dtype, seed=4)
    want_v, want_i = numpy_k(x0, out_size=size)
    for name, x in _layouts(x0).items():
        with threads(n_threads):
            got = native_k(native.library("pool"), x, out_size=size)
        assert got is not NotImplemented, name
        np.testing.assert_array_equal(got[1], want_i, err_msg=name)
        # the NumPy twin writes the winner's value too: the same bits
        assert_bits(got[0], want_v)
    if x0.size:
        tv, ti = TF.adaptive_max_pool2d(torch.from_numpy(x0), size, True)
        np.testing.assert_array_equal(want_i, ti.numpy())
        assert_bits(want_v, tv.numpy())


@needs_native
@pytest.mark.parametrize("dtype", DTYPES[2:], ids=["float16", "bfloat16"])
def test_16_bit_floats_stay_on_numpy(dtype):
    """float16 / bfloat16: the NumPy twin (float32 inside, one rounding) takes them."""
    x = rand_array((2, 3, 6, 6)).astype(dtype)
    kw = _params(CASES[0])
    assert FORWARD[1](native.library("pool"), x, **kw) is NotImplemented
    _, index = FORWARD[0](x, **kw)
    g = np.ones(index.shape, dtype)
    assert BACKWARD[1](native.library("pool"), g, index, shape=x.shape, nd=2) \
        is NotImplemented


@needs_native
@pytest.mark.parametrize("bad", [-1, 64])
def test_out_of_plane_index_goes_to_numpy(bad):
    """An index outside its plane is not written: the call falls back to the NumPy twin
    (which wraps -1 and raises for 64, as NumPy indexing does)."""
    g = np.ones((1, 2, 2, 2), np.float32)
    index = np.zeros((1, 2, 2, 2), np.int64)
    index[0, 1, 1, 1] = bad
    assert BACKWARD[1](native.library("pool"), g, index, shape=(1, 2, 8, 8), nd=2) \
        is NotImplemented


TDT = {ember.float32: torch.float32, ember.float64: torch.float64,
       ember.bfloat16: torch.bfloat16, ember.float16: torch.float16}


@pytest.mark.parametrize("mode", ["native", "numpy"])
@pytest.mark.parametrize("dtype", list(TDT), ids=str)
@pytest.mark.parametrize("n_threads", [1, 2])
def test_max_pool2d_values_and_grads_as_torch(dtype, mode, n_threads):
    """F.max_pool2d forward and backward through the public API, native and NumPy, with
    overlapping windows and padding: outputs, indices and input gradients as torch's."""
    x = _ties((3, 4, 9, 10), np.float64, seed=5)
    w = rand_array((3, 4, 5, 6), np.float64, seed=6)
    xt = torch.tensor(x).to(TDT[dtype]).requires_grad_()
    yt, it = TF.max_pool2d(xt, 3, 2, 1, ceil_mode=True, return_indices=True)
    (yt * torch.tensor(w).to(TDT[dtype])).sum().backward()
    with native.use(mode), threads(n_threads):
        xe = ember.tensor(x).to(dtype).requires_grad_()
        ye, ie = ember.nn.functional.max_pool2d(xe, 3, 2, 1, ceil_mode=True,
                                                return_indices=True)
        (ye * ember.tensor(w).to(dtype)).sum().backward()
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    np.testing.assert_array_equal(ye.detach().double().numpy(), yt.detach().double().numpy())
    # the gradient: products rounded once, then sums of at most four overlapping windows
    # (in flat order in both)
    tol = {ember.float32: 1e-6, ember.float64: 1e-15}.get(dtype, 1e-2)
    np.testing.assert_allclose(xe.grad.double().numpy(), xt.grad.double().numpy(), rtol=tol,
                               atol=tol)
