"""A convolution's geometry refused as PyTorch refuses it (negative padding and output
padding, non-positive strides, negative and zero dilations, a transposed output smaller
than one, inputs and weights of the wrong rank), in its words and order; and the node names of a
transposed convolution's gradients of gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import rand_array, same_message

CONV = {1: "conv1d", 2: "conv2d", 3: "conv3d"}
CONVT = {1: "conv_transpose1d", 2: "conv_transpose2d", 3: "conv_transpose3d"}


def _call(name, x_shape, w_shape, **kw):
    def call(L):
        fn = getattr(L.nn.functional, name)
        return fn(L.ones(*x_shape), L.ones(*w_shape), **kw)
    return call


GEOMETRY = [  # (transposed, kwargs, kernel)
    (False, dict(stride=0), 2), (False, dict(stride=-1), 2), (False, dict(padding=-1), 2),
    (False, dict(dilation=0), 2), (False, dict(dilation=-1), 2), (False, dict(dilation=3), 3),
    (True, dict(stride=0), 2), (True, dict(padding=-1), 2), (True, dict(dilation=0), 2),
    (True, dict(output_padding=-1), 2), (True, dict(output_padding=-1, padding=-1), 2),
    (True, dict(dilation=0, output_padding=1), 2),
]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed, kw, k", GEOMETRY)
def test_geometry_refused_in_torchs_words(nd, transposed, kw, k):
    x = (1, 4) + (5,) * nd
    w = ((4, 2) if transposed else (8, 4)) + (k,) * nd
    same_message(_call((CONVT if transposed else CONV)[nd], x, w, **kw))


def test_sign_checks_follow_the_bias_dtype_and_precede_the_channels():
    same_message(lambda L: L.nn.functional.conv1d(L.ones(1, 4, 5), L.ones(8, 4, 2),
                                                  L.ones(8, dtype=L.float64), padding=-1))
    same_message(_call("conv1d", (1, 4, 5), (8, 3, 2), padding=-1))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("x_len, kw", [(1, dict(padding=2)), (1, dict(padding=1)),
                                       (2, dict(padding=3, stride=2, output_padding=1))])
def test_transposed_output_too_small(nd, x_len, kw):
    for x in ((1, 4) + (x_len,) * nd, (4,) + (x_len,) * nd):  # (batched, unbatched)
        same_message(_call(CONVT[nd], x, (4, 2) + (1,) * nd, **kw))


@pytest.mark.parametrize("name, x, w, kw", [
    ("conv1d", (1, 4, 5), (8, 4, 2, 2), {}), ("conv1d", (4, 5), (8, 4, 2, 2, 2), {}),
    ("conv1d", (1, 4, 5), (8, 4), {}), ("conv2d", (1, 4, 5, 5), (8, 4), {}),
    ("conv2d", (4, 5, 5), (8, 4, 2), {}), ("conv2d", (1, 4, 5, 5), (8, 4, 2), dict(stride=2)),
    ("conv2d", (1, 4, 5, 5), (8, 4, 2), dict(stride=(2,))),
    ("conv2d", (1, 4, 5, 5), (8, 4, 2), dict(stride=(2,), padding=(1,), dilation=(1,))),
    ("conv2d", (1, 4, 5, 5), (8, 4, 2), dict(padding="same")),
    ("conv2d", (1, 4, 5, 5), (8, 4, 2), dict(padding="valid")),
    ("conv2d", (1, 4, 5, 5), (8, 4, 2), dict(stride=(1,), dilation=(1,), padding="valid")),
    ("conv2d", (1, 4, 5, 5), (8, 4, 2), dict(stride=(1,), dilation=(1,), padding="same")),
    ("conv3d", (1, 4, 5, 5, 5), (8, 4, 2, 2), {}),
    ("conv_transpose1d", (4, 5), (4, 2, 2, 2), {}),
    ("conv_transpose2d", (1, 4, 5, 5), (4, 2, 2), dict(stride=2)),
    ("conv_transpose2d", (1, 4, 5, 5), (4, 2, 2),
     dict(stride=(2,), padding=(1,), dilation=(1,), output_padding=(0, 0))),
])
def test_weight_of_the_wrong_rank(name, x, w, kw):
    same_message(_call(name, x, w, **kw))


@pytest.mark.parametrize("name, x", [("conv_transpose1d", (2,)), ("conv_transpose2d", (2, 4)),
                                     ("conv_transpose3d", (1, 1, 1, 1, 2, 2)),
                                     ("conv2d", (2, 4))])
def test_an_input_of_the_wrong_rank_names_the_op(name, x):
    nd = int(name[-2])
    w = ((2, 3) if "transpose" in name else (3, 2)) + (3,) * nd
    same_message(_call(name, x, w))


@pytest.mark.parametrize("kw", [dict(stride=3, padding=2, output_padding=1, dilation=2, groups=2),
                                dict(stride=1, dilation=4)])
def test_transposed_double_backward_nodes_and_values(kw):
    x, w = rand_array((2, 4, 7), seed=1), rand_array((4, 2, 3), seed=2)
    res = []
    for L in (ember, torch):
        xs, ws = L.tensor(x, requires_grad=True), L.tensor(w, requires_grad=True)
        y = L.nn.functional.conv_transpose1d(xs, ws, **kw)
        gy = L.ones(*y.shape)
        gx, gw = L.autograd.grad(y, (xs, ws), gy, create_graph=True)
        ggx, = L.autograd.grad(gw.sum() + (gx * gx).sum(), xs)
        res.append((gx.grad_fn.name(), gw.grad_fn.name(), ggx))
    assert res[0][:2] == res[1][:2] == ("ConvolutionBackwardBackward0",) * 2
    # (float32 sums of products in another order than torch's kernels)
    np.testing.assert_allclose(res[0][2].numpy(), res[1][2].numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.conv2d([[1.0]], L.ones(1, 1, 1, 1)),
    lambda L: L.nn.functional.conv1d(L.ones(1, 1, 3), [[[1.0]]]),
    lambda L: L.conv2d(np.ones((1, 1, 2, 2), np.float32), L.ones(1, 1, 1, 1)),
    lambda L: L.nn.Conv2d(1, 1, 1)([[[[1.0]]]]),  # a module passes all seven arguments
    lambda L: L.nn.Conv1d(1, 1, 1)(np.ones((1, 1, 2), np.float32)),
    lambda L: L.nn.functional.conv_transpose2d(L.ones(1, 1, 2, 2), [1.0]),
    lambda L: L.nn.functional.conv_transpose1d(L.ones(1, 1, 2), L.ones(1, 1, 1), [1.0]),
    lambda L: L.nn.ConvTranspose2d(1, 1, 1)([[[[1.0]]]]),
])
def test_non_tensor_operands_refused_in_torch_words(call):
    assert same_message(call, TypeError)


# (name, input, weight, kwargs, dtype): each kernel PyTorch would pick refuses a zero-length
# side in its own words (oneDNN's for a large float32 one), the dilated and transposed ones
# before their dtype checks
ZERO_KERNELS = [
    ("conv2d", (1, 2, 4, 4), (3, 2, 0, 2), {}, "float32"),
    ("conv1d", (1, 2, 4), (3, 2, 0), {}, "float64"),
    ("conv3d", (1, 2, 4, 4, 4), (3, 2, 1, 0, 1), {}, "float32"),
    ("conv2d", (2, 16, 8, 8), (16, 16, 0, 3), {}, "float32"),
    ("conv1d", (1, 2, 4), (3, 2, 0), dict(dilation=2), "int32"),
    ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 0, 2), dict(stride=2, output_padding=1), "int32"),
    ("conv_transpose3d", (1, 2, 4, 4, 4), (2, 3, 0, 1, 1), {}, "complex64"),
    ("conv2d", (1, 2, 1, 1), (3, 2, 0, 5), {}, "float32"),  # (the input is smaller first)
]


@pytest.mark.parametrize("name, x, w, kw, dtype", ZERO_KERNELS, ids=str)
def test_a_zero_length_kernel_refused_in_the_words_of_the_kernel_torch_picks(name, x, w, kw,
                                                                               dtype):
    def call(L):
        d = getattr(L, dtype)
        return getattr(L.nn.functional, name)(L.ones(*x, dtype=d), L.ones(*w, dtype=d), **kw)
    same_message(call)
