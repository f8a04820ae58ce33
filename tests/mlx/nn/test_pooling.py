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


@pytest.mark.parametrize("make,shape", [
    (lambda nn_: nn_.MaxPool1d(2), (8,)),                        # no batch, no channels
    (lambda nn_: nn_.AvgPool1d(2), (4, 8)),                      # no channel axis
    (lambda nn_: nn_.MaxPool1d(2), ()),
    (lambda nn_: nn_.MaxPool1d(2), (1, 4, 8, 2)),                # one spatial axis too many
    (lambda nn_: nn_.MaxPool2d(2), (1, 4, 2)),                   # one too few
    (lambda nn_: nn_.AvgPool3d(2), (4, 4, 4, 2)),
    (lambda nn_: nn_.MaxPool1d(2, padding=1), (4, 8)),           # pad's own error comes first
    (lambda nn_: nn_.MaxPool1d(9, stride=2), (1, 3, 2)),         # kernel far longer than L
    (lambda nn_: nn_.AvgPool2d((7, 1), stride=1), (1, 3, 4, 2)),
])
def test_wrong_input_ranks_and_sizes_raise_as_mlx(mlx, mlx_nn, make, shape):
    with pytest.raises(ValueError) as theirs:
        make(mlx_nn)(mlx.zeros(shape))
    with pytest.raises(ValueError) as ours:
        make(nn)(mx.zeros(shape))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("make,shape", [
    (lambda nn_: nn_.AvgPool1d(5, stride=2), (1, 3, 2)),         # (3 - 5) // 2 + 1 == 0
    (lambda nn_: nn_.MaxPool1d(4, stride=3), (1, 3, 2)),
    (lambda nn_: nn_.MaxPool2d((4, 1), stride=1), (1, 3, 4, 2)),
    (lambda nn_: nn_.MaxPool1d(3, stride=1), (0, 4, 2)),         # an empty batch
])
def test_kernels_a_stride_longer_than_the_input_give_no_windows(mlx, mlx_nn, make, shape):
    ours, theirs = make(nn)(mx.ones(shape)), make(mlx_nn)(mlx.ones(shape))
    assert ours.shape == theirs.shape and ours.dtype == mx.float32
    assert 0 in ours.shape
