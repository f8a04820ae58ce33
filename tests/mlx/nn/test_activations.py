"""Every activation function and layer against MLX's: values and gradients (kinks
included: the inputs hold exact zeros and thresholds)."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

X = np.concatenate([np.linspace(-4, 4, 38), [0.0, 0.5, -0.5, 6.0, 3.0, -3.0]]).astype(
    np.float32).reshape(-1, 2)

FUNCTIONS = ["sigmoid", "relu", "relu2", "relu6", "leaky_relu", "log_softmax", "elu",
             "softmax", "softplus", "softsign", "softshrink", "celu", "silu", "log_sigmoid",
             "gelu", "gelu_approx", "gelu_fast_approx", "glu", "selu", "mish", "hardswish",
             "hard_tanh", "hard_shrink", "softmin", "tanh"]

LAYERS = [("Sigmoid", ()), ("Mish", ()), ("ReLU", ()), ("ReLU2", ()), ("ReLU6", ()),
          ("LeakyReLU", (0.2,)), ("ELU", (0.5,)), ("Softmax", ()), ("Softplus", ()),
          ("Softsign", ()), ("Softshrink", (0.3,)), ("CELU", (1.5,)), ("SiLU", ()),
          ("LogSoftmax", ()), ("LogSigmoid", ()), ("PReLU", ()), ("GELU", ()),
          ("GELU", ("tanh",)), ("GELU", ("precise",)), ("GELU", ("fast",)), ("Tanh", ()),
          ("Hardswish", ()), ("SELU", ()), ("HardTanh", ()), ("HardShrink", ()),
          ("Softmin", ()), ("GLU", ()), ("Step", (0.5,))]


def _value_and_grad(mx_, fn):
    return mx_.value_and_grad(lambda x: mx_.sum(fn(x) * mx_.arange(x.size).reshape(x.shape)))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_matches_mlx(mlx, mlx_nn, close, name):
    ours, theirs = getattr(nn, name), getattr(mlx_nn, name)
    # NOTE: transcendentals (exp, erf, tanh, log1p) differ by an ulp or two from MLX's
    close(ours(mx.array(X)), theirs(mlx.array(X)), rtol=1e-5, atol=1e-6)
    (_, g1), (_, g2) = _value_and_grad(mx, ours)(mx.array(X)), \
        _value_and_grad(mlx, theirs)(mlx.array(X))
    close(g1, g2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,args", LAYERS)
def test_layer_matches_mlx(mlx, mlx_nn, copy_params, close, name, args):
    theirs = getattr(mlx_nn, name)(*args)
    ours = copy_params(theirs, getattr(nn, name)(*args))
    close(ours(mx.array(X)), theirs(mlx.array(X)), rtol=1e-5, atol=1e-6)
    assert repr(ours) == repr(theirs)
    assert list(ours.parameters()) == list(theirs.parameters())


def test_relu_gradient_at_zero_is_mlxs(mlx, mlx_nn):
    """MLX gives a tie of maximum(x, 0) all to the 0: relu's gradient at 0 is 0
    (PyTorch's is 0 too; a 0.5 / 0.5 split would give 0.5)."""
    g = mx.grad(lambda x: nn.relu(x).sum())(mx.array([0.0, 1.0, -1.0]))
    g_mlx = mlx.grad(lambda x: mlx_nn.relu(x).sum())(mlx.array([0.0, 1.0, -1.0]))
    assert np.array(g).tolist() == np.array(g_mlx).tolist() == [0.0, 1.0, 0.0]


def test_kinked_activations_give_a_nan_input_no_gradient_as_mlx(mlx, mlx_nn):
    """relu, relu6, leaky_relu and hard_tanh are maximum / minimum in MLX, whose masks
    (`a > b`, `a <= b`) are false at a NaN: neither side gets the gradient there."""
    x = [float("nan"), -1.0, 0.0, 2.0, float("inf"), 7.0]
    for name in ["relu", "relu6", "leaky_relu", "hard_tanh", "relu2"]:
        ours = mx.grad(lambda v, f=getattr(nn, name): f(v).sum())(mx.array(x))
        theirs = mlx.grad(lambda v, f=getattr(mlx_nn, name): f(v).sum())(mlx.array(x))
        np.testing.assert_array_equal(np.array(ours), np.array(theirs), err_msg=name)
    assert np.array(mx.grad(lambda v: nn.relu(v).sum())(mx.array(x)))[0] == 0.0


def test_activations_keep_nan(mlx_nn, mlx):
    for name in ["relu", "relu6", "leaky_relu", "hard_tanh", "celu"]:
        assert np.isnan(np.array(getattr(nn, name)(mx.array([np.nan])))).all(), name


def test_step_gives_int32():
    assert nn.step(mx.array([0.0, -1.0])).dtype == mx.int32


def test_gelu_rejects_unknown_approx():
    with pytest.raises(ValueError, match="The approximation should be in"):
        nn.GELU("erf")


def test_prelu_weight_is_a_parameter():
    assert nn.PReLU(3).parameters()["weight"].shape == (3,)
