"""LayerNorm, RMSNorm, GroupNorm, InstanceNorm and BatchNorm against MLX's: forward values,
gradients, BatchNorm's running statistics and frozen state, reprs."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
from ember.mlx.utils import tree_flatten

RNG = np.random.default_rng(4)
X = (RNG.standard_normal((4, 3, 5, 8)) * 2 + 1).astype(np.float32)

LAYERS = [
    ("LayerNorm", (8,), {}), ("LayerNorm", (8,), {"affine": False}),
    ("LayerNorm", (8,), {"bias": False, "eps": 1e-3}),
    ("RMSNorm", (8,), {}), ("GroupNorm", (4, 8), {}),
    ("GroupNorm", (2, 8), {"pytorch_compatible": True}),
    ("GroupNorm", (4, 8), {"affine": False}), ("InstanceNorm", (8,), {"affine": True}),
    ("BatchNorm", (8,), {}), ("BatchNorm", (8,), {"affine": False}),
    ("BatchNorm", (8,), {"track_running_stats": False}),
]


def _randomize(layer, mx_):
    """Non-trivial affine parameters, so the gradients through them are tested."""
    layer.update({k: mx_.array(RNG.standard_normal(v.shape).astype(np.float32))
                  for k, v in layer.parameters().items() if k in ("weight", "bias")})
    return layer


def _vg(mx_, nn_, layer, x):
    return nn_.value_and_grad(layer, lambda x: mx_.sum(mx_.sin(layer(x))))(x)


@pytest.mark.parametrize("name,args,kwargs", LAYERS,
                         ids=[f"{n}{a}{k}" for n, a, k in LAYERS])
def test_layer_matches_mlx(mlx, mlx_nn, copy_params, close, name, args, kwargs):
    theirs = _randomize(getattr(mlx_nn, name)(*args, **kwargs), mlx)
    ours = copy_params(theirs, getattr(nn, name)(*args, **kwargs))
    assert repr(ours) == repr(theirs)
    x = X if name != "BatchNorm" else X.reshape(12, 5, 8)
    # NOTE: mean/var summed in another order: atol 1e-5
    close(ours(mx.array(x)), theirs(mlx.array(x)), atol=1e-5)
    if ours.trainable_parameters():  # MLX refuses to differentiate an empty tree
        (_, g1), (_, g2) = _vg(mx, nn, ours, mx.array(x)), _vg(mlx, mlx_nn, theirs,
                                                               mlx.array(x))
        close(g1, g2, rtol=1e-4, atol=1e-4)
    close(ours.parameters(), theirs.parameters(), atol=1e-6)  # running stats moved alike


def test_batchnorm_stats_are_parameters_but_not_trainable(mlx_nn):
    ours, theirs = nn.BatchNorm(3), mlx_nn.BatchNorm(3)
    keys = [k for k, _ in tree_flatten(ours.parameters())]
    assert keys == [k for k, _ in tree_flatten(theirs.parameters())]
    assert {"running_mean", "running_var"} <= set(keys)
    trainable = [k for k, _ in tree_flatten(ours.unfreeze().trainable_parameters())]
    assert trainable == ["weight", "bias"]


def test_batchnorm_eval_uses_running_stats(mlx, mlx_nn, copy_params, close):
    x = X.reshape(-1, 8)
    theirs = mlx_nn.BatchNorm(8)
    ours = copy_params(theirs, nn.BatchNorm(8))
    for _ in range(3):
        ours(mx.array(x))
        theirs(mlx.array(x))
    ours.eval()
    theirs.eval()
    close(ours(mx.array(x[:2])), theirs(mlx.array(x[:2])), atol=1e-5)
    close(ours.running_var, theirs.running_var, atol=1e-6)


def test_errors_match_mlx(mlx, mlx_nn):
    for make in [lambda nn_: nn_.LayerNorm(4, eps=0.0), lambda nn_: nn_.GroupNorm(3, 8),
                 lambda nn_: nn_.RMSNorm(4, eps=-1.0)]:
        with pytest.raises(ValueError) as a:
            make(nn)
        with pytest.raises(ValueError) as b:
            make(mlx_nn)
        assert str(a.value) == str(b.value)
    with pytest.raises(ValueError, match="more than one value per channel"):
        nn.BatchNorm(3)(mx.ones((1, 3)))
