"""csrc/conv.c against the NumPy kernels of ops/_conv_kernels.py (and, through the public
API, against torch).

The im2col kernels multiply with the same BLAS as NumPy but group the products
differently (chunks of the batch side by side; NumPy takes Winograd's products or
widened planes for some shapes), so the two agree within the error bound of a sum of
products: |native - numpy| <= 2 n eps sum|terms| per output, n the terms summed (each
side is within n eps sum|terms| of the exact sum; `_bound` computes sum|terms| as the
same operation on the operands' magnitudes, in float64). The depthwise forward does
the NumPy kernel's products and sums in its order: the same bits (its input gradient
sums the taps in order, where NumPy's may take them flipped, as a full convolution). Every
native result is the same bits with one thread and with two (the chunks and partial
sums are fixed by the shape).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import native
from ember.ops.conv import conv_input_grad_p, conv_p, conv_weight_grad_p
from native._differential import DTYPES, assert_bits, layouts, threads, with_specials

from helpers import rand_array

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

# (n, c, o, spatial, k, stride, padding (lo, hi) per dim, dilation, groups)
CASES = {
    "2d-3x3": (3, 5, 7, (9, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    "2d-stride2": (4, 6, 5, (11, 10), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),
    "2d-stride2-odd-dilated": (3, 5, 6, (12, 13), (3, 3), (2, 2), ((1, 2), (2, 0)), (1, 2), 1),
    "2d-stride2-groups": (2, 8, 6, (9, 16), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 2),
    "2d-1x1": (3, 17, 9, (5, 7), (1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    "2d-1x1-stride2": (2, 8, 4, (7, 6), (1, 1), (2, 2), ((0, 0), (0, 0)), (1, 1), 1),
    "2d-groups": (2, 6, 9, (7, 7), (3, 2), (1, 2), ((2, 0), (1, 1)), (2, 1), 3),
    "2d-dilated-asym": (2, 3, 4, (13, 9), (3, 3), (3, 1), ((0, 2), (3, 1)), (2, 3), 1),
    "2d-depthwise": (3, 5, 5, (9, 7), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 5),
    "2d-depthwise-s2": (2, 4, 4, (8, 9), (5, 3), (2, 3), ((2, 2), (0, 1)), (1, 2), 4),
    "2d-wide-batch": (33, 4, 6, (3, 3), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    "2d-winograd": (3, 32, 33, (7, 29), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    "2d-winograd-valid": (2, 33, 32, (6, 31), (3, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    "2d-winograd-last": (5, 32, 40, (9, 11), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    "2d-winograd-last-asym": (2, 40, 33, (5, 4), (3, 3), (1, 1), ((2, 0), (0, 1)), (1, 1), 1),
    "2d-one": (1, 1, 1, (1, 1), (1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    "2d-pad-only": (1, 2, 3, (1, 1), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    "1d": (3, 4, 5, (17,), (3,), (2,), ((1, 2),), (1,), 1),
    "1d-depthwise": (2, 6, 6, (15,), (5,), (1,), ((2, 2),), (2,), 6),
    "3d": (2, 3, 4, (5, 6, 7), (3, 2, 3), (1, 2, 1), ((1, 1), (0, 1), (1, 0)), (1, 1, 2), 1),
    "3d-stride2": (2, 3, 4, (4, 5, 9), (2, 3, 3), (1, 2, 2), ((0, 1), (1, 1), (1, 1)), (1, 1, 1),
                   1),
}


def _geo(case):
    n, c, o, spatial, k, stride, pads, dil, g = case
    params = dict(stride=stride, padding=pads, dilation=dil, groups=g)
    out = tuple((s + lo + hi - d * (kk - 1) - 1) // st + 1
                for s, kk, st, (lo, hi), d in zip(spatial, k, stride, pads, dil))
    return (n, c) + spatial, (o, c // g) + k, (n, o) + out, params


def _run(prim, which, *args, **params):
    numpy_k, native_k = native.twins(prim)
    if which == "numpy":
        return numpy_k(*args, **params)
    return native_k(native.library("conv"), *args, **params)


def _bound(prim, a, b, terms, dtype, **params):
    """2 n eps sum|terms|: the sum of products' error bound, twice (both sides)."""
    mag = _run(prim, "numpy", np.abs(a).astype(np.float64), np.abs(b).astype(np.float64),
               **params)
    eps = np.finfo(np.float32 if dtype not in (np.float64,) else np.float64).eps
    return 2 * terms * eps * mag


