"""nn.functional.linear_cross_entropy and nn.LinearCrossEntropyLoss against torch 2.13's
reference path: values, gradients of input / weight / bias, reductions, ignore_index,
label_smoothing, class weights, probability targets, K-dimensional logits, and errors."""

import numpy as np
import pytest
import torch
from tests.helpers import assert_same, same_message

import ember

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 4))
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal(3)
W_K = RNG.standard_normal((3, 2, 4))  # K = 1: logits (N, 3, 2)
B_K = RNG.standard_normal((3, 2))
T = np.array([0, 2, 1, 2, 0])
T_K = np.array([[0, 1], [2, 2], [1, 0], [-100, 1], [0, 2]])
CLASS_W = np.array([0.5, 2.0, 1.0])


def _run(L, x, w, target, bias=None, **kw):
    xs = L.tensor(x, requires_grad=True)
    ws = L.tensor(w, requires_grad=True)
    bs = None if bias is None else L.tensor(bias, requires_grad=True)
    if "weight" in kw:
        kw["weight"] = L.tensor(kw["weight"])
    out = L.nn.functional.linear_cross_entropy(xs, ws, L.tensor(target), linear_bias=bs, **kw)
    out.sum().backward()
    return [out, xs.grad, ws.grad] + ([] if bs is None else [bs.grad])


CASES = [
    dict(x=X, w=W, target=T),
    dict(x=X, w=W, target=T, bias=B, reduction="sum"),
    dict(x=X, w=W, target=T, reduction="none", ignore_index=2),
    dict(x=X, w=W, target=T, label_smoothing=0.2, weight=CLASS_W),
    dict(x=X, w=W, target=np.array([0, 2, -100, 2, 0]), weight=CLASS_W),
    dict(x=X[0], w=W, target=np.array(1)),
    dict(x=X, w=W, target=RNG.dirichlet(np.ones(3), 5), label_smoothing=0.1),
    dict(x=X, w=W_K, target=T_K, bias=B_K),
    dict(x=X, w=W_K, target=T_K, reduction="none", label_smoothing=0.3),
]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_values_and_gradients_match_torch(case):
    got = [_run(L, **case) for L in (ember, torch)]
    for e, t in zip(*got):
        # float64 log_softmax and matmul: sums in a different order, a few ulps
        assert_same(e, t, 1e-12, 1e-12)


def test_module_matches_torch_with_shared_parameters():
    outs = {}
    for L in (ember, torch):
        m = L.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True,
                                        dtype=L.float64, label_smoothing=0.1)
        with L.no_grad():
            m.linear.weight.copy_(L.tensor(W_K.reshape(6, 4)))
            m.linear.bias.copy_(L.tensor(B_K.reshape(6)))
        x = L.tensor(X, requires_grad=True)
        loss = m(x, L.tensor(T_K))
        loss.backward()
        outs[L] = (loss, x.grad, m.linear.weight.grad, m.linear.bias.grad, repr(m))
    for e, t in zip(outs[ember][:4], outs[torch][:4]):
        assert_same(e, t, 1e-12, 1e-12)
    assert outs[ember][4] == outs[torch][4]


@pytest.mark.parametrize("make", [
    lambda L: (L.ones(2, 2, 4), L.ones(3, 4), L.zeros(2, dtype=L.long), {}),
    lambda L: (L.ones(2, 4), L.ones(4), L.zeros(2, dtype=L.long), {}),
    lambda L: (L.ones(2, 5), L.ones(3, 4), L.zeros(2, dtype=L.long), {}),
    lambda L: (L.ones(2, 4), L.ones(3, 4), L.zeros(2, dtype=L.long),
               {"linear_bias": L.ones(2)}),
    lambda L: (L.ones(4), L.ones(3, 2, 4), L.zeros(2, dtype=L.long), {}),
    lambda L: (L.ones(2, 4), L.ones(3, 4), L.ones(2, 3) / 3, {"ignore_index": 1}),
])
def test_shape_errors_in_torch_words(make):
    def call(L):
        x, w, t, kw = make(L)
        L.nn.functional.linear_cross_entropy(x, w, t, **kw)

    same_message(call)


def test_module_argument_errors():
    same_message(lambda L: L.nn.LinearCrossEntropyLoss(4, 3, weight=L.ones(2)))
    same_message(lambda L: L.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5))
