"""Convolution layers against MLX's: parameter shapes, reprs, forward values and
gradients."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

RNG = np.random.default_rng(6)

LAYERS = [
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1}, (2, 9, 4)),
    ("Conv1d", (4, 6, 3), {"groups": 2, "dilation": 2, "bias": False}, (2, 9, 4)),
    ("Conv2d", (3, 5, 3), {"padding": 1}, (2, 7, 6, 3)),
    ("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "groups": 2}, (2, 7, 6, 4)),
    ("Conv3d", (2, 3, 2), {"padding": 1}, (1, 4, 5, 3, 2)),
    ("ConvTranspose1d", (4, 3, 3), {"stride": 2}, (2, 5, 4)),
    ("ConvTranspose2d", (3, 2, 3), {"padding": 1, "stride": 2}, (2, 4, 5, 3)),
    ("ConvTranspose3d", (2, 3, 2), {}, (1, 3, 3, 3, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_) in enumerate(LAYERS)])
def test_layer_matches_mlx(mlx, mlx_nn, copy_params, close, name, args, kwargs, shape):
    theirs = getattr(mlx_nn, name)(*args, **kwargs)
    if "bias" in theirs:
        theirs.bias = mlx.array(RNG.standard_normal(theirs.bias.shape).astype(np.float32))
    ours = copy_params(theirs, getattr(nn, name)(*args, **kwargs))
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal(shape).astype(np.float32)
    close(ours(mx.array(x)), theirs(mlx.array(x)), rtol=1e-4, atol=1e-5)

    def vg(mx_, nn_, layer):
        return nn_.value_and_grad(layer, lambda x: mx_.sum(mx_.sin(layer(x))))(mx_.array(x))

    (_, g1), (_, g2) = vg(mx, nn, ours), vg(mlx, mlx_nn, theirs)
    # NOTE: convolutions sum in another order: rtol 1e-4
    close(g1, g2, rtol=1e-4, atol=1e-5)


def test_conv2d_weight_layout_and_init_bound():
    layer = nn.Conv2d(3, 8, (5, 3), groups=1)
    assert layer.weight.shape == (8, 5, 3, 3) and layer.bias.shape == (8,)
    assert np.abs(np.array(layer.weight)).max() <= 1 / np.sqrt(3 * 5 * 3)


def test_groups_must_divide_channels(mlx_nn):
    with pytest.raises(ValueError) as a:
        nn.Conv2d(3, 6, 3, groups=2)
    with pytest.raises(ValueError) as b:
        mlx_nn.Conv2d(3, 6, 3, groups=2)
    assert str(a.value) == str(b.value)
