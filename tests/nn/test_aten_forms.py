"""The layer functions PyTorch exposes at the top level under their ATen signatures
(`torch.embedding(weight, indices)`, `torch.dropout(input, p, train)`, ...) against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array, same_error, same_message


def _both(call):
    return call(ember), call(torch)


def test_embedding_takes_the_weight_first():
    w = rand_array((6, 3))

    def call(L):
        weight = L.tensor(w, requires_grad=True)
        out = L.embedding(weight, L.tensor([[0, 5], [2, 2]]), 2, True)  # padding 2, by freq
        out.sum().backward()
        return out, weight.grad
    (oe, ge), (ot, gt) = _both(call)
    assert_same(oe, ot)
    assert_same(ge, gt)


def test_embedding_renorm_returns_its_input():
    w = np.array([[3.0, 4.0], [0.5, 0.5]], dtype=np.float32)
    (we, wt) = _both(lambda L: L.embedding_renorm_(L.tensor(w), L.tensor([0, 1]), 1.0, 2.0))
    np.testing.assert_allclose(we.numpy(), wt.numpy(), rtol=1e-6)  # (a norm's last bit)


def test_norms_distances_and_bilinear():
    x, y = rand_array((4, 6), seed=1), rand_array((4, 6), seed=2)
    w = rand_array((3, 6, 6), seed=3)
    # (float32 reductions and a BLAS product: their last bits depend on the CPU's kernels)
    for call in (lambda L: L.layer_norm(L.tensor(x), [6], None, None, 1e-5, False),
                 lambda L: L.group_norm(L.tensor(x), 2, None, None, 1e-5, True),
                 lambda L: L.rms_norm(L.tensor(x), [6]),
                 lambda L: L.cosine_similarity(L.tensor(x), L.tensor(y)),
                 lambda L: L.pairwise_distance(L.tensor(x), L.tensor(y), 1.0),
                 lambda L: L.bilinear(L.tensor(x), L.tensor(y), L.tensor(w))):
        e, t = _both(call)
        assert_same(e, t, rtol=1e-5, atol=1e-6)


def test_dropout_draws_as_torch_and_needs_train():
    x = rand_array((50,))

    def call(L):
        L.manual_seed(3)
        return L.dropout(L.tensor(x), 0.3, True)
    assert_same(*_both(call))
    assert_same(*_both(lambda L: L.dropout(L.tensor(x), 0.3, False)))
    with pytest.raises(TypeError):
        ember.dropout(ember.tensor(x), 0.3)


def test_bilinear_checks_as_functional():
    same_message(lambda L: L.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 3)))


# --- losses with ATen's reduction enum ---------------------------------------------------

def _loss_calls(x, y, t):
    """call(L, reduction) of every top-level loss, on fixed inputs."""
    xs, ys = x[:, :3], y[:, :3]
    return [
        lambda L, r: L.kl_div(L.tensor(xs).log_softmax(1), L.tensor(ys).softmax(1), r),
        lambda L, r: L.binary_cross_entropy_with_logits(
            L.tensor(xs), L.tensor(ys).sigmoid(), None, L.tensor([1.0, 2.0, 0.5]), r),
        lambda L, r: L.cosine_embedding_loss(
            L.tensor(x), L.tensor(y), L.tensor(t), 0.1, r),
        lambda L, r: L.margin_ranking_loss(
            L.tensor(x[:, 0]), L.tensor(y[:, 0]), L.tensor(t), 0.2, r),
        lambda L, r: L.hinge_embedding_loss(
            L.tensor(xs), L.tensor(t)[:, None].expand(4, 3), 0.5, r),
        lambda L, r: L.triplet_margin_loss(
            L.tensor(x), L.tensor(y), L.tensor(x[::-1].copy()), 1.0, 2, 1e-6, True, r),
        lambda L, r: L.poisson_nll_loss(
            L.tensor(xs), L.tensor(np.abs(ys)), True, True, 1e-8, r),
    ]


@pytest.mark.parametrize("reduction", [0, 1, 2, 3])
def test_losses_reduce_by_atens_enum(reduction):
    x, y = rand_array((4, 5), seed=4), rand_array((4, 5), seed=5)
    t = np.array([1.0, -1.0, -1.0, 1.0], dtype=np.float32)
    for call in _loss_calls(x, y, t):
        e, tt = _both(lambda L, c=call: c(L, reduction))
        # (float32 sums, norms and logs: last bits follow the CPU's vector kernels)
        assert_same(e, tt, rtol=1e-5, atol=1e-6)


def test_kl_div_mean_is_silent_and_reduction_must_be_an_int():
    a = ember.tensor(rand_array((2, 3))).log_softmax(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (nn.functional.kl_div warns about 'mean'; ATen's does not)
        ember.kl_div(a, a.exp())
    x = rand_array((2, 3))
    for call in (lambda L: L.kl_div(L.tensor(x), L.tensor(x), "mean"),
                 lambda L: L.kl_div(L.tensor(x), L.tensor(x), True),
                 lambda L: L.kl_div(L.tensor(x), L.tensor(x), reduction=1.0),
                 lambda L: L.margin_ranking_loss(L.tensor(x), L.tensor(x), L.tensor(x), 0.0, "sum"),
                 lambda L: L.poisson_nll_loss(L.tensor(x), L.tensor(x), True, False, 1e-8, None)):
        same_message(call, TypeError)


def test_ctc_loss_takes_lengths_as_lists_or_tensors():
    lp = rand_array((6, 2, 4), seed=6)
    targets = np.array([[1, 2, 1], [3, 3, 0]])

    def call(L, r, as_tensor):
        lengths = ([6, 5], [3, 2]) if not as_tensor else (L.tensor([6, 5]), L.tensor([3, 2]))
        return L.ctc_loss(L.tensor(lp).log_softmax(2), L.tensor(targets), *lengths, 0, r)
    for r in (0, 1, 2):
        for as_tensor in (False, True):
            e, t = _both(lambda L, r=r, a=as_tensor: call(L, r, a))
            assert_same(e, t, rtol=1e-5, atol=1e-6)  # (sums of logs in float32)


# --- normalisation, dropout and the layers ------------------------------------------------

def test_batch_and_instance_norm_take_atens_order():
    x = rand_array((4, 3, 5), seed=7)
    w, b = rand_array((3,), seed=8), rand_array((3,), seed=9)

    def call(L, training):
        rm, rv = L.zeros(3), L.ones(3)
        out = L.batch_norm(L.tensor(x), L.tensor(w), L.tensor(b), rm, rv, training, 0.3, 1e-4,
                           True)
        return out, rm, rv
    for training in (True, False):
        for e, t in zip(*_both(lambda L, tr=training: call(L, tr))):
            assert_same(e, t, rtol=1e-6, atol=1e-6)  # (float32 variance sums)
    e, t = _both(lambda L: L.instance_norm(L.tensor(x), L.tensor(w), None, None, None, True, 0.1,
                                           1e-5, False))
    assert_same(e, t, rtol=1e-5, atol=1e-5)
    same_message(lambda L: L.batch_norm(L.tensor(x), None, None, None, None, False, 0.1, 1e-5,
                                        True))
    with pytest.raises(TypeError):
        ember.batch_norm(ember.tensor(x), None, None, None, None, True, 0.1, 1e-5)


@pytest.mark.parametrize("name", ["dropout_", "alpha_dropout", "alpha_dropout_",
                                  "feature_alpha_dropout", "feature_alpha_dropout_",
                                  "feature_dropout", "feature_dropout_"])
def test_dropouts_draw_as_torch(name):
    x = rand_array((3, 4, 5), seed=10)

    def call(L, train):
        L.manual_seed(5)
        t = L.tensor(x)
        out = getattr(L, name)(t, 0.4, train)
        return out, t
    for train in (True, False):
        (oe, te), (ot, tt) = _both(lambda L, tr=train: call(L, tr))
        assert_same(oe, ot, rtol=1e-6)  # (alpha dropout's affine step in float32)
        assert_same(te, tt, rtol=1e-6)  # in place or untouched, as torch
    same_error(lambda L: getattr(L, name)(L.tensor(x), 1.5, True))


def test_layer_forms_and_their_methods():
    x = rand_array((2, 4, 2, 2), seed=11)
    calls = [lambda L: L.prelu(L.tensor(x), L.tensor([0.1, 0.2, 0.3, 0.4])),
             lambda L: L.tensor(x).prelu(L.tensor([0.25])),
             lambda L: L.hardshrink(L.tensor(x), 0.7),
             lambda L: L.tensor(x).hardshrink(),
             lambda L: L.rrelu(L.tensor(x)),
             lambda L: L.pixel_shuffle(L.tensor(x), 2),
             lambda L: L.pixel_unshuffle(L.tensor(x), 2),
             lambda L: L.channel_shuffle(L.tensor(x), 2),
             lambda L: L.native_channel_shuffle(L.tensor(x), 2),
             lambda L: L.constant_pad_nd(L.tensor(x), [1, 0, 2, 1], -1.5)]
    for call in calls:
        assert_same(*_both(call))
    same_message(lambda L: L.constant_pad_nd(L.tensor(x), [1]))


# --- rrelu: torch's draws ----------------------------------------------------------------

def test_rrelu_draws_one_double_per_nonpositive_element():
    x = np.array([[0.0, -1.0, np.nan, -2.0, 3.0], [-0.5, 1.0, -0.0, -7.0, 2.0]],
                 dtype=np.float32)

    def call(L, dtype, lower, upper):
        L.manual_seed(0)
        t = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
        out = L.nn.functional.rrelu(t, lower, upper, training=True)
        out.sum().backward()
        after = L.rand(2)  # (the stream moved by as many draws as torch's)
        return out, t.grad, after, type(out.grad_fn).__name__
    for dtype in ("float32", "float64", "bfloat16"):
        for lower, upper in ((0.125, 1 / 3), (-0.1, 0.2)):
            e, t = _both(lambda L, d=dtype, lo=lower, up=upper: call(L, d, lo, up))
            for a, b in zip(e[:3], t[:3]):
                assert_same(a, b)
            assert e[3] == t[3]


def test_rrelu_with_a_generator_and_in_place():
    def call(L):
        g = L.Generator().manual_seed(3)
        t = L.tensor([-1.0, 2.0, -3.0])
        out = L.rrelu_(t, 0.1, 0.3, True, g)
        return out, t, L.rrelu(L.tensor([-1.0, -1.0]), 0.1, 0.3, True, g)
    for e, t in zip(*_both(call)):
        assert_same(e, t)
    same_message(lambda L: L.nn.functional.rrelu(L.tensor([-1.0]), 0.5, 0.1, training=True))
    same_message(lambda L: L.nn.functional.rrelu(L.tensor([-1, 2]), training=True),
                 NotImplementedError)


_DEFAULT_REDUCTION = {
    "kl_div": lambda m, a, b: m.kl_div(a, b),
    "binary_cross_entropy_with_logits": lambda m, a, b: m.binary_cross_entropy_with_logits(a, b),
    "hinge_embedding_loss": lambda m, a, b: m.hinge_embedding_loss(a, b.sign()),
    "cosine_embedding_loss": lambda m, a, b: m.cosine_embedding_loss(a, b, m.tensor([1., -1.])),
    "margin_ranking_loss": lambda m, a, b: m.margin_ranking_loss(a[0], b[0], b[1].sign()),
    "triplet_margin_loss": lambda m, a, b: m.triplet_margin_loss(a, b, b.flip(0)),
    "triplet_margin_loss, margin <= 0": lambda m, a, b: m.triplet_margin_loss(
        a, b, b.flip(0), -0.5, 2, 1e-6, False, 1),
}


@pytest.mark.parametrize("name", list(_DEFAULT_REDUCTION))
def test_top_level_losses_leave_reduction_out_as_torch_does(name):
    """torch 2.13's parser does not read the schema's default `reduction=Mean`: left out,
    the loss comes back unreduced. (And torch.triplet_margin_loss takes any margin.)"""
    import torch

    got = []
    for m in (ember, torch):
        a = m.tensor([[0.2, -1.0, 0.5, 1.5], [0.3, 0.8, -0.4, 2.0]])
        b = m.tensor([[0.1, 0.4, 0.5, 0.2], [0.9, 0.3, 0.6, 0.1]])
        got.append(_DEFAULT_REDUCTION[name](m, a, b))
    assert tuple(got[0].shape) == tuple(got[1].shape)
    np.testing.assert_allclose(got[0].numpy(), got[1].numpy(), rtol=1e-6, atol=1e-7)


def test_top_level_adaptive_max_pool1d_returns_values_and_indices():
    """torch.adaptive_max_pool1d is ATen's op: always (values, indices), no return_indices."""
    import torch

    x = np.array([[0.5, -1.0, 2.0, 0.25, 3.0, -2.0, 1.0]], dtype=np.float32)
    got, want = ember.adaptive_max_pool1d(ember.tensor(x), 3), \
        torch.adaptive_max_pool1d(torch.tensor(x), 3)
    assert type(got) is tuple and type(want) is tuple
    for g, w in zip(got, want):
        assert str(g.dtype).replace("ember", "torch") == str(w.dtype)
        np.testing.assert_array_equal(g.numpy(), w.numpy())  # (maxima and indices: exact)
    with pytest.raises(TypeError, match="unexpected keyword argument 'return_indices'"):
        ember.adaptive_max_pool1d(ember.tensor(x), 3, return_indices=True)
