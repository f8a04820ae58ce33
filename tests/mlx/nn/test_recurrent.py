"""RNN, GRU and LSTM against MLX's: parameter trees, forward values from zero and given
initial states, gradients through the unrolled steps."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
from ember.mlx.utils import tree_flatten

RNG = np.random.default_rng(10)
X = RNG.standard_normal((2, 6, 3)).astype(np.float32)
H0 = RNG.standard_normal((2, 4)).astype(np.float32)
C0 = RNG.standard_normal((2, 4)).astype(np.float32)


def _sum(m, out):
    outs = out if isinstance(out, tuple) else (out,)
    return sum(m.sum(m.sin(o)) for o in outs)


@pytest.mark.parametrize("name,kwargs", [("RNN", {}), ("RNN", {"bias": False}),
                                         ("GRU", {}), ("GRU", {"bias": False}),
                                         ("LSTM", {}), ("LSTM", {"bias": False})])
@pytest.mark.parametrize("initial", [False, True])
def test_recurrent_matches_mlx(mlx, mlx_nn, copy_params, close, name, kwargs, initial):
    theirs = getattr(mlx_nn, name)(3, 4, **kwargs)
    ours = copy_params(theirs, getattr(nn, name)(3, 4, **kwargs))
    assert [(k, v.shape) for k, v in tree_flatten(ours.parameters())] == \
        [(k, v.shape) for k, v in tree_flatten(theirs.parameters())]

    def call(m, layer):
        args = [m.array(X)]
        if initial:
            args += [m.array(H0)] + ([m.array(C0)] if name == "LSTM" else [])
        return layer(*args)

    # NOTE: sigmoid/tanh and small matmuls through six steps: atol 1e-5
    close(call(mx, ours), call(mlx, theirs), atol=1e-5)
    (_, g1) = nn.value_and_grad(ours, lambda: _sum(mx, call(mx, ours)))()
    (_, g2) = mlx_nn.value_and_grad(theirs, lambda: _sum(mlx, call(mlx, theirs)))()
    close(g1, g2, rtol=1e-4, atol=1e-5)


def test_reprs_match_mlx(mlx_nn):
    assert repr(nn.GRU(3, 4)) == repr(mlx_nn.GRU(3, 4))
    assert repr(nn.LSTM(3, 4, bias=False)) == repr(mlx_nn.LSTM(3, 4, bias=False))
    assert repr(nn.RNN(3, 4, nonlinearity=abs)) == repr(mlx_nn.RNN(3, 4, nonlinearity=abs))


def test_rnn_rejects_a_non_callable_nonlinearity():
    with pytest.raises(ValueError, match="Nonlinearity must be callable"):
        nn.RNN(3, 4, nonlinearity="tanh")