def _check(got, want, bound, name=""):
    assert got.shape == want.shape and got.dtype == want.dtype, name
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert (diff <= bound).all(), f"{name}: worst excess {np.max(diff - bound)}"


def _inputs(case, dtype, seed=0):
    xs, ws, ys, params = _geo(case)
    x = rand_array(xs, np.float64, seed=seed).astype(dtype)
    w = rand_array(ws, np.float64, seed=seed + 1).astype(dtype)
    gy = rand_array(ys, np.float64, seed=seed + 2).astype(dtype)
    return x, w, gy, params


def _depthwise(case):
    return case[-1] == case[1] == case[2] and case[1] > 1


def _terms(case):
    n, c, o, _, k, _, _, _, g = case
    taps = int(np.prod(k))
    return (c // g) * taps, (o // g) * taps


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CASES))
def test_three_kernels_match_numpy(name, dtype, n_threads):
    case = CASES[name]
    x, w, gy, params = _inputs(case, dtype)
    fwd_terms, dx_terms = _terms(case)
    dw_terms = int(np.prod(gy.shape)) // gy.shape[1]
    wide = dtype not in (np.float32, np.float64)  # computed in float32, rounded to 16 bits
    ulp = float(ml_dtypes.finfo(dtype).eps) if wide else 0
    calls = [(conv_p, (x, w), {}, fwd_terms),
             (conv_input_grad_p, (gy, w), {"x_shape": x.shape}, dx_terms),
             (conv_weight_grad_p, (x, gy), {"w_shape": w.shape}, dw_terms)]
    for prim, args, extra, terms in calls:
        want = _run(prim, "numpy", *args, **params, **extra)
        with threads(n_threads):
            got = _run(prim, "native", *args, **params, **extra)
        bound = _bound(prim, *args, terms, dtype, **params, **extra)
        if wide:  # plus one rounding to the 16-bit type on each side
            bound = bound + 2 * ulp * np.abs(want.astype(np.float64))
        _check(got, want, bound, f"{name} {prim.name}")
        exact = _depthwise(case) and prim is conv_p and not wide
        if exact:
            assert_bits(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", ["2d-3x3", "2d-groups", "2d-depthwise-s2", "3d", "2d-1x1",
                                  "2d-stride2", "2d-winograd", "2d-winograd-last"])
def test_layouts_of_the_operands(name, dtype):
    """x read through its strides (transposed, negative, broadcast), the other operand any
    layout too: the same result as from contiguous arrays."""
    case = CASES[name]
    x0, w0, gy0, params = _inputs(case, dtype)
    x0 = np.broadcast_to(x0[:1], x0.shape).copy()  # equal samples: a broadcast view too
    gy0 = np.broadcast_to(gy0[:1], gy0.shape).copy()
    want = (_run(conv_p, "native", x0, w0, **params),
            _run(conv_input_grad_p, "native", gy0, w0, x_shape=x0.shape, **params),
            _run(conv_weight_grad_p, "native", x0, gy0, w_shape=w0.shape, **params))
    for _name, x in layouts(x0).items():
        assert_bits(_run(conv_p, "native", x, w0, **params), want[0])
        assert_bits(_run(conv_weight_grad_p, "native", x, gy0, w_shape=w0.shape, **params),
                    want[2])
    for _name, gy in layouts(gy0).items():
        assert_bits(_run(conv_input_grad_p, "native", gy, w0, x_shape=x0.shape, **params),
                    want[1])
        assert_bits(_run(conv_weight_grad_p, "native", x0, gy, w_shape=w0.shape, **params),
                    want[2])
    for _name, w in layouts(w0).items():
        assert_bits(_run(conv_p, "native", x0, w, **params), want[0])


