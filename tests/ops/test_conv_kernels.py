"""The convolution kernels' paths (1x1, depthwise, grouped, stride-1 input gradient as a
full convolution, col2im, batch chunks over the kernel threads): values and the gradients
of input and weight against torch, and gradients of gradients by finite differences."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.ops import _parallel
from ember.ops import conv as C

from helpers import check_grads, check_op, rand_array

TOL = {"rtol": 1e-4, "atol": 1e-4}


def _conv2d(x_shape, w_shape, **kw):
    check_op(lambda x, w: C.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw),
             rand_array(x_shape), rand_array(w_shape, seed=1), **TOL)


@pytest.mark.parametrize("x_shape, w_shape, kw", [
    ((3, 8, 5, 6), (4, 8, 1, 1), {}),  # 1x1: a plain product
    ((3, 8, 5, 6), (4, 8, 1, 1), {"stride": 2}),  # 1x1 strided: im2col of a subsample
    ((3, 8, 5, 6), (6, 4, 1, 1), {"groups": 2}),  # grouped 1x1
    ((2, 4, 7, 6), (6, 4, 3, 3), {"padding": 1}),  # stride 1: dx is a full convolution
    ((2, 4, 7, 6), (6, 4, 3, 3), {"padding": 3}),  # padding past the kernel's reach: col2im
    ((2, 4, 9, 8), (6, 4, 3, 3), {"stride": 2, "padding": 1}),
    ((2, 4, 9, 8), (6, 2, 3, 2), {"stride": (2, 1), "dilation": 2, "groups": 2}),
    ((2, 4, 7, 6), (5, 4, 2, 4), {"padding": "same", "dilation": (1, 2)}),
], ids=str)
def test_conv2d_paths_match_torch(x_shape, w_shape, kw):
    _conv2d(x_shape, w_shape, **kw)


@pytest.mark.parametrize("kw", [
    {"padding": 1}, {"stride": 2, "padding": 1}, {"dilation": 2, "padding": 2},
    {"padding": (0, 2)}, {},
], ids=str)
def test_depthwise_matches_torch(kw):
    _conv2d((2, 6, 8, 7), (6, 1, 3, 3), groups=6, **kw)
    # a channel multiplier of two goes through the grouped product instead
    _conv2d((2, 6, 8, 7), (12, 1, 3, 3), groups=6, **kw)


def test_conv1d_conv3d_paths_match_torch():
    check_op(lambda x, w: C.conv1d(x, w), lambda x, w: TF.conv1d(x, w),
             rand_array((3, 5, 9)), rand_array((4, 5, 1), seed=1), **TOL)
    check_op(lambda x, w: C.conv1d(x, w, padding=2, groups=5),
             lambda x, w: TF.conv1d(x, w, padding=2, groups=5),
             rand_array((3, 5, 9)), rand_array((5, 1, 3), seed=1), **TOL)
    check_op(lambda x, w: C.conv3d(x, w, padding=1, groups=3),
             lambda x, w: TF.conv3d(x, w, padding=1, groups=3),
             rand_array((2, 3, 4, 5, 4)), rand_array((3, 1, 3, 3, 2), seed=1), **TOL)
    check_op(lambda x, w: C.conv3d(x, w, stride=(1, 2, 1)),
             lambda x, w: TF.conv3d(x, w, stride=(1, 2, 1)),
             rand_array((2, 3, 4, 5, 4)), rand_array((4, 3, 1, 1, 1), seed=1), **TOL)


def test_transposed_paths_match_torch():
    # stride 1: the transposed convolution's own forward goes through the full convolution
    check_op(lambda x, w: C.conv_transpose2d(x, w, padding=1, groups=2),
             lambda x, w: TF.conv_transpose2d(x, w, padding=1, groups=2),
             rand_array((2, 4, 5, 6)), rand_array((4, 3, 3, 3), seed=1), **TOL)
    # output padding that dilation allows past the stride
    check_op(lambda x, w: C.conv_transpose2d(x, w, stride=1, output_padding=1, dilation=2),
             lambda x, w: TF.conv_transpose2d(x, w, stride=1, output_padding=1, dilation=2),
             rand_array((2, 3, 5, 4)), rand_array((3, 2, 3, 3), seed=1), **TOL)
    check_op(lambda x, w: C.conv_transpose2d(x, w, stride=2, groups=3),
             lambda x, w: TF.conv_transpose2d(x, w, stride=2, groups=3),
             rand_array((2, 3, 4, 4)), rand_array((3, 1, 3, 3), seed=1), **TOL)


@pytest.mark.parametrize("kw, w_shape", [
    ({"padding": 1}, (6, 4, 3, 3)), ({"stride": 2}, (6, 4, 1, 1)),
    ({"padding": 1, "groups": 4}, (4, 1, 3, 3)),
], ids=str)
def test_float64_matches_torch(kw, w_shape):
    check_op(lambda x, w: C.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw),
             rand_array((2, 4, 7, 6), np.float64), rand_array(w_shape, np.float64, seed=1),
             rtol=1e-10, atol=1e-10)


def test_non_contiguous_input_matches_torch():
    base = rand_array((2, 6, 9, 8))
    for view, c in ((lambda a: a.permute(0, 1, 3, 2), 6), (lambda a: a[:, ::2, 1:, ::2], 3)):
        w = rand_array((5, c, 3, 3), seed=1)
        x_e = view(ember.tensor(base)).requires_grad_()
        x_t = view(torch.tensor(base)).requires_grad_()
        assert not x_e.is_contiguous()
        w_e, w_t = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        out_e = C.conv2d(x_e, w_e, padding=1)
        out_t = TF.conv2d(x_t, w_t, padding=1)
        np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), **TOL)
        out_e.sum().backward()
        out_t.sum().backward()
        np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), **TOL)
        np.testing.assert_allclose(w_e.grad.numpy(), w_t.grad.numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("chunk_bytes", [1, 1 << 30], ids=["one-sample-chunks", "one-chunk"])
def test_batch_chunks_and_threads_match_torch(monkeypatch, chunk_bytes):
    """A batch large enough to share out to the kernel threads, cut into one-sample chunks
    (scratch buffers reused across chunks, partial weight gradients summed) or not."""
    monkeypatch.setattr(_parallel, "BATCH_CHUNK_BYTES", chunk_bytes)
    for w_shape, kw in (((32, 16, 3, 3), {"padding": 1}), ((32, 16, 3, 3), {"stride": 2}),
                        ((32, 16, 1, 1), {}), ((16, 1, 3, 3), {"padding": 1, "groups": 16})):
        check_op(lambda x, w, k=kw: C.conv2d(x, w, **k),
                 lambda x, w, k=kw: TF.conv2d(x, w, **k),
                 rand_array((24, 16, 16, 16)), rand_array(w_shape, seed=1),
                 rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("kw, w_shape", [
    ({"groups": 2, "padding": 1}, (2, 1, 2, 3)),  # depthwise
    ({"stride": 2}, (3, 2, 1, 1)),  # 1x1 strided
    ({}, (3, 2, 1, 1)),  # 1x1 plain product
], ids=str)
def test_double_backward_by_finite_differences(kw, w_shape):
    x0, w0 = rand_array((2, 2, 5, 4), np.float64), rand_array(w_shape, np.float64, seed=1)

    def grad_norms(x, w):
        x, w = (t if t.requires_grad else t.requires_grad_() for t in (x, w))
        y = C.conv2d(x, w, **kw)
        gx, gw = ember.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        return (gx * gx).sum() + (gw ** 3).sum()

    check_grads(lambda x: grad_norms(x, ember.tensor(w0)), x0, rtol=1e-4, atol=1e-6)
    check_grads(lambda w: grad_norms(ember.tensor(x0), w), w0, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("x_shape, w_shape, kw", [
    ((3, 64, 6, 5), (8, 64, 3, 3), {"padding": 1}),  # forward, dx as a full convolution
    ((3, 64, 7, 6), (8, 64, 3, 3), {}),  # unpadded: dx by col2im
    ((3, 32, 9, 8), (8, 32, 3, 3), {"stride": 2, "padding": 1}),  # strided col2im
    ((3, 64, 9, 8), (8, 64, 3, 2), {"stride": (2, 1), "dilation": (1, 2), "padding": (1, 0)}),
    ((2, 64, 9, 8), (8, 64, 1, 1), {"stride": 2}),  # 1x1: not channels-last
], ids=str)
def test_channels_last_columns_match_torch(x_shape, w_shape, kw):
    """From 64 channels (32 for a strided dx) im2col runs over channels-last copies."""
    from ember.ops import _conv_kernels as K

    geo = K.geometry(x_shape, w_shape[2:], (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    assert K._last(geo, x_shape[1], 32) == (w_shape[2:] != (1, 1))
    _conv2d(x_shape, w_shape, **kw)


def test_channels_last_conv1d_conv3d_match_torch():
    check_op(lambda x, w: C.conv1d(x, w, padding=1, stride=2),
             lambda x, w: TF.conv1d(x, w, padding=1, stride=2),
             rand_array((2, 64, 9)), rand_array((5, 64, 3), seed=1), **TOL)
    check_op(lambda x, w: C.conv3d(x, w, padding=(1, 0, 1)),
             lambda x, w: TF.conv3d(x, w, padding=(1, 0, 1)),
             rand_array((2, 64, 3, 4, 3)), rand_array((4, 64, 2, 2, 3), seed=1), **TOL)


@pytest.mark.parametrize("x_shape, w_shape, kw", [
    ((2, 6, 9, 8), (5, 6, 3, 3), {}),  # the MNIST CNN's case: unpadded
    ((2, 6, 7, 6), (5, 6, 3, 2), {"padding": (3, 2), "dilation": (1, 2)}),  # padded plane
    ((2, 8, 7, 7), (6, 4, 3, 3), {"groups": 2}),
], ids=str)
def test_stride1_col2im_over_the_flat_plane_matches_torch(x_shape, w_shape, kw):
    """The 2-d stride-1 input gradient by col2im over a widened output gradient."""
    _conv2d(x_shape, w_shape, **kw)


def test_stride1_transposed_with_output_padding_matches_torch():
    # rows past every window's reach stay zero
    check_op(lambda x, w: C.conv_transpose2d(x, w, padding=2, output_padding=1, dilation=2),
             lambda x, w: TF.conv_transpose2d(x, w, padding=2, output_padding=1, dilation=2),
             rand_array((2, 6, 5, 4)), rand_array((6, 5, 3, 3), seed=1), **TOL)


def test_wide_paths_keep_infinities_where_torch_does():
    """The widened products' zero columns meet inputs or weights no window reads: an inf
    there must not turn into NaN (the depthwise weight gradient, the stride-1 dx)."""
    x = rand_array((2, 6, 7, 8))
    x[:, :, :, -1] = np.inf  # read only by the last taps of the last columns
    check_op(lambda x, w: C.conv2d(x, w, padding=1, groups=6),
             lambda x, w: TF.conv2d(x, w, padding=1, groups=6), x,
             rand_array((6, 1, 3, 3), seed=1), **TOL)
    w = rand_array((5, 6, 3, 3), seed=1)
    w[0, 0, 0, 0] = np.inf
    check_op(lambda x, w: C.conv2d(x, w), lambda x, w: TF.conv2d(x, w),
             rand_array((2, 6, 9, 8)), w, **TOL)


@pytest.mark.parametrize("x_shape, w_shape, kw", [
    ((3, 8, 9, 7), (5, 8, 3, 3), {"padding": 1}),
    ((3, 16, 9, 8), (4, 16, 2, 3), {"padding": "same", "dilation": (2, 1)}),
    ((2, 8, 6, 9), (3, 8, 3, 3), {}),
], ids=str)
def test_forward_over_the_flat_plane_matches_torch(x_shape, w_shape, kw):
    """From 8 to 63 channels a 2-d stride-1 forward runs over the padded plane's rows."""
    from ember.ops import _conv_kernels as K

    assert K._wide_forward(K.geometry(x_shape, w_shape[2:], (1, 1), ((0, 0),) * 2, (1, 1), 1),
                           x_shape[1])
    _conv2d(x_shape, w_shape, **kw)


