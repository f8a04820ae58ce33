"""MultiHeadAttention and the transformer stacks against MLX's: parameter trees, reprs,
forward values with and without masks, gradients."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
from ember.mlx.utils import tree_flatten

RNG = np.random.default_rng(8)
X = RNG.standard_normal((2, 5, 8)).astype(np.float32)
MEM = RNG.standard_normal((2, 3, 8)).astype(np.float32)


def _vg(mx_, nn_, model, call):
    return nn_.value_and_grad(model, lambda: mx_.sum(mx_.sin(call(mx_, model))))()


def _compare(mlx, mlx_nn, copy_params, close, make, call):
    theirs = make(mlx_nn)
    ours = copy_params(theirs, make(nn))
    assert repr(ours) == repr(theirs)
    assert [(k, v.shape) for k, v in tree_flatten(ours.parameters())] == \
        [(k, v.shape) for k, v in tree_flatten(theirs.parameters())]
    # NOTE: matmuls, softmax and layer norms in another order: atol 1e-5 / rtol 1e-4
    close(call(mx, ours), call(mlx, theirs), rtol=1e-4, atol=1e-5)
    (_, g1), (_, g2) = _vg(mx, nn, ours, call), _vg(mlx, mlx_nn, theirs, call)
    close(g1, g2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mask", [None, "additive", "causal", "bool"])
def test_multi_head_attention_matches_mlx(mlx, mlx_nn, copy_params, close, mask):
    def call(m, layer):
        nn_ = nn if m is mx else mlx_nn
        msk = {None: None, "causal": "causal",
               "additive": nn_.MultiHeadAttention.create_additive_causal_mask(5),
               "bool": m.array(np.tril(np.ones((5, 5), bool)))}[mask]
        return layer(m.array(X), m.array(X[:, ::-1].copy()), m.array(X * 2), msk)

    _compare(mlx, mlx_nn, copy_params, close,
             lambda nn_: nn_.MultiHeadAttention(8, 2, bias=True), call)


def test_cross_attention_dims_match_mlx(mlx, mlx_nn, copy_params, close):
    def call(m, layer):
        return layer(m.array(X), m.array(MEM[..., :6]), m.array(MEM[..., :6]))

    _compare(mlx, mlx_nn, copy_params, close,
             lambda nn_: nn_.MultiHeadAttention(8, 4, key_input_dims=6, value_dims=12,
                                                value_output_dims=4), call)


def test_additive_causal_mask_matches_mlx(mlx_nn):
    ours = np.array(nn.MultiHeadAttention.create_additive_causal_mask(4))
    np.testing.assert_array_equal(
        ours, np.array(mlx_nn.MultiHeadAttention.create_additive_causal_mask(4)))


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_matches_mlx(mlx, mlx_nn, copy_params, close, norm_first):
    def call(m, model):
        nn_ = nn if m is mx else mlx_nn
        return model(m.array(X), nn_.MultiHeadAttention.create_additive_causal_mask(5))

    _compare(mlx, mlx_nn, copy_params, close,
             lambda nn_: nn_.TransformerEncoder(2, 8, 2, mlp_dims=16, norm_first=norm_first,
                                                activation=nn_.gelu), call)


@pytest.mark.parametrize("norm_first", [True, False])
def test_transformer_matches_mlx(mlx, mlx_nn, copy_params, close, norm_first):
    def call(m, model):
        return model(m.array(MEM), m.array(X), None, "causal", None)

    _compare(mlx, mlx_nn, copy_params, close,
             lambda nn_: nn_.Transformer(8, 2, 1, 1, mlp_dims=12, norm_first=norm_first),
             call)


def test_heads_must_divide_dims():
    with pytest.raises(ValueError, match="divisible by the number of heads"):
        nn.MultiHeadAttention(10, 3)
