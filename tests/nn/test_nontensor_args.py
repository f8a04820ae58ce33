"""A non-tensor (str, None, a number, a list, a tuple, a NumPy array) where nn.functional
wants a Tensor: ember raises what torch 2.13 raises, type and message. Mostly the argument
parser's TypeError ("layer_norm(): argument 'input' (position 1) must be Tensor, not
numpy.ndarray"); where torch's Python code reads an attribute first (`mse_loss` compares
`target.size()`), Python's own AttributeError, or for a NumPy array, whose `.size` is an int,
"'int' object is not callable"."""


import numpy as np
import pytest
import torch

import ember

from helpers import raised

BAD = {"str": "s", "None": None, "int": 1, "float": 1.5, "list": [1.0, 2.0],
       "tuple": (1, 2), "ndarray": np.ones(3, dtype=np.float32)}


def _t(L):
    return L.ones(2, 3)


def _tgt(L):
    return L.tensor([0, 1])


def _img(L):
    return L.ones(1, 1, 4, 4)


CALLS = {
    # norms and dropout
    "layer_norm": lambda L, a: L.nn.functional.layer_norm(a, (3,)),
    "layer_norm weight": lambda L, a: L.nn.functional.layer_norm(_t(L), (3,), a),
    "layer_norm bias": lambda L, a: L.nn.functional.layer_norm(_t(L), (3,), None, a),
    "rms_norm": lambda L, a: L.nn.functional.rms_norm(a, (3,)),
    "rms_norm weight": lambda L, a: L.nn.functional.rms_norm(_t(L), (3,), a),
    "batch_norm training": lambda L, a: L.nn.functional.batch_norm(a, None, None,
                                                                   training=True),
    "batch_norm eval": lambda L, a: L.nn.functional.batch_norm(a, None, None),
    "batch_norm weight": lambda L, a: L.nn.functional.batch_norm(_t(L), None, None, a,
                                                                 training=True),
    "instance_norm": lambda L, a: L.nn.functional.instance_norm(a),
    "instance_norm eval": lambda L, a: L.nn.functional.instance_norm(
        a, L.zeros(1), L.ones(1), use_input_stats=False),
    "dropout": lambda L, a: L.nn.functional.dropout(a),
    "dropout eval": lambda L, a: L.nn.functional.dropout(a, training=False),
    "alpha_dropout": lambda L, a: L.nn.functional.alpha_dropout(a),
    "alpha_dropout training": lambda L, a: L.nn.functional.alpha_dropout(a, training=True),
    "feature_alpha_dropout": lambda L, a: L.nn.functional.feature_alpha_dropout(a, 0.5, True),
    "normalize": lambda L, a: L.nn.functional.normalize(a),
    "cosine_similarity": lambda L, a: L.nn.functional.cosine_similarity(a, _t(L)),
    "cosine_similarity x2": lambda L, a: L.nn.functional.cosine_similarity(_t(L), a),
    "pairwise_distance x2": lambda L, a: L.nn.functional.pairwise_distance(_t(L), a),
    "pdist": lambda L, a: L.nn.functional.pdist(a),
    "sdpa query": lambda L, a: L.nn.functional.scaled_dot_product_attention(a, _t(L), _t(L)),
    "sdpa value": lambda L, a: L.nn.functional.scaled_dot_product_attention(_t(L), _t(L), a),
    # indexing, padding, sampling
    "one_hot": lambda L, a: L.nn.functional.one_hot(a),
    "embedding indices": lambda L, a: L.nn.functional.embedding(a, _t(L)),
    "embedding weight": lambda L, a: L.nn.functional.embedding(_tgt(L), a),
    "pad": lambda L, a: L.nn.functional.pad(a, (1, 1)),
    "pad reflect": lambda L, a: L.nn.functional.pad(a, (1, 1), mode="reflect"),
    "unfold": lambda L, a: L.nn.functional.unfold(a, 2),
    "fold": lambda L, a: L.nn.functional.fold(a, (3, 3), 2),
    "grid_sample": lambda L, a: L.nn.functional.grid_sample(a, L.ones(1, 2, 2, 2),
                                                            align_corners=False),
    "gumbel_softmax": lambda L, a: L.nn.functional.gumbel_softmax(a),
    "bilinear": lambda L, a: L.nn.functional.bilinear(a, _t(L), L.ones(2, 3, 3)),
    "linear weight": lambda L, a: L.nn.functional.linear(_t(L), a),
    # pooling
    "max_pool1d": lambda L, a: L.nn.functional.max_pool1d(a, 2),
    "max_pool2d": lambda L, a: L.nn.functional.max_pool2d(a, 2),
    "max_pool2d indices": lambda L, a: L.nn.functional.max_pool2d(a, 2, return_indices=True),
    "max_pool3d indices": lambda L, a: L.nn.functional.max_pool3d(a, 2, return_indices=True),
    "avg_pool1d": lambda L, a: L.nn.functional.avg_pool1d(a, 2),
    "avg_pool3d": lambda L, a: L.nn.functional.avg_pool3d(a, 2),
    "adaptive_avg_pool1d": lambda L, a: L.nn.functional.adaptive_avg_pool1d(a, 2),
    "adaptive_avg_pool2d": lambda L, a: L.nn.functional.adaptive_avg_pool2d(a, 2),
    "adaptive_max_pool1d": lambda L, a: L.nn.functional.adaptive_max_pool1d(a, 2),
    "adaptive_max_pool3d": lambda L, a: L.nn.functional.adaptive_max_pool3d(a, 2),
    # losses
    "cross_entropy": lambda L, a: L.nn.functional.cross_entropy(a, _tgt(L)),
    "cross_entropy target": lambda L, a: L.nn.functional.cross_entropy(_t(L), a),
    "cross_entropy weight": lambda L, a: L.nn.functional.cross_entropy(_t(L), _tgt(L), a),
    "nll_loss": lambda L, a: L.nn.functional.nll_loss(a, _tgt(L)),
    "nll_loss target": lambda L, a: L.nn.functional.nll_loss(_t(L), a),
    "mse_loss": lambda L, a: L.nn.functional.mse_loss(a, _t(L)),
    "mse_loss target": lambda L, a: L.nn.functional.mse_loss(_t(L), a),
    "l1_loss": lambda L, a: L.nn.functional.l1_loss(a, _t(L)),
    "smooth_l1_loss target": lambda L, a: L.nn.functional.smooth_l1_loss(_t(L), a),
    "huber_loss": lambda L, a: L.nn.functional.huber_loss(a, _t(L)),
    "binary_cross_entropy": lambda L, a: L.nn.functional.binary_cross_entropy(a, _t(L)),
    "binary_cross_entropy target": lambda L, a: L.nn.functional.binary_cross_entropy(
        _t(L) / 2, a),
    "binary_cross_entropy weight": lambda L, a: L.nn.functional.binary_cross_entropy(
        _t(L) / 2, _t(L) / 2, a),
    "bce_with_logits": lambda L, a: L.nn.functional.binary_cross_entropy_with_logits(a, _t(L)),
    "bce_with_logits pos_weight": lambda L, a:
        L.nn.functional.binary_cross_entropy_with_logits(_t(L), _t(L), pos_weight=a),
    "kl_div": lambda L, a: L.nn.functional.kl_div(a, _t(L), reduction="sum"),
    "kl_div target": lambda L, a: L.nn.functional.kl_div(_t(L), a, reduction="sum"),
    "poisson_nll_loss target": lambda L, a: L.nn.functional.poisson_nll_loss(_t(L), a),
    "gaussian_nll_loss": lambda L, a: L.nn.functional.gaussian_nll_loss(a, _t(L), _t(L)),
    "soft_margin_loss": lambda L, a: L.nn.functional.soft_margin_loss(a, _t(L)),
    "hinge_embedding_loss target": lambda L, a: L.nn.functional.hinge_embedding_loss(_t(L), a),
    "multi_margin_loss": lambda L, a: L.nn.functional.multi_margin_loss(a, _tgt(L)),
    "multi_margin_loss target": lambda L, a: L.nn.functional.multi_margin_loss(_t(L), a),
    "multilabel_margin_loss": lambda L, a: L.nn.functional.multilabel_margin_loss(
        a, L.zeros(2, 3, dtype=L.long)),
    "cosine_embedding_loss target": lambda L, a: L.nn.functional.cosine_embedding_loss(
        _t(L), _t(L), a),
    "triplet_margin_loss negative": lambda L, a: L.nn.functional.triplet_margin_loss(
        _t(L), _t(L), a),
    # activations (the numpy array's name is `numpy.ndarray`, as CPython's tp_name says)
    "relu": lambda L, a: L.nn.functional.relu(a),
    "gelu": lambda L, a: L.nn.functional.gelu(a),
    "silu inplace": lambda L, a: L.nn.functional.silu(a, inplace=True),
    "softplus": lambda L, a: L.nn.functional.softplus(a),
    "leaky_relu": lambda L, a: L.nn.functional.leaky_relu(a),
    "logsigmoid": lambda L, a: L.nn.functional.logsigmoid(a),
    "glu": lambda L, a: L.nn.functional.glu(a),
}


