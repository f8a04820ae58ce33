"""Dropout layers: pass-through in eval mode, the kept fraction and scaling in training
mode, whole channels for Dropout2d/3d, MLX's errors and reprs."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn


def test_eval_mode_passes_through():
    x = mx.ones((4, 4))
    assert nn.Dropout(0.5).eval()(x) is x


def test_training_keeps_one_minus_p_scaled():
    y = np.array(nn.Dropout(0.25)(mx.ones((200, 200))))
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert (y != 0).mean() == pytest.approx(0.75, abs=0.01)


def test_dropout2d_drops_whole_channels():
    y = np.array(nn.Dropout2d(0.5)(mx.ones((8, 3, 3, 16))))
    per_channel = y.reshape(8, 9, 16)
    assert (per_channel.min(axis=1) == per_channel.max(axis=1)).all()


def test_reprs_and_errors_match_mlx(mlx_nn):
    for cls in ["Dropout", "Dropout2d", "Dropout3d"]:
        assert repr(getattr(nn, cls)(0.2)) == repr(getattr(mlx_nn, cls)(0.2))
        assert getattr(nn, cls)().parameters() == {}
    with pytest.raises(ValueError, match=r"The dropout probability 1 is not in \[0, 1\)"):
        nn.Dropout(1)
    with pytest.raises(ValueError, match="Expected 3 or 4 dimensions."):
        nn.Dropout2d()(mx.ones((2, 2)))


def test_dropout_gradient_is_the_scaled_mask():
    x = mx.ones((50, 50))
    layer = nn.Dropout(0.5)

    def f(x):
        out = layer(x)
        return mx.sum(out), out

    (_, out), g = mx.value_and_grad(f)(x)
    np.testing.assert_array_equal(np.array(g), np.array(out))  # x is ones: out = mask * 2
    assert set(np.unique(np.array(g))) == {0.0, 2.0}
