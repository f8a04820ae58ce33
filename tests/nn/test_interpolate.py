"""F.interpolate against torch: every mode, antialiasing, uint8, NaN locality, gradients,
node names, channels-last results and PyTorch's refusals."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.nn import functional as F

from helpers import assert_same, check_grads, check_op, rand_array, same_error, same_message

# float32: ATen adds a bicubic or antialiased output's taps in another order than the
# per-dim passes, with fused multiply-adds, so values are a few ulps apart; float64 sums
# agree to ~1e-13 relative (the antialiasing weights' last bits), so float64 gets a tight
# bound. (The linear modes give torch's bits: test_linear_modes_give_torch_bits.)
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-11, atol=1e-12)}

CASES = [
    ("bilinear", {"size": (9, 13)}), ("bilinear", {"size": (3, 4)}),
    ("bilinear", {"scale_factor": (1.7, 0.6)}), ("bicubic", {"size": (3, 11)}),
    ("bicubic", {"scale_factor": 2}), ("nearest", {"size": (7, 3)}),
    ("nearest", {"scale_factor": 2}), ("nearest-exact", {"size": (7, 3)}),
    ("area", {"size": (3, 2)}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,kwargs", CASES, ids=str)
def test_2d_modes_match_torch(mode, kwargs, dtype):
    align = {"align_corners": False} if mode in ("bilinear", "bicubic") else {}
    check_op(lambda a: F.interpolate(a, mode=mode, **align, **kwargs),
             lambda a: TF.interpolate(a, mode=mode, **align, **kwargs),
             rand_array((2, 3, 5, 7), dtype), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size,align", [((4, 3), False), ((5, 16), False), ((3, 9), True),
                                        ((11, 2), False)], ids=str)
def test_antialias_matches_torch(mode, size, align, dtype):
    check_op(lambda a: F.interpolate(a, size=size, mode=mode, antialias=True,
                                     align_corners=align),
             lambda a: TF.interpolate(a, size=size, mode=mode, antialias=True,
                                      align_corners=align),
             rand_array((2, 3, 13, 10), dtype), **TOL[dtype])


def test_antialias_is_not_plain_bilinear():
    x = ember.arange(16.0).view(1, 1, 4, 4)
    aa = F.interpolate(x, size=(2, 3), mode="bilinear", antialias=True)
    # worked by hand: rows 0-1 / 2-3 weighted 0.75/0.25 around each centre, cols likewise
    # with the stretched triangle: torch gives 3.1571 in the corner
    assert abs(aa[0, 0, 0, 0].item() - 3.157142857) < 1e-5
    assert not np.allclose(aa.numpy(), F.interpolate(x, size=(2, 3), mode="bilinear").numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,shape,size", [("linear", (2, 3, 7), (12,)),
                                             ("linear", (2, 3, 7), (3,)),
                                             ("trilinear", (1, 2, 3, 4, 5), (5, 2, 7)),
                                             ("nearest", (1, 2, 3, 4, 5), (5, 2, 7)),
                                             ("nearest-exact", (2, 3, 7), (4,))], ids=str)
@pytest.mark.parametrize("align", [None, True])
def test_1d_and_3d_modes_match_torch(mode, shape, size, align, dtype):
    if align and mode.startswith("nearest"):
        align = None
    check_op(lambda a: F.interpolate(a, size=size, mode=mode, align_corners=align),
             lambda a: TF.interpolate(a, size=size, mode=mode, align_corners=align),
             rand_array(shape, dtype), **TOL[dtype])


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("size,align", [((5, 7), False), ((4, 20), False), ((5, 3), True),
                                        ((11, 13), True), ((16, 3), False)], ids=str)
def test_uint8_is_torchs_fixed_point_result(mode, antialias, size, align):
    x = rand_array((2, 3, 12, 10), np.uint8, 0, 256)
    got = F.interpolate(ember.tensor(x), size=size, mode=mode, antialias=antialias,
                        align_corners=align)
    want = TF.interpolate(torch.tensor(x), size=size, mode=mode, antialias=antialias,
                          align_corners=align)
    assert_same(got, want)  # uint8: bit for bit


def test_uint8_nearest_and_scale_factor():
    x = rand_array((1, 3, 6, 5), np.uint8, 0, 256)
    for kw in ({"mode": "nearest", "scale_factor": 1.5}, {"mode": "nearest-exact", "size": 4},
               {"mode": "bilinear", "scale_factor": 0.7}):
        assert_same(F.interpolate(ember.tensor(x), **kw), TF.interpolate(torch.tensor(x), **kw))


@pytest.mark.parametrize("mode,kw", [("bilinear", {}), ("bicubic", {}),
                                     ("bilinear", {"antialias": True}),
                                     ("bicubic", {"antialias": True}), ("nearest", {})], ids=str)
@pytest.mark.parametrize("size", [(3, 3), (9, 7)], ids=str)
def test_a_nan_reaches_only_the_outputs_that_read_it(mode, kw, size):
    x = rand_array((1, 1, 6, 5), np.float64)
    x[0, 0, 2, 3] = np.nan
    x[0, 0, 4, 0] = np.inf
    got = F.interpolate(ember.tensor(x), size=size, mode=mode, **kw).numpy()
    want = TF.interpolate(torch.tensor(x), size=size, mode=mode, **kw).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # (an antialiased 6 x 5 -> 3 x 3 reads every input from every output)
    assert 0 < np.isnan(got).sum() < got.size or "antialias" in kw and size == (3, 3)
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("dtype", [ml_dtype for ml_dtype in ("float16", "bfloat16")])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_half_types_within_one_rounding(mode, dtype):
    x = rand_array((1, 2, 5, 6), np.float32)
    e = F.interpolate(ember.tensor(x).to(getattr(ember, dtype)), size=(7, 4), mode=mode)
    t = TF.interpolate(torch.tensor(x).to(getattr(torch, dtype)), size=(7, 4), mode=mode)
    # computed in float32 and rounded once; torch's kernel rounds once more on the way
    assert_same(e, t, rtol=1e-2 if dtype == "bfloat16" else 2e-3, atol=1e-2)


@pytest.mark.parametrize("mode,kw", [("bilinear", {"align_corners": True}),
                                     ("bicubic", {"align_corners": False}),
                                     ("bilinear", {"antialias": True}),
                                     ("bicubic", {"antialias": True}),
                                     ("nearest", {})], ids=str)
def test_finite_differences(mode, kw):
    check_grads(lambda a: F.interpolate(a, size=(3, 5), mode=mode, **kw),
                rand_array((1, 2, 4, 6), np.float64))


@pytest.mark.parametrize("mode,shape,kw", [
    ("nearest", (1, 2, 5), {}), ("nearest", (1, 2, 4, 5), {}), ("nearest", (1, 1, 2, 3, 4), {}),
    ("nearest-exact", (1, 2, 5), {}), ("nearest-exact", (1, 2, 4, 5), {}),
    ("linear", (1, 2, 5), {}), ("bilinear", (1, 2, 4, 5), {}), ("bicubic", (1, 2, 4, 5), {}),
    ("trilinear", (1, 1, 2, 3, 4), {}), ("bilinear", (1, 2, 8, 9), {"antialias": True}),
    ("bicubic", (1, 2, 8, 9), {"antialias": True}), ("area", (1, 2, 4, 5), {})], ids=str)
def test_node_names_are_torchs(mode, shape, kw):
    def name(L):
        x = L.ones(shape, requires_grad=True)
        return type(L.nn.functional.interpolate(x, scale_factor=0.5 if kw else 2, mode=mode,
                                                **kw).grad_fn).__name__

    assert name(ember) == name(torch)


@pytest.mark.parametrize("mode,kw", [("bilinear", {}), ("nearest", {}), ("bicubic", {}),
                                     ("bilinear", {"antialias": True})], ids=str)
def test_channels_last_input_gives_channels_last_output(mode, kw):
    x = rand_array((2, 3, 6, 5))
    e = F.interpolate(ember.tensor(x).contiguous(memory_format=ember.channels_last),
                      size=(4, 9), mode=mode, **kw)
    t = TF.interpolate(torch.tensor(x).contiguous(memory_format=torch.channels_last),
                       size=(4, 9), mode=mode, **kw)
    assert e.is_contiguous(memory_format=ember.channels_last)
    assert_same(e, t, check_stride=True, **TOL[np.float32])


BAD = {
    "antialias nearest": lambda L, x: L.nn.functional.interpolate(x, size=2, antialias=True),
    "antialias linear 3d": lambda L, x: L.nn.functional.interpolate(
        x[0], size=2, mode="linear", antialias=True),
    "unknown mode": lambda L, x: L.nn.functional.interpolate(x, size=2, mode="cubic"),
    "2-d input": lambda L, x: L.nn.functional.interpolate(x[0, 0], size=(2,)),
    "1-d input": lambda L, x: L.nn.functional.interpolate(x[0, 0, 0], size=2),
    "6-d input": lambda L, x: L.nn.functional.interpolate(x[None, None], size=(1, 1, 1, 1)),
    "zero size": lambda L, x: L.nn.functional.interpolate(x, size=(0, 2)),
    "zero size 1d": lambda L, x: L.nn.functional.interpolate(x[0], size=0, mode="linear"),
    "zero size 3d": lambda L, x: L.nn.functional.interpolate(x[None], size=(0, 2, 2)),
    "negative scale": lambda L, x: L.nn.functional.interpolate(x, scale_factor=-1.0,
                                                               mode="bilinear"),
    "scale length": lambda L, x: L.nn.functional.interpolate(x, scale_factor=(2, 2, 2)),
    "size length": lambda L, x: L.nn.functional.interpolate(x, size=(2, 2, 2)),
    "float size": lambda L, x: L.nn.functional.interpolate(x, size=(2.0, 2)),
    "both": lambda L, x: L.nn.functional.interpolate(x, size=2, scale_factor=2),
    "neither": lambda L, x: L.nn.functional.interpolate(x),
    "recompute with size": lambda L, x: L.nn.functional.interpolate(
        x, size=2, recompute_scale_factor=True),
    "align with nearest": lambda L, x: L.nn.functional.interpolate(x, size=2,
                                                                   align_corners=False),
    "bilinear on 3-d": lambda L, x: L.nn.functional.interpolate(x[0], size=2, mode="bilinear"),
    "trilinear on 4-d": lambda L, x: L.nn.functional.interpolate(x, size=2, mode="trilinear"),
    "bicubic on 5-d": lambda L, x: L.nn.functional.interpolate(x[None], size=2, mode="bicubic"),
    "empty spatial": lambda L, x: L.nn.functional.interpolate(x[:, :, :0], size=2,
                                                              mode="bilinear"),
    "long nearest": lambda L, x: L.nn.functional.interpolate(x.long()[:, :1], size=3),
    "long nearest 3d": lambda L, x: L.nn.functional.interpolate(x.long()[None], size=3),
    "long bicubic": lambda L, x: L.nn.functional.interpolate(x.long(), size=3, mode="bicubic"),
    "byte linear": lambda L, x: L.nn.functional.interpolate(x.byte()[0], size=3, mode="linear"),
    "half antialias": lambda L, x: L.nn.functional.interpolate(x.half(), size=3,
                                                               mode="bilinear", antialias=True),
    "bool bilinear": lambda L, x: L.nn.functional.interpolate(x.bool(), size=(300, 3),
                                                              mode="bilinear"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_arguments_raise_torchs_error(case):
    kind = same_error(lambda L: BAD[case](L, L.ones(1, 2, 4, 5)))
    same_message(lambda L: BAD[case](L, L.ones(1, 2, 4, 5)), kind)


@pytest.mark.parametrize("mode,shape", [("linear", (1, 2, 5)), ("bilinear", (1, 2, 4, 5)),
                                        ("bicubic", (1, 2, 4, 5)),
                                        ("trilinear", (1, 1, 2, 3, 4))], ids=str)
def test_nothing_of_the_input_is_saved(mode, shape):
    """PyTorch's upsampling saves nothing: an in-place change of the input after the call
    leaves backward working, with the same gradient."""
    grads = []
    for L in (ember, torch):
        x = L.tensor(rand_array(shape, np.float64), requires_grad=True)
        y = x * 1.0
        out = L.nn.functional.interpolate(y, scale_factor=2, mode=mode)
        with L.no_grad():
            y.mul_(3.0)
        out.pow(2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


# --- the linear modes, bit for bit -------------------------------------------------------
# ATen computes the source index as one fused multiply-add, floors it with `floorf` and adds
# the taps fused (bilinear: its four weights h_i w_j chained; linear and trilinear: one dim
# at a time), so ember's linear modes give the same bits: compared exactly.

LINEAR_SIZES = [{"scale_factor": 1.7}, {"scale_factor": 0.6}, {"scale_factor": 2.3},
                {"scale_factor": 3.1, "recompute_scale_factor": True}, {"size": 11}]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("kwargs", LINEAR_SIZES, ids=str)
@pytest.mark.parametrize("mode,nd", [("linear", 1), ("bilinear", 2), ("trilinear", 3)])
def test_linear_modes_give_torch_bits(mode, nd, kwargs, align_corners, dtype):
    a = rand_array((2, 3) + (5, 6, 7)[:nd], dtype, seed=nd)
    got = F.interpolate(ember.tensor(a), mode=mode, align_corners=align_corners, **kwargs)
    want = TF.interpolate(torch.tensor(a), mode=mode, align_corners=align_corners, **kwargs)
    assert_same(got, want, rtol=0, atol=0)


def test_float64_source_index_is_floored_in_float32_like_aten():
    # 5 -> 15: the fused index of output 4 is 1 - 2^-53, which ATen's floorf rounds up to 1
    # (one tap of weight 1), where a float64 floor would read position 0 with weight 2e-16
    eye = np.eye(5).reshape(5, 1, 5)
    got = F.interpolate(ember.tensor(eye), scale_factor=3.1, mode="linear",
                        recompute_scale_factor=True)
    want = TF.interpolate(torch.tensor(eye), scale_factor=3.1, mode="linear",
                          recompute_scale_factor=True)
    assert_same(got, want, rtol=0, atol=0)
    assert int((got[:, 0, 4] != 0).sum()) == 1


def test_linear_modes_half_types_give_torch_bits():
    a = rand_array((1, 2, 5, 6), seed=3)
    for name in ("float16", "bfloat16"):
        got = F.interpolate(ember.tensor(a).to(getattr(ember, name)), scale_factor=1.7,
                            mode="bilinear")
        want = TF.interpolate(torch.tensor(a).to(getattr(torch, name)), scale_factor=1.7,
                              mode="bilinear")
        assert_same(got.float(), want.float(), rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "trilinear", "area"])
def test_channels_last_3d_input_gives_channels_last_3d_output(mode):
    a = rand_array((2, 3, 4, 5, 6))
    kw = {"size": (2, 3, 3)} if mode == "area" else {"scale_factor": (1, 1.5, 2)}
    got = F.interpolate(ember.tensor(a).contiguous(memory_format=ember.channels_last_3d),
                        mode=mode, **kw)
    want = TF.interpolate(torch.tensor(a).contiguous(memory_format=torch.channels_last_3d),
                          mode=mode, **kw)
    assert_same(got, want, check_stride=True)


def test_one_channel_slice_of_channels_last_stays_channels_last():
    # (N, 1, H, W) sliced from a channels-last tensor is not contiguous: PyTorch's kernel
    # allocates its result channels-last, strides (H W, 1, W, 1)
    a = rand_array((2, 3, 4, 5))
    got = F.interpolate(ember.tensor(a).contiguous(memory_format=ember.channels_last)[:, :1],
                        scale_factor=2)
    want = TF.interpolate(torch.tensor(a).contiguous(memory_format=torch.channels_last)[:, :1],
                          scale_factor=2)
    assert_same(got, want, check_stride=True)


@pytest.mark.parametrize("mode, shape", [("linear", (2, 3, 7)), ("bilinear", (2, 3, 5, 6)),
                                         ("trilinear", (1, 2, 3, 4, 5))])
def test_linear_modes_gradient_finite_and_not(mode, shape):
    """Values are torch's bits; the gradient of a finite output gradient is the product of
    the taps' weights (torch's sums in another order: a few ulps), and an inf in it reaches
    only the inputs its taps read, as in torch (no NaN from a zero weight times inf)."""
    x = rand_array(shape, np.float32, seed=3)
    size = tuple(2 * s + 1 for s in shape[2:])
    for special in (False, True):
        g = rand_array((shape[0], shape[1]) + size, np.float32, seed=4)
        if special:
            g.reshape(-1)[5] = np.inf
        grads = []
        for lib in (ember, torch):
            t = lib.tensor(x, requires_grad=True)
            y = lib.nn.functional.interpolate(t, size=size, mode=mode, align_corners=False)
            y.backward(lib.tensor(g))
            grads.append((y, t.grad))
        assert_same(grads[0][0], grads[1][0])
        eg, tg = grads[0][1].numpy(), grads[1][1].numpy()
        np.testing.assert_array_equal(np.isnan(eg), np.isnan(tg))
        np.testing.assert_array_equal(np.isinf(eg), np.isinf(tg))
        fin = np.isfinite(tg)
        np.testing.assert_allclose(eg[fin], tg[fin], rtol=1e-5, atol=1e-6)
        assert type(grads[0][0].grad_fn).__name__ == type(grads[1][0].grad_fn).__name__