def _outcome(L, call, a):
    return raised(call, L, a, quiet=True)


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("name", list(CALLS))
def test_non_tensor_refused_as_torch(name, kind):
    call, a = CALLS[name], BAD[kind]
    # (where torch takes the value, None for an optional tensor, ember must take it too)
    assert _outcome(ember, call, a) == _outcome(torch, call, a)


def test_alpha_dropout_does_not_return_its_argument():
    # alpha_dropout out of training used to hand back whatever it was given
    with pytest.raises(TypeError, match=r"^alpha_dropout\(\): argument 'input' \(position 1\) "
                                        r"must be Tensor, not str$"):
        ember.nn.functional.alpha_dropout("s")


def test_tensor_subclass_still_passes():
    # the hot-path test is `x.__class__ is Tensor`; a subclass (Parameter) takes the slow
    # isinstance path and must still be accepted
    w = ember.nn.Parameter(ember.ones(3))
    tw = torch.nn.Parameter(torch.ones(3))
    out = ember.nn.functional.layer_norm(w, (3,), w, w)
    ref = torch.nn.functional.layer_norm(tw, (3,), tw, tw)
    # layer_norm of a constant row is exactly the bias: no rounding on either side
    assert out.tolist() == ref.tolist() == [1.0, 1.0, 1.0]
    x = ember.nn.Parameter(ember.tensor([[0.5, -1.0]]))
    assert ember.nn.functional.mse_loss(x, x).item() == 0.0
