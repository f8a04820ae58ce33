"""Identity, Linear, Bilinear and Sequential against MLX's: parameters, forward values and
gradients through nn.value_and_grad."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

RNG = np.random.default_rng(0)


def _grads(nn_, model, x, mx_):
    def loss(x):
        return mx_.sum(mx_.square(model(x)))
    return nn_.value_and_grad(model, loss)(x)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_and_grads_match_mlx(mlx, mlx_nn, copy_params, close, bias):
    theirs = mlx_nn.Linear(5, 3, bias=bias)
    ours = copy_params(theirs, nn.Linear(5, 3, bias=bias))
    x = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    close(ours(mx.array(x)), theirs(mlx.array(x)))
    # NOTE: through BLAS (matmul order differs): rtol 1e-5 / atol 1e-5
    (v1, g1) = _grads(nn, ours, mx.array(x), mx)
    (v2, g2) = _grads(mlx_nn, theirs, mlx.array(x), mlx)
    close(v1, v2, atol=1e-5)
    close(g1, g2, atol=1e-5)
    assert repr(ours) == repr(theirs)


def test_linear_parameter_layout():
    m = nn.Linear(4, 3)
    assert m.weight.shape == (3, 4) and m.bias.shape == (3,)
    k = 1 / np.sqrt(4)
    assert np.all(np.abs(np.array(m.weight)) <= k)
    assert "bias" not in nn.Linear(4, 3, bias=False).parameters()


def test_linear_weights_bit_for_bit_with_mlx_seed(mlx, mlx_nn):
    random = pytest.importorskip("ember.mlx.core.random")
    random.seed(0)
    mlx.random.seed(0)
    ours, theirs = nn.Linear(4, 3), mlx_nn.Linear(4, 3)
    np.testing.assert_array_equal(np.array(ours.weight), np.array(theirs.weight))
    np.testing.assert_array_equal(np.array(ours.bias), np.array(theirs.bias))


def test_bilinear_matches_mlx(mlx, mlx_nn, copy_params, close):
    theirs = mlx_nn.Bilinear(3, 4, 2)
    ours = copy_params(theirs, nn.Bilinear(3, 4, 2))
    x1 = RNG.standard_normal((5, 3)).astype(np.float32)
    x2 = RNG.standard_normal((5, 4)).astype(np.float32)
    close(ours(mx.array(x1), mx.array(x2)), theirs(mlx.array(x1), mlx.array(x2)), atol=1e-5)
    assert repr(ours) == repr(theirs)


def test_identity_ignores_arguments():
    x = mx.array([1.0, 2.0])
    assert nn.Identity(3, foo=1)(x) is x


def test_sequential_matches_mlx(mlx, mlx_nn, copy_params, close):
    theirs = mlx_nn.Sequential(mlx_nn.Linear(4, 8), mlx_nn.GELU(), mlx_nn.Linear(8, 2),
                               mlx_nn.relu)
    ours = copy_params(theirs, nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2),
                                             nn.relu))
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    close(ours(mx.array(x)), theirs(mlx.array(x)), atol=1e-5)
    (_, g1) = _grads(nn, ours, mx.array(x), mx)
    (_, g2) = _grads(mlx_nn, theirs, mlx.array(x), mlx)
    close(g1, g2, atol=1e-5)
    assert list(ours.parameters()["layers"][1]) == []