def test_weight_gradient_of_few_columns_matches_torch():
    """A stem's 3 input channels: the weight gradient as a product per sample, summed."""
    _conv2d((5, 3, 8, 9), (4, 3, 3, 3), padding=1)
    _conv2d((5, 1, 8, 9), (4, 1, 3, 3), stride=2)


@pytest.mark.parametrize("chunk_bytes", [1, 1 << 30], ids=["one-sample-chunks", "one-chunk"])
def test_new_paths_over_chunks_and_threads_match_torch(monkeypatch, chunk_bytes):
    """The channels-last, flat-plane and depthwise weight-gradient paths over batch chunks
    shared out to the kernel threads (scratch reused, partial weight gradients summed)."""
    monkeypatch.setattr(_parallel, "BATCH_CHUNK_BYTES", chunk_bytes)
    for x_shape, w_shape, kw in (((16, 64, 8, 8), (8, 64, 3, 3), {"padding": 1}),
                                 ((32, 64, 13, 13), (8, 64, 3, 3), {"stride": 2, "padding": 1}),
                                 ((16, 16, 12, 12), (32, 16, 3, 3), {}),
                                 ((64, 32, 24, 24), (32, 1, 3, 3), {"padding": 1,
                                                                   "groups": 32})):
        check_op(lambda x, w, k=kw: C.conv2d(x, w, **k),
                 lambda x, w, k=kw: TF.conv2d(x, w, **k),
                 rand_array(x_shape), rand_array(w_shape, seed=1), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("fn, x_shape, w_shape, kw", [
    ("conv2d", (0, 32, 8, 8), (32, 32, 3, 3), {"padding": 1}),  # Winograd's shape
    ("conv2d", (0, 64, 26, 26), (32, 64, 3, 3), {}),
    ("conv2d", (0, 3, 8, 8), (8, 3, 3, 3), {"stride": 2}),
    ("conv2d", (0, 6, 8, 8), (6, 1, 3, 3), {"groups": 6}),  # depthwise
    ("conv2d", (0, 8, 5, 5), (4, 8, 1, 1), {}),  # 1x1
    ("conv1d", (0, 4, 9), (5, 4, 3), {}),
    ("conv3d", (0, 2, 4, 4, 4), (3, 2, 3, 3, 3), {"padding": 1}),
    ("conv_transpose2d", (0, 8, 5, 5), (8, 4, 3, 3), {"stride": 2}),
], ids=str)
def test_an_empty_batch_gives_empty_outputs_and_zero_weight_gradients(fn, x_shape, w_shape,
                                                                      kw):
    """A batch of none: the output and input gradient are empty, the weight gradient is
    zeros, as in torch (the batch chunks divided by zero here before)."""
    check_op(lambda x, w: getattr(ember.nn.functional, fn)(x, w, **kw),
             lambda x, w: getattr(TF, fn)(x, w, **kw),
             rand_array(x_shape), rand_array(w_shape, seed=1), **TOL)


def test_geometries_are_kept_per_call_and_made_from_lists_too():
    """`geometry` keeps one Geometry per distinct call (the same object back) and still
    makes one from list params (not a key); `with_out` gives an adjoint's output size;
    sizes are Python ints as before."""
    from ember.ops import _conv_kernels as K

    a = K.geometry((2, 3, 9, 8), (3, 3), (1, 2), ((1, 1), (0, 2)), (1, 1), 1)
    assert K.geometry((5, 7, 9, 8), (3, 3), (1, 2), ((1, 1), (0, 2)), (1, 1), 1) is a
    b = K.geometry([2, 3, 9, 8], [3, 3], [1, 2], [[1, 1], [0, 2]], [1, 1], 1)
    assert b == a and a.out == (9, 4) and a.positions == 36 and a.taps == 9
    assert type(a.positions) is int and type(a.taps) is int
    wide = K.with_out(a, (10, 5))
    assert wide.out == (10, 5) and wide.k == a.k and wide.padding == a.padding
    assert K.with_out(a, (10, 5)) is wide and K.with_out(a, [9, 4]) is a
    assert K.geometry((1, 1, 9, 8), (3, 3), (1, 2), ((1, 1), (0, 2)), (1, 1), 3) != a


def test_winograd_layers_train_as_torch_on_two_threads():
    """A 3x3 same-padded layer on enough channels for Winograd (its input gradient read
    from the unflipped weight's transform, that transform shared over the threads),
    forward and both gradients against torch at one and two threads."""
    from native._differential import threads

    x0, w0 = rand_array((3, 40, 9, 10)), rand_array((33, 40, 3, 3), seed=1) * 0.1
    xt, wt = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    TF.conv2d(xt, wt, padding=1).square().sum().backward()
    for n in (1, 2):
        with threads(n):
            x, w = ember.tensor(x0, requires_grad=True), ember.tensor(w0, requires_grad=True)
            C.conv2d(x, w, padding=1).square().sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=2e-4, atol=2e-4)
        np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=2e-4, atol=2e-4)
