"""Embedding against MLX's: lookup, gradients (accumulated at repeated indices),
as_linear, initial scale, repr."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

IDX = np.array([[0, 3, 3], [9, 0, 3]], np.int32)


def test_embedding_matches_mlx(mlx, mlx_nn, copy_params, close):
    theirs = mlx_nn.Embedding(10, 4)
    ours = copy_params(theirs, nn.Embedding(10, 4))
    assert repr(ours) == repr(theirs)
    close(ours(mx.array(IDX)), theirs(mlx.array(IDX)), rtol=0, atol=0)

    def vg(mx_, nn_, layer):
        return nn_.value_and_grad(layer, lambda i: mx_.sum(layer(i) ** 2))(mx_.array(IDX))

    (_, g1), (_, g2) = vg(mx, nn, ours), vg(mlx, mlx_nn, theirs)
    close(g1, g2)
    x = np.ones((2, 4), np.float32)
    close(ours.as_linear(mx.array(x)), theirs.as_linear(mlx.array(x)), atol=1e-6)


def test_initial_scale():
    w = np.array(nn.Embedding(1000, 16).weight)
    assert w.shape == (1000, 16)
    assert np.std(w) == np.float32(np.std(w)) and abs(np.std(w) - 0.25) < 0.02


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "uint32", "int64"])
def test_any_integer_indices_and_negative_ones_from_the_end(mlx, mlx_nn, copy_params, close,
                                                            dtype):
    theirs = mlx_nn.Embedding(10, 4)
    ours = copy_params(theirs, nn.Embedding(10, 4))
    idx = np.array([[0, 3, -1], [9, -10, 3]] if dtype[0] == "i" else [[0, 3, 9]], np.int64)
    out = [layer(m.array(idx, getattr(m, dtype)))
           for m, layer in ((mx, ours), (mlx, theirs))]
    close(*out, rtol=0, atol=0)

    def vg(mx_, nn_, layer):
        return nn_.value_and_grad(layer, lambda i: mx_.sum(layer(i) ** 2))(
            mx_.array(idx, getattr(mx_, dtype)))

    close(vg(mx, nn, ours)[1], vg(mlx, mlx_nn, theirs)[1])