@pytest.mark.parametrize("name", ["2d-3x3", "2d-stride2", "2d-1x1", "2d-groups", "1d", "3d",
                                  "2d-winograd", "2d-winograd-last"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_special_values_as_numpy(name):
    """NaN, inf and -0.0 in x (and in gy): the im2col kernels propagate them as NumPy's
    (the same products, summed in another grouping)."""
    case = CASES[name]
    x, w, gy, params = _inputs(case, np.float32)
    x, gy = with_specials(x), with_specials(gy)
    for prim, args, extra in [(conv_p, (x, w), {}),
                              (conv_input_grad_p, (gy, w), {"x_shape": x.shape}),
                              (conv_weight_grad_p, (x, gy), {"w_shape": w.shape})]:
        want = _run(prim, "numpy", *args, **params, **extra)
        got = _run(prim, "native", *args, **params, **extra)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=prim.name)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=prim.name)
        fin = np.isfinite(want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-4, atol=1e-4)


def test_depthwise_skips_padded_taps_as_torch():
    """A non-finite weight tap never meets the padding in the depthwise kernels (PyTorch's
    depthwise kernel gives the same): only outputs whose window reads it are inf."""
    x = rand_array((2, 3, 6, 6), np.float32, low=0.5, high=1.5)
    w = rand_array((3, 1, 3, 3), np.float32, seed=1, low=0.5, high=1.5)
    w[1, 0, 0, 0] = np.inf
    got = _run(conv_p, "native", x, w, stride=(1, 1), padding=((1, 1), (1, 1)),
               dilation=(1, 1), groups=3)
    want = TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1, groups=3).numpy()
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    assert np.isinf(got[:, 1, 1:, 1:]).all() and np.isfinite(got[:, 1, 0, :]).all()
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("name", list(CASES))
def test_two_threads_give_one_threads_bits(name):
    case = CASES[name]
    x, w, gy, params = _inputs(case, np.float32, seed=7)
    calls = [(conv_p, (x, w), {}),
             (conv_input_grad_p, (gy, w), {"x_shape": x.shape}),
             (conv_weight_grad_p, (x, gy), {"w_shape": w.shape})]
    for prim, args, extra in calls:
        with threads(1):
            one = _run(prim, "native", *args, **params, **extra)
        with threads(2):
            two = _run(prim, "native", *args, **params, **extra)
        assert_bits(two, one)


