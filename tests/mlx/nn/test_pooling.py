"""Pooling layers against MLX's: values, gradients (ties in max included), padding,
reprs and argument errors."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

RNG = np.random.default_rng(7)

LAYERS = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 9, 3)),
    ("AvgPool1d", (2,), {}, (2, 8, 3)),
    ("MaxPool2d", (2,), {}, (2, 6, 6, 3)),
    ("MaxPool2d", ((3, 2),), {"stride": (2, 1), "padding": (1, 1)}, (2, 7, 6, 3)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1}, (2, 7, 6, 3)),
    ("MaxPool3d", (2,), {"stride": 1}, (1, 4, 4, 3, 2)),
    ("AvgPool3d", (2,), {}, (1, 4, 4, 4, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_) in enumerate(LAYERS)])
def test_pool_matches_mlx(mlx, mlx_nn, close, name, args, kwargs, shape):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(mlx_nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    # rounded values: many ties inside the max windows
    x = np.round(RNG.standard_normal(shape), 0).astype(np.float32)
    close(ours(mx.array(x)), theirs(mlx.array(x)))
    w = RNG.standard_normal(theirs(mlx.array(x)).shape).astype(np.float32)

    def g(m, layer):
        return m.grad(lambda x: m.sum(layer(x) * m.array(w)))(m.array(x))

    close(g(mx, ours), g(mlx, theirs))


def test_argument_errors_match_mlx(mlx_nn):
    for make in [lambda nn_: nn_.MaxPool2d((2, 2, 2)), lambda nn_: nn_.AvgPool1d(0),
                 lambda nn_: nn_.MaxPool2d(2, padding=-1)]:
        with pytest.raises(ValueError) as a:
            make(nn)
        with pytest.raises(ValueError) as b:
            make(mlx_nn)
        assert str(a.value) == str(b.value)


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_) in enumerate(LAYERS)])
def test_state_tree_matches_mlx(mlx_nn, name, args, kwargs, shape):
    from mlx.utils import tree_flatten as theirs_flatten

    from ember.mlx.utils import tree_flatten

    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(mlx_nn, name)(*args, **kwargs)
    assert tree_flatten(ours.state) == theirs_flatten(theirs.state)
    assert dict(ours) == dict(theirs)  # lists vs tuples too
