"""Layers that share their construction with siblings (the pooling, convolution and
channel-dropout families) still take MLX's arguments under their own name: a wrong or
missing argument raises the TypeError MLX 0.32.4 raises, naming the layer."""

import pytest

import ember.mlx.nn as nn

mlx_nn = pytest.importorskip("mlx.nn")


@pytest.mark.parametrize("make", [
    lambda nn_: nn_.MaxPool1d(2, foo=1),
    lambda nn_: nn_.MaxPool3d(),
    lambda nn_: nn_.AvgPool2d(2, 1, 0, 3),
    lambda nn_: nn_.Conv1d(2, 2),
    lambda nn_: nn_.Conv2d(2, 2, 2, foo=1),
    lambda nn_: nn_.Conv3d(2, 2, 2, groups=2),
    lambda nn_: nn_.ConvTranspose1d(6, 4, 3, groups=2),
    lambda nn_: nn_.ConvTranspose3d(6, 4),
    lambda nn_: nn_.Dropout2d(foo=1),
    lambda nn_: nn_.Dropout3d(0.5, 1),
])
def test_wrong_arguments_name_the_layer(make):
    with pytest.raises(TypeError) as theirs:
        make(mlx_nn)
    with pytest.raises(TypeError) as ours:
        make(nn)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("make", [
    lambda nn_: nn_.MaxPool2d(kernel_size=(2, 1), stride=1, padding=(1, 0)),
    lambda nn_: nn_.AvgPool1d(3, padding=1),
    lambda nn_: nn_.Conv1d(4, 6, kernel_size=3, stride=2, padding=1, dilation=2, groups=2,
                           bias=False),
    lambda nn_: nn_.ConvTranspose2d(4, 2, (3, 1), stride=2, padding=1, dilation=1,
                                    output_padding=1, bias=False),
    lambda nn_: nn_.Dropout2d(p=0.25),
    lambda nn_: nn_.Dropout3d(0.1),
])
def test_keywords_reach_the_layer(make):
    assert repr(make(nn)) == repr(make(mlx_nn))
