"""nn.init against MLX's: initializers are functions returning initializers; shapes,
dtypes, and the statistics (fans, limits) of the draws."""

import math

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

W = mx.zeros((64, 3, 3, 32))  # (out, kH, kW, in): fan_in 288, fan_out 576


def test_constant_and_identity():
    assert np.all(np.array(nn.init.constant(0.5)(W)) == 0.5)
    assert np.array_equal(np.array(nn.init.identity()(mx.zeros((3, 3)))), np.eye(3))
    with pytest.raises(ValueError, match="square matrix"):
        nn.init.identity()(mx.zeros((2, 3)))


def test_uniform_limits():
    a = np.array(nn.init.glorot_uniform()(W))
    limit = math.sqrt(6 / (288 + 576))
    assert a.shape == W.shape and np.abs(a).max() <= limit and np.abs(a).max() > 0.9 * limit
    b = np.array(nn.init.he_uniform()(W, mode="fan_out", gain=2.0))
    assert np.abs(b).max() <= 2 * math.sqrt(3 / 576)
    c = np.array(nn.init.uniform(-2.0, -1.0)(W))
    assert c.min() >= -2 and c.max() <= -1


def test_normal_scales():
    assert np.std(np.array(nn.init.glorot_normal()(W))) == pytest.approx(
        math.sqrt(2 / (288 + 576)), rel=0.05)
    assert np.std(np.array(nn.init.he_normal()(W))) == pytest.approx(
        1 / math.sqrt(288), rel=0.05)
    a = np.array(nn.init.normal(3.0, 0.1)(W))
    assert a.mean() == pytest.approx(3.0, abs=0.01)


def test_errors_match_mlx(mlx_nn, mlx):
    for ours, theirs in [(lambda: nn.init.he_normal()(mx.zeros((3,))),
                          lambda: mlx_nn.init.he_normal()(mlx.zeros((3,)))),
                         (lambda: nn.init.he_normal()(W, mode="fan"),
                          lambda: mlx_nn.init.he_normal()(mlx.zeros(W.shape), mode="fan"))]:
        with pytest.raises(ValueError) as a:
            ours()
        with pytest.raises(ValueError) as b:
            theirs()
        assert str(a.value) == str(b.value)


def test_dtype_is_kept():
    assert nn.init.normal(dtype=mx.float16)(W).dtype == mx.float16


def test_sparse_zeroes_a_fraction_of_each_row():
    a = np.array(nn.init.sparse(0.25)(mx.zeros((6, 8))))
    assert ((a == 0).sum(axis=1) == 2).all()


def test_orthogonal_is_orthogonal():
    q = np.array(nn.init.orthogonal()(mx.zeros((4, 6))))
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)


SEEDED_LAYERS = {
    "Linear": lambda nn_: nn_.Linear(4, 3),
    "Bilinear": lambda nn_: nn_.Bilinear(2, 3, 4),
    "Embedding": lambda nn_: nn_.Embedding(5, 3),
    "Conv1d": lambda nn_: nn_.Conv1d(4, 2, 3, groups=2),
    "Conv2d": lambda nn_: nn_.Conv2d(2, 3, 3),
    "ConvTranspose2d": lambda nn_: nn_.ConvTranspose2d(2, 3, 3),
    "RNN": lambda nn_: nn_.RNN(2, 3),
    "GRU": lambda nn_: nn_.GRU(2, 3),
    "LSTM": lambda nn_: nn_.LSTM(2, 3),
    "TransformerEncoder": lambda nn_: nn_.TransformerEncoder(1, 4, 2),
}


@pytest.mark.parametrize("name", list(SEEDED_LAYERS))
def test_seeded_layers_draw_mlxs_weights_bit_for_bit(mlx, mlx_nn, close, name):
    random = pytest.importorskip("ember.mlx.core.random")
    random.seed(0)
    mlx.random.seed(0)
    make = SEEDED_LAYERS[name]
    close(make(nn).parameters(), make(mlx_nn).parameters(), rtol=0, atol=0)


INITIALIZERS = [("normal", (0.5, 2.0)), ("uniform", (-1.0, 3.0)), ("glorot_normal", ()),
                ("glorot_uniform", ()), ("he_normal", ()), ("he_uniform", ()),
                ("sparse", (0.5,)), ("orthogonal", ())]


@pytest.mark.parametrize("name,args", INITIALIZERS)
def test_seeded_initializers_match_mlx(mlx, mlx_nn, close, name, args):
    random = pytest.importorskip("ember.mlx.core.random")
    random.seed(3)
    mlx.random.seed(3)
    ours = getattr(nn.init, name)(*args)(mx.zeros((6, 5)))
    theirs = getattr(mlx_nn.init, name)(*args)(mlx.zeros((6, 5)))
    # NOTE: orthogonal's QR runs in NumPy (LAPACK) here, in MLX's own LAPACK call there
    close(ours, theirs, rtol=0 if name != "orthogonal" else 1e-5,
          atol=0 if name != "orthogonal" else 1e-6)


def test_seeded_dropout_masks_match_mlx(mlx, mlx_nn):
    random = pytest.importorskip("ember.mlx.core.random")
    random.seed(1)
    mlx.random.seed(1)
    ours = nn.Dropout2d(0.3)(mx.ones((2, 3, 3, 8)))
    theirs = mlx_nn.Dropout2d(0.3)(mlx.ones((2, 3, 3, 8)))
    np.testing.assert_array_equal(np.array(ours), np.array(theirs))
