"""The channels-last convolutions of ember.mlx.core._conv against MLX's: values and
gradients for strides, paddings, dilations, groups, flips and transposes."""

import numpy as np
import pytest

import ember.mlx.core as mx
from ember.mlx.core import _conv

RNG = np.random.default_rng(5)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = [
    ("conv1d", _arr(2, 9, 4), _arr(6, 3, 4), {}),
    ("conv1d", _arr(2, 9, 4), _arr(6, 3, 2), {"stride": 2, "padding": 1, "groups": 2}),
    ("conv1d", _arr(2, 9, 4), _arr(6, 3, 4), {"dilation": 2}),
    ("conv2d", _arr(2, 7, 6, 3), _arr(5, 3, 2, 3), {}),
    ("conv2d", _arr(2, 7, 6, 4), _arr(4, 3, 3, 1),
     {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 4}),
    ("conv3d", _arr(1, 5, 4, 6, 2), _arr(3, 2, 3, 2, 2), {"padding": 1}),
    ("conv_general", _arr(2, 7, 6, 3), _arr(5, 3, 2, 3),
     {"padding": ([1, 0], [2, 1]), "input_dilation": 2, "flip": True}),
    ("conv_general", _arr(2, 9, 4), _arr(6, 3, 4), {"kernel_dilation": 2, "stride": 2}),
    ("conv_transpose1d", _arr(2, 5, 4), _arr(3, 3, 4), {"stride": 2, "padding": 1}),
    ("conv_transpose1d", _arr(2, 5, 4), _arr(6, 3, 2), {"groups": 2, "output_padding": 0}),
    ("conv_transpose2d", _arr(2, 4, 5, 3), _arr(2, 3, 3, 3), {"stride": 2, "dilation": 2}),
]


def test_conv_transpose_output_padding_matches_mlx_forward(mlx, close):
    """Forward only: MLX 0.32.4's input gradient of conv_transpose2d with
    output_padding has the wrong shape ((2, 3, 4, 3) for a (2, 4, 5, 3) input)."""
    x, w = _arr(2, 4, 5, 3), _arr(2, 3, 3, 3)
    ours = _conv.conv_transpose2d(mx.array(x), mx.array(w), stride=2, output_padding=1)
    theirs = mlx.conv_transpose2d(mlx.array(x), mlx.array(w), stride=2, output_padding=1)
    close(ours, theirs, rtol=1e-4, atol=1e-5)
    g = mx.grad(lambda x: mx.sum(_conv.conv_transpose2d(x, mx.array(w), stride=2,
                                                         output_padding=1)))(mx.array(x))
    assert g.shape == x.shape


PADDED = [  # (op, input, weight, arguments): output padding at or past the stride
    ("conv_transpose2d", _arr(1, 4, 5, 3), _arr(2, 3, 3, 3), {"stride": 2, "padding": 1,
                                                              "output_padding": 2}),
    ("conv_transpose2d", _arr(1, 4, 5, 3), _arr(2, 7, 7, 3), {"stride": 2, "padding": 3,
                                                              "output_padding": 2}),
    ("conv_transpose2d", _arr(1, 4, 5, 3), _arr(2, 3, 3, 3),
     {"stride": (2, 3), "padding": (1, 0), "output_padding": (2, 4)}),
    ("conv_transpose2d", _arr(1, 4, 5, 3), _arr(2, 3, 3, 3), {"stride": 2, "padding": 1,
                                                              "dilation": 2, "output_padding": 3}),
    ("conv_transpose1d", _arr(2, 4, 3), _arr(2, 3, 3), {"stride": 1, "output_padding": 1}),
    ("conv_transpose3d", _arr(1, 3, 2, 3, 2), _arr(2, 2, 3, 2, 2), {"stride": 2,
                                                                    "output_padding": 3}),
]


