"""RoPE, SinusoidalPositionalEncoding and ALiBi against MLX's."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

RNG = np.random.default_rng(9)
X = RNG.standard_normal((2, 3, 6, 8)).astype(np.float32)


@pytest.mark.parametrize("args,offset", [((8,), 0), ((6, True, 100.0, 0.5), 4),
                                         ((4,), 2)])
def test_rope_matches_mlx(mlx, mlx_nn, close, args, offset):
    ours, theirs = nn.RoPE(*args), mlx_nn.RoPE(*args)
    assert repr(ours) == repr(theirs)
    # NOTE: sin/cos of large angles differ by ulps: atol 1e-5
    close(ours(mx.array(X), offset=offset), theirs(mlx.array(X), offset=offset), atol=1e-5)
    g1 = mx.grad(lambda x: mx.sum(ours(x) * mx.array(X)))(mx.array(X))
    g2 = mlx.grad(lambda x: mlx.sum(theirs(x) * mlx.array(X)))(mlx.array(X))
    close(g1, g2, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{}, {"cos_first": True, "full_turns": True},
                                    {"scale": 1.0, "min_freq": 0.01}])
@pytest.mark.parametrize("dims", [2, 16])
def test_sinusoidal_matches_mlx(mlx, mlx_nn, close, kwargs, dims):
    ours = nn.SinusoidalPositionalEncoding(dims, **kwargs)
    theirs = mlx_nn.SinusoidalPositionalEncoding(dims, **kwargs)
    pos = np.arange(12, dtype=np.float32)
    close(ours(mx.array(pos)), theirs(mlx.array(pos)), atol=1e-5)
    assert ours.parameters() == {} == theirs.parameters()


def test_alibi_matches_mlx(mlx, mlx_nn, close):
    scores = RNG.standard_normal((1, 6, 4, 5)).astype(np.float32)
    close(nn.ALiBi()(mx.array(scores)), mlx_nn.ALiBi()(mlx.array(scores)))
    close(nn.ALiBi.create_alibi_slope(6), mlx_nn.ALiBi.create_alibi_slope(6))
