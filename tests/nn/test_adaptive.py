"""nn.AdaptiveLogSoftmaxWithLoss against torch: the same seed gives the same weights, and
forward, log_prob, predict, their gradients, node names and errors agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array, same_message


def _same_words(call, kind: type) -> None:
    """`call(L)` raises `kind` in both with the same words, reading `ember.Size` as the
    `torch.Size` it is under `import ember as torch`."""
    msgs = []
    for L in (ember, torch):
        with pytest.raises(kind) as info:
            call(L)
        msgs.append(str(info.value).replace("ember.Size", "torch.Size"))
    assert msgs[0] == msgs[1], msgs


def _pair(*args, seed: int = 0, **kwargs):
    mods = []
    for L in (ember, torch):
        L.manual_seed(seed)
        mods.append(L.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs))
    return mods


@pytest.mark.parametrize("head_bias", [False, True])
def test_same_seed_gives_the_same_parameters(head_bias):
    me, mt = _pair(16, 50, [5, 20, 35], div_value=2.0, head_bias=head_bias)
    names = [n for n, _ in mt.named_parameters()]
    assert [n for n, _ in me.named_parameters()] == names
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        assert_same(pe, pt, rtol=0, atol=0)  # (the RNG stream: bit for bit)
    assert repr(me) == repr(mt)
    for attr in ("in_features", "n_classes", "cutoffs", "div_value", "head_bias",
                 "shortlist_size", "n_clusters", "head_size"):
        assert getattr(me, attr) == getattr(mt, attr), attr
    assert list(me.state_dict()) == list(mt.state_dict())


def test_reset_parameters_draws_like_torch():
    me, mt = _pair(8, 20, [4, 10], div_value=2.0)
    ember.manual_seed(3)
    torch.manual_seed(3)
    me.reset_parameters()
    mt.reset_parameters()
    for pe, pt in zip(me.parameters(), mt.parameters()):
        assert_same(pe, pt, rtol=0, atol=0)


def _targets_over_every_cluster():
    return np.array([0, 4, 5, 12, 19, 20, 25, 34, 35, 49, 3, 36], dtype=np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_output_loss_and_gradients(dtype):
    me, mt = _pair(16, 50, [5, 20, 35], div_value=2.0, head_bias=True)
    if dtype == np.float64:
        me, mt = me.double(), mt.double()
    x = rand_array((12, 16), dtype, seed=1)
    tgt = _targets_over_every_cluster()
    xe = ember.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    re, rt = me(xe, ember.tensor(tgt)), mt(xt, torch.tensor(tgt))
    assert type(re).__name__ == type(rt).__name__ == "_ASMoutput"
    assert re._fields == rt._fields == ("output", "loss")
    # (log_softmax and matmul add float32 terms in another order than torch's kernels)
    assert_same(re.output, rt.output, rtol=1e-5, atol=1e-6)
    assert_same(re.loss, rt.loss, rtol=1e-5)
    assert re.output.grad_fn.name() == rt.output.grad_fn.name() == "AddBackward0"
    assert re.loss.grad_fn.name() == rt.loss.grad_fn.name() == "MeanBackward0"
    re.loss.backward()
    rt.loss.backward()
    assert_same(xe.grad, xt.grad, rtol=1e-5, atol=1e-6)
    for pe, pt in zip(me.parameters(), mt.parameters()):
        assert_same(pe.grad, pt.grad, rtol=1e-5, atol=1e-6)


def test_forward_with_every_target_in_the_head_and_a_single_row():
    me, mt = _pair(6, 12, [4])
    x = rand_array((3, 6), seed=2)
    for tgt in ([0, 3, 1], [2], [7]):  # head only; one row (a 0-d index); one tail row
        rows = x[:len(tgt)]
        re = me(ember.tensor(rows), ember.tensor(tgt))
        rt = mt(torch.tensor(rows), torch.tensor(tgt))
        assert_same(re.output, rt.output, rtol=1e-6)
        assert_same(re.loss, rt.loss, rtol=1e-6)


def test_unbatched_input_gives_a_0d_output():
    me, mt = _pair(6, 12, [4])
    x = rand_array((6,), seed=3)
    for t in (2, 9):
        re = me(ember.tensor(x), ember.tensor(t))
        rt = mt(torch.tensor(x), torch.tensor(t))
        assert_same(re.output, rt.output, rtol=1e-6)
        assert_same(re.loss, rt.loss, rtol=1e-6)


def test_log_prob_is_normalised_and_matches_forward():
    me, mt = _pair(10, 40, [8, 25], div_value=3.0)
    x = rand_array((7, 10), seed=4)
    lpe, lpt = me.log_prob(ember.tensor(x)), mt.log_prob(torch.tensor(x))
    assert_same(lpe, lpt, rtol=1e-5, atol=1e-6)  # (float32 log_softmax and matmul order)
    table = lpe.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(np.logaddexp.reduce(table, axis=1), 0, atol=1e-5)
    tgt = np.array([0, 7, 8, 24, 25, 39, 30])
    out = me(ember.tensor(x), ember.tensor(tgt)).output.detach().numpy()
    np.testing.assert_allclose(out, lpe.detach().numpy()[np.arange(7), tgt], rtol=1e-5, atol=1e-6)


def test_log_prob_gradient_flows_through_the_table():
    me, mt = _pair(6, 15, [5, 10], div_value=2.0, head_bias=True)
    x = rand_array((4, 6), seed=5)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    le, lt = me.log_prob(xe), mt.log_prob(xt)
    assert le.grad_fn.name() == lt.grad_fn.name()
    w = rand_array((4, 15), seed=6)
    (le * ember.tensor(w)).sum().backward()
    (lt * torch.tensor(w)).sum().backward()
    assert_same(xe.grad, xt.grad, rtol=1e-5, atol=1e-6)


def test_predict_agrees_with_log_prob_argmax():
    me, mt = _pair(6, 30, [3, 12], div_value=2.0, head_bias=True)
    with torch.no_grad():  # push rows towards the clusters: some pick a tail, some the head
        mt.head.bias.copy_(torch.tensor([0.0, 0.1, -0.2, 1.5, 1.2]))
    me.head.bias.data = ember.tensor(mt.head.bias.detach().numpy())
    x = rand_array((40, 6), seed=7, low=-3, high=3)
    pe, pt = me.predict(ember.tensor(x)), mt.predict(torch.tensor(x))
    assert_same(pe, pt)
    first = mt.head(torch.tensor(x)).argmax(1)
    assert (first < 3).any() and (first >= 3).any()  # (the mixed case was exercised)
    assert_same(pe, mt.log_prob(torch.tensor(x)).argmax(1))
    big = x[(first >= 3).numpy()]  # every row in a tail
    assert_same(me.predict(ember.tensor(big)), mt.predict(torch.tensor(big)))


@pytest.mark.parametrize("cutoffs", [[], [10, 5], [0, 5], [5, 50], [5, 5, 9], [2.5]])
def test_bad_cutoffs_raise_value_error(cutoffs):
    same_message(lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 50, cutoffs), ValueError)


@pytest.mark.parametrize("x_shape, target", [
    ((3, 6), [1, 12, 2]),       # past the last class
    ((3, 6), [1, -1, 2]),       # negative
    ((3, 6), [1, 2]),           # batch sizes differ
    ((2, 6), [[1, 2], [3, 4]]),  # multi-target
    ((6,), [1]),                # 1-d input with a 1-d target
    ((1, 6), 3),                # 2-d input with a 0-d target
    ((2, 3, 6), [1, 2]),        # 3-d input
])
def test_bad_inputs_raise_runtime_error_with_torchs_words(x_shape, target):
    x = rand_array(x_shape, seed=8)
    mods = dict(zip((ember, torch), _pair(6, 12, [4])))
    _same_words(lambda L: mods[L](L.tensor(x), L.tensor(target)), RuntimeError)
