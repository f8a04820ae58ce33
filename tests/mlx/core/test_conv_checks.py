"""MLX's convolutions check their operands and parameters as MLX 0.32.4's general
convolution does (groups and rank first, then the input's type, the ranks, the channel
counts, the parameter vectors, the output size), whichever front end is called; and what
MLX accepts ember computes: one-entry parameter vectors stand for every axis (conv1d of
a 4-d input is a 2-d convolution), negative padding crops, mixed operand types promote,
and outputs with no elements are empty arrays."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("def z(*shape, dtype=None):\n    return mx.zeros(shape, dtype or mx.float32)\n"
         "def r(*shape):\n    return mx.arange(int(np.prod(shape)), dtype=mx.float32)"
         ".reshape(shape) % 7 - 3")


@pytest.mark.parametrize("call", [
    # the channel counts and groups
    "mx.conv1d(z(1, 5, 6), z(3, 3, 3), groups=2)",
    "mx.conv1d(z(1, 5, 6), z(4, 3, 2), groups=2)",
    "mx.conv1d(z(1, 5, 6), z(4, 3, 3), groups=4)",
    "mx.conv1d(z(1, 5, 6), z(4, 3, 4))",
    "mx.conv3d(z(1, 5, 5, 5, 6), z(4, 3, 3, 3, 3), groups=2)",
    "mx.conv_transpose1d(z(1, 5, 6), z(4, 3, 3), groups=4)",
    # the input's type (only the input's), before its rank
    "mx.conv1d(z(1, 5, 6, dtype=mx.int32), z(4, 3, 6))",
    "mx.conv1d(z(5, 6, dtype=mx.bool_), z(4, 3, 6))",
    "mx.conv1d(z(1, 5, 6, dtype=mx.complex64), z(4, 3, 6))",
    "mx.conv_transpose1d(z(1, 5, 6, dtype=mx.int32), z(4, 3, 6))",
    # ranks
    "mx.conv1d(z(5, 6), z(4, 3, 6))",
    "mx.conv1d(z(1, 2, 2, 2, 5, 6), z(4, 3, 6))",
    "mx.conv1d(z(1, 5, 5, 6), z(4, 3, 6))",
    "mx.conv1d(z(1, 5, 6), z(4, 6))",
    "mx.conv2d(z(1, 5, 6), z(4, 3, 6))",
    "mx.conv3d(z(1, 5, 5, 6), z(4, 3, 3, 6))",
    "mx.conv_transpose1d(z(6), z(4, 3, 6))",
    # parameter vectors and sizes
    "mx.conv1d(z(1, 5, 6), z(4, 9, 6))",
    "mx.conv1d(z(1, 5, 6), z(4, 3, 6), dilation=3)",
    "mx.conv1d(z(1, 5, 6), z(4, 3, 6), padding=-2)",
    "mx.conv1d(z(1, 5, 6), z(4, 3, 6), stride=0)",
    "mx.conv2d(z(1, 5, 5, 6), z(4, 3, 3, 6), dilation=(1, 0))",
    "mx.conv_general(z(1, 5, 6), z(4, 3, 6), padding=([1], [2, 3]))",
    "mx.conv_general(z(1, 5, 5, 6), z(4, 3, 3, 6), stride=[1, 2, 3])",
    "mx.conv_general(z(1, 5, 5, 6), z(4, 3, 3, 6), input_dilation=0)",
    "mx.conv_general(z(1, 5, 5, 6), z(4, 3, 3, 6), kernel_dilation=[1, 2, 2])",
    "mx.conv_general(z(1, 5, 5, 6), z(4, 3, 3, 6), padding=[1, 2, 3])",
    "mx.conv_transpose1d(z(1, 5, 6), z(4, 3, 6), padding=4)",
    "mx.conv_transpose1d(z(1, 5, 6), z(4, 3, 6), stride=0)",
    # crops past the input: an empty input (MLX's slice), whose shape the message shows
    "mx.conv_general(z(1, 5, 6), z(4, 3, 6), padding=([-6], [1]))",
    "mx.conv_general(z(1, 5, 6), z(4, 1, 6), padding=([-3], [-9]))",
    "mx.conv_general(z(1, 5, 6), z(4, 1, 6), padding=([0], [-11]))",
    "mx.conv_transpose1d(z(2, 5, 4), z(3, 3, 4), padding=7)",
    "mx.conv_transpose2d(z(2, 5, 6, 4), z(3, 3, 3, 4), stride=2, padding=5)",
    "mx.conv_transpose2d(z(2, 5, 6, 4), z(3, 3, 3, 4), stride=2, padding=(4, 6))",
])
def test_errors_are_mlxs(call):
    assert outcome(call, mx, SETUP) == outcome(call, mlx, SETUP)


@pytest.mark.parametrize("call", [
    "mx.conv1d(r(1, 5, 5, 6), r(4, 3, 3, 6))",                    # a 2-d convolution
    "mx.conv1d(r(1, 5, 5, 6), r(4, 3, 3, 3), groups=2, stride=2)",
    "mx.conv_general(r(1, 5, 5, 2), r(4, 3, 2, 2), stride=[2], padding=[1])",
    "mx.conv1d(r(1, 5, 6), r(4, 3, 6), padding=-1)",               # negative padding crops
    "mx.conv2d(r(1, 5, 5, 2), r(4, 3, 2, 2), padding=(1, -1))",
    "mx.conv_general(r(1, 5, 6), r(4, 3, 6), padding=([2], [-1]), stride=2)",
    "mx.conv1d(r(1, 5, 6), r(4, 3, 6).astype(mx.int32))",        # types promote
    "mx.conv1d(r(1, 5, 6), r(4, 3, 6).astype(mx.bfloat16))",
    "mx.conv1d(r(1, 5, 6).astype(mx.float16), r(4, 3, 6).astype(mx.bfloat16))",
    # nothing to compute (shapes only: MLX's CPU kernel crashes on evaluating these)
    "mx.conv1d(z(1, 5, 6), z(0, 3, 6)).shape",
    "mx.conv1d(z(0, 5, 6), z(4, 3, 6)).shape",
    "mx.conv_transpose1d(r(1, 5, 6), r(4, 3, 6), padding=3)",
    "mx.conv_transpose1d(r(1, 5, 6), r(4, 3, 6), stride=2, padding=1, output_padding=1)",
    # a high crop past the input's size counts from its end (MLX's slice): 9 of 5 keeps 1
    "mx.conv_general(r(1, 5, 2), r(3, 1, 2), padding=([0], [-6]))",
    "mx.conv_general(r(1, 5, 2), r(3, 1, 2), padding=([0], [-9]))",
    "mx.conv_general(r(1, 5, 2), r(3, 1, 2), padding=([1], [-7]))",
    "mx.conv_general(r(1, 5, 2), r(3, 1, 2), padding=([-2], [-6]))",
    "mx.conv_general(r(1, 5, 5, 2), r(3, 1, 2, 2), padding=([-1, 0], [-8, -1]))",
    # an empty crop then padding: zeros only
    "mx.conv_general(r(1, 5, 2), r(3, 1, 2), padding=([-7], [5]))",
    "mx.conv_general(r(1, 5, 2), r(3, 2, 2), padding=([-7], [6]), input_dilation=2)",
    "mx.conv_general(r(1, 5, 2), r(3, 1, 2), padding=([2], [-9]))",
])
def test_what_mlx_accepts_is_computed(call):
    # small integers in and out: the sums are exact in float32 (and bfloat16 here)
    assert outcome(call, mx, SETUP) == outcome(call, mlx, SETUP)


def test_a_window_past_the_input_counts_as_mlxs_does():
    # (5 - 6) / 2 rounds toward zero in MLX's output size: one window (MLX reads past the
    # input for it; its values are undefined, so only the shape is compared)
    x, w = np.ones((1, 5, 6), np.float32), np.ones((4, 6, 6), np.float32)
    ours = mx.conv1d(mx.array(x), mx.array(w), stride=2)
    assert ours.shape == mlx.conv1d(mlx.array(x), mlx.array(w), stride=2).shape == (1, 1, 4)