def test_large_batch_chunks_and_parts():
    """A batch cut into many chunks and partial weight gradients (the fixed PARTS)."""
    case = (37, 8, 6, (4, 4), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    x, w, gy, params = _inputs(case, np.float64)
    dw_terms = int(np.prod(gy.shape)) // gy.shape[1]
    want = _run(conv_weight_grad_p, "numpy", x, gy, w_shape=w.shape, **params)
    got = _run(conv_weight_grad_p, "native", x, gy, w_shape=w.shape, **params)
    _check(got, want, _bound(conv_weight_grad_p, x, gy, dw_terms, np.float64,
                             w_shape=w.shape, **params))


# a plane of more than OWN_COLUMNS outputs: one product per sample, straight into the output
BIAS_CASES = dict(CASES, **{
    "2d-own-columns": (2, 3, 4, (20, 20), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)})


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(BIAS_CASES))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_bias_is_added_as_a_separate_add_would_be(name, dtype, n_threads):
    """conv(x, w, b), in each kernel (im2col chunked or per sample, Winograd, depthwise),
    is that kernel's conv(x, w) plus b: the bits of eager's `out + b`, and for 16-bit
    operands the float32 convolution plus the bias rounded once, as PyTorch's kernels.
    The bias holds NaN, inf and -0.0 (a Winograd plan that meets them still adds them)."""
    from ember.ops import _conv_kernels as K

    case = BIAS_CASES[name]
    x, w, _, params = _inputs(case, dtype)
    b = rand_array((case[2],), np.float64, seed=5).astype(dtype)
    b[:3] = [np.inf, -0.0, np.nan][:len(b[:3])]
    wide = np.float32 if np.dtype(dtype).itemsize == 2 else dtype
    for which in ("numpy", "native"):
        with threads(n_threads):
            plain = _run(conv_p, which, x.astype(wide), w.astype(wide), **params)
            biased = _run(conv_p, which, x, w, b, **params)
        assert_bits(biased, K.add_channel_bias(plain.copy(), b).astype(dtype))
    if dtype is np.float32:  # and against the separate add ember's eager ops compute
        xe, we, be = (ember.tensor(a) for a in (x, w, b))
        apply = ember.ops.registry.apply
        separate = apply(conv_p, xe, we, **params) + be.reshape((-1,) + (1,) * (x.ndim - 2))
        assert_bits(apply(conv_p, xe, we, be, **params).numpy(), separate.numpy())


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16])
@pytest.mark.parametrize("groups", [1, 4], ids=["dense", "depthwise"])
def test_conv2d_trains_as_torch_either_way(dtype, groups):
    """conv2d forward and both gradients through the public API, native and NumPy, against
    torch."""
    x = rand_array((5, 4, 9, 9))
    w = rand_array((4, 4 // groups, 3, 3), seed=1)
    tol = {ember.float32: 1e-4, ember.float64: 1e-10, ember.bfloat16: 5e-2}[dtype]
    tdtype = {ember.float32: torch.float32, ember.float64: torch.float64,
              ember.bfloat16: torch.bfloat16}[dtype]
    xt = torch.tensor(x).to(tdtype).requires_grad_()
    wt = torch.tensor(w).to(tdtype).requires_grad_()
    yt = TF.conv2d(xt, wt, stride=2, padding=1, groups=groups)
    (yt * yt).sum().backward()
    for m in ("native", "numpy"):
        with native.use(m):
            xe = ember.tensor(x).to(dtype).requires_grad_()
            we = ember.tensor(w).to(dtype).requires_grad_()
            ye = ember.nn.functional.conv2d(xe, we, stride=2, padding=1, groups=groups)
            (ye * ye).sum().backward()
        for e, t in ((ye, yt), (xe.grad, xt.grad), (we.grad, wt.grad)):
            np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(),
                                       rtol=tol, atol=tol * 10, err_msg=m)


def test_empty_operands_stay_with_numpy():
    x = np.zeros((0, 3, 5, 5), np.float32)
    w = np.ones((4, 3, 3, 3), np.float32)
    params = dict(stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=1)
    lib = native.library("conv")
    assert native.twins(conv_p)[1](lib, x, w, **params) is NotImplemented
    out = ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(w), padding=1)
    assert tuple(out.shape) == (0, 4, 5, 5)


def test_winograd_serves_wide_planes_only():
    """The cases above that run the C Winograd kernels (forward, weight gradient, and the
    input gradient as a full convolution) and those that run im2col."""
    from ember.ops import _conv_kernels as K
    from ember.ops import _conv_native as N

    def plan(name):
        xs, ws, _, params = _geo(CASES[name])
        geo = K.geometry(xs, ws[2:], params["stride"], params["padding"], params["dilation"],
                         params["groups"])
        return N._wino_plan(xs, ws[0], geo, 4)

    assert plan("2d-winograd")[2] == "first" and plan("2d-winograd-valid")[2] == "first"
    assert plan("2d-winograd-last")[2] == "last" and plan("2d-winograd-last-asym")[2] == "last"
    assert plan("2d-3x3") is None and plan("2d-groups") is None