@pytest.mark.parametrize("fn,x,w,kw", PADDED, ids=[str(i) for i in range(len(PADDED))])
def test_output_padding_past_the_stride_pads_as_mlx(mlx, close, fn, x, w, kw):
    # MLX's general convolution takes it (ember's, PyTorch's, refuses): the rows past the
    # uncropped result are zeros, those the padding cropped come back
    ours = getattr(_conv, fn)(mx.array(x), mx.array(w), **kw)
    theirs = getattr(mlx, fn)(mlx.array(x), mlx.array(w), **kw)
    # NOTE: the taps summed in another order: atol 1e-5
    close(ours, theirs, rtol=1e-4, atol=1e-5)


def _run(m, fn, x, w, kw):
    def f(x, w):
        return m.sum(m.sin(getattr(m, fn)(x, w, **kw)))
    out = getattr(m, fn)(m.array(x), m.array(w), **kw)
    return out, m.grad(f, argnums=[0, 1])(m.array(x), m.array(w))


@pytest.mark.parametrize("fn,x,w,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_conv_matches_mlx(mlx, close, fn, x, w, kw):
    ours = _run(_Face, fn, x, w, kw)
    theirs = _run(mlx, fn, x, w, kw)
    # NOTE: convolutions sum in another order: atol 1e-5
    close(ours, theirs, rtol=1e-4, atol=1e-5)


class _Face:
    """ember.mlx's core with the convolutions it will export (mx.conv2d, ...)."""

    def __getattr__(self, name):
        return getattr(_conv, name, None) or getattr(mx, name)


_Face = _Face()


def test_channel_mismatch_raises_like_mlx(mlx):
    with pytest.raises(ValueError) as a:
        _conv.conv2d(mx.zeros((1, 4, 4, 3)), mx.zeros((2, 3, 3, 2)))
    with pytest.raises(ValueError) as b:
        mlx.conv2d(mlx.zeros((1, 4, 4, 3)), mlx.zeros((2, 3, 3, 2)))
    assert str(a.value) == str(b.value)


CROPPED = [  # (op, input, weight, arguments): padding past the kernel, negative output padding
    ("conv_transpose1d", _arr(2, 8, 3), _arr(2, 3, 3), {"stride": 2, "padding": 3}),
    ("conv_transpose1d", _arr(2, 8, 3), _arr(2, 4, 3), {"stride": 2, "padding": 5}),
    ("conv_transpose1d", _arr(2, 8, 3), _arr(2, 3, 3), {"stride": 1, "output_padding": -2}),
    ("conv_transpose1d", _arr(2, 8, 3), _arr(2, 3, 3), {"stride": 2, "padding": 1,
                                                        "output_padding": -1}),
    ("conv_transpose2d", _arr(1, 5, 6, 4), _arr(4, 3, 3, 2),
     {"stride": (2, 1), "padding": (3, 1), "output_padding": (1, -1), "groups": 2}),
    ("conv_transpose2d", _arr(1, 5, 6, 3), _arr(2, 3, 3, 3), {"stride": 2, "padding": 4,
                                                              "dilation": 2}),
    ("conv_transpose3d", _arr(1, 3, 4, 3, 2), _arr(2, 2, 3, 2, 2),
     {"stride": 2, "padding": (1, 3, 0), "output_padding": (0, 1, -1)}),
]


@pytest.mark.parametrize("fn,x,w,kw", CROPPED, ids=[str(i) for i in range(len(CROPPED))])
def test_negative_transpose_padding_crops_as_mlx(mlx, close, fn, x, w, kw):
    # MLX runs the transpose as a general convolution whose padding, k - 1 - padding low
    # and that plus output_padding high, turns negative here: it crops the input before
    # dilating it by the stride (PyTorch's transpose refuses or sizes it otherwise)
    def run(m, conv):
        def f(x, w):
            return m.sum(m.sin(conv(x, w, **kw)))
        return conv(m.array(x), m.array(w), **kw), m.grad(f, argnums=[0, 1])(
            m.array(x), m.array(w))
    # NOTE: the taps summed in another order: atol 1e-5
    close(run(_Face, getattr(_conv, fn)), run(mlx, getattr(mlx, fn)), rtol=1e-4, atol=1e-5)