def test_deterministic_algorithms_pin_im2col():
    """`use_deterministic_algorithms(True)` runs the direct sum of products (im2col), not
    Winograd's, which rounds apart from it."""
    x, w, _, params = _inputs(CASES["2d-winograd"], np.float32)
    fast = _run(conv_p, "native", x, w, **params)
    ember.use_deterministic_algorithms(True)
    try:
        pinned = _run(conv_p, "native", x, w, **params)
        with native.use("numpy"):
            numpy_pinned = _run(conv_p, "numpy", x, w, **params)
    finally:
        ember.use_deterministic_algorithms(False)
    assert not np.array_equal(fast, pinned)  # (Winograd's rounding differs somewhere)
    np.testing.assert_allclose(pinned, numpy_pinned, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("oc", [(1, 1), (3, 5), (37, 61), (64, 128)], ids=str)
def test_winograd_kernel_transform_over_threads(oc, dtype):
    """conv.c's U = G g G^T (in double, rounded once), its blocks of kernels shared out to
    the threads: two threads give one thread's bits, and both are the exact transform
    (the float32 sums of nine halved weights are exact in double) within the rounding of
    one sum of nine terms for float64. NaN, inf and -0.0 weights reach their own kernel's
    entries only."""
    from ember.native import calls

    o, c = oc
    w = with_specials(rand_array((o, c, 3, 3), np.float64, low=-3, high=3).astype(dtype))
    lib = native.library("conv")
    fn = calls.entry(lib, f"wino_kernel_{calls.SUFFIX[np.dtype(dtype)]}",
                     [calls.P, calls.P, calls.I64, calls.I64])
    got = {}
    for n in (1, 2):
        u = np.full((16, o, c), 7.0, dtype)
        with threads(n):
            fn(calls.ptr(w), calls.ptr(u), o, c)
        got[n] = u
    assert_bits(got[2], got[1])
    g = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    with np.errstate(invalid="ignore"):
        exact = np.einsum("ia,ocab,jb->ijoc", g, w.astype(np.float64), g).reshape(16, o, c)
    if dtype == np.float32:
        assert_bits(got[1], exact.astype(np.float32))
    else:
        finite = np.isfinite(exact)
        np.testing.assert_array_equal(np.isnan(got[1]), np.isnan(exact))
        np.testing.assert_allclose(got[1][finite], exact[finite], rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("special", ["finite", "inf-gradient"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", ["2d-winograd", "2d-winograd-last"])  # ("same" padding)
def test_winograd_input_grad_reads_the_flipped_kernel_from_w(name, dtype, n_threads, special):
    """The stride-1 input gradient by Winograd takes its kernel transform from w itself:
    the bits of the full convolution with the flipped copy (`_flipped`), the path it
    replaces; an output gradient whose transform turns inf into NaN falls back to that
    convolution's im2col, as before (a transposed, non-contiguous gradient included)."""
    from ember.ops import _conv_kernels as K
    from ember.ops import _conv_native as N

    x, w, gy, params = _inputs(CASES[name], dtype, seed=3)
    if special == "inf-gradient":
        gy = with_specials(gy)
    lib = native.library("conv")
    geo = K.geometry(x.shape, w.shape[2:], params["stride"], params["padding"],
                     params["dilation"], 1)
    geo = K.Geometry(geo.k, geo.stride, geo.padding, geo.dilation, 1, gy.shape[2:])
    full = K._as_full_convolution(geo, x.shape, w.shape[0], dtype)
    assert full is not None
    with threads(n_threads):
        want = N.conv_native(lib, gy, K._flipped(w, 1), stride=full.stride,
                             padding=full.padding, dilation=full.dilation, groups=1)
        for g in layouts(gy).values():
            got = _run(conv_input_grad_p, "native", g, w, x_shape=x.shape, **params)
            assert_bits(got[(slice(None),) * 2 + tuple(slice(0, s) for s in x.shape[2:])],
                        want[(slice(None),) * 2 + tuple(slice(0, s) for s in x.shape[2:])])
