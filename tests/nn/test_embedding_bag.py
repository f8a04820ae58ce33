"""`embedding_bag` against torch 2.13: PyTorch's CPU kernel adds a bag's rows in order from
zero and divides by the bag's size, so sums and means are its bits; the max keeps the first
of equal maxima and never lets a later NaN win. Its checks raise torch's types and words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F

TF = torch.nn.functional


def _case(seed: int, dtype=np.float32, nan: bool = False):
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((30, 19)).astype(dtype)
    if nan:
        weight[rng.integers(0, 30, 4), rng.integers(0, 19, 4)] = np.nan
    sizes = rng.integers(0, 9, 40)
    sizes[:3] = 0  # empty bags, first among them
    ids = rng.integers(0, 30, int(sizes.sum()))
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return weight, ids, offsets


def _both(fn, weight, *arrays, grad=True):
    """fn on ember and on torch, with the weight's gradient of a fixed random cotangent."""
    results = []
    for lib in (ember, torch):
        w = lib.tensor(weight, requires_grad=grad)
        out = fn(lib, w, *[lib.tensor(a) for a in arrays])
        g = None
        if grad:
            cot = np.random.default_rng(7).standard_normal(tuple(out.shape)).astype(weight.dtype)
            out.backward(lib.tensor(cot))
            g = w.grad.to_dense().numpy() if w.grad.is_sparse else w.grad.numpy()
        results.append((out.detach().numpy(), g))
    return results


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_sums_and_means_are_torch_bits(mode, dtype, padding_idx):
    weight, ids, offsets = _case(1, dtype, nan=True)
    (eo, eg), (to, tg) = _both(
        lambda L, w, i, o: (F if L is ember else TF).embedding_bag(
            i, w, o, mode=mode, padding_idx=padding_idx), weight, ids, offsets)
    np.testing.assert_array_equal(eo, to)
    assert eo.dtype == to.dtype
    # torch adds a row's gradients in the order of its own sort of the indices: a sum of
    # up to ~20 float terms per row, rounded in another order (a few ulps)
    np.testing.assert_allclose(eg, tg, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-14)
    if padding_idx is not None:
        assert not eg[padding_idx].any()


def test_max_keeps_the_first_maximum_and_a_leading_nan():
    weight, ids, offsets = _case(2, nan=True)
    weight[:, 5] = 1.0  # ties everywhere in one column
    (eo, eg), (to, tg) = _both(lambda L, w, i, o: (F if L is ember else TF).embedding_bag(
        i, w, o, mode="max"), weight, ids, offsets)
    np.testing.assert_array_equal(eo, to)
    # each bag's gradient goes to its winning rows, the same rows as torch's; a row winning
    # in several bags adds them in torch's own order (a few ulps)
    np.testing.assert_allclose(eg, tg, rtol=1e-5, atol=1e-6)
    assert np.array_equal(eg != 0, tg != 0)


def test_max_by_hand():
    w = ember.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, float("nan")], [float("nan"), -1.0]])
    out = F.embedding_bag(ember.tensor([0, 2, 3, 1, 2]), w, ember.tensor([0, 2, 2, 4]),
                          mode="max")
    # bag 0: rows 0, 2 (a later NaN never wins); bag 1 empty; bag 2: rows 3, 1 (a NaN in
    # the first row stays); bag 3: row 2
    expected = [[4.0, 1.0], [0.0, 0.0], [float("nan"), 3.0], [4.0, float("nan")]]
    np.testing.assert_array_equal(out.numpy(), np.array(expected, np.float32))


def test_two_d_input_last_offset_and_node():
    weight, _, _ = _case(3)
    rng = np.random.default_rng(3)
    ids2 = rng.integers(0, 30, (6, 4))
    for mode in ("sum", "mean", "max"):
        (eo, eg), (to, tg) = _both(lambda L, w, i, m=mode: (
            F if L is ember else TF).embedding_bag(i, w, mode=m), weight, ids2)
        np.testing.assert_array_equal(eo, to)
        np.testing.assert_allclose(eg, tg, rtol=1e-5, atol=1e-6)
    ids, offsets = rng.integers(0, 30, 11), np.array([0, 2, 2, 7, 9])
    (eo, _), (to, _) = _both(lambda L, w, i, o: (F if L is ember else TF).embedding_bag(
        i, w, o, mode="sum", include_last_offset=True), weight, ids, offsets, grad=False)
    assert eo.shape == (4, 19)
    np.testing.assert_array_equal(eo, to)  # positions 9 and 10 belong to no bag
    w = ember.tensor(weight, requires_grad=True)
    assert F.embedding_bag(ember.tensor(ids2), w).grad_fn.name() == "EmbeddingBagBackward0"


def test_per_sample_weights_and_half():
    weight, ids, offsets = _case(4)
    psw = np.random.default_rng(4).random(ids.shape[0]).astype(np.float32)
    got = []
    for lib, fn in ((ember, F), (torch, TF)):
        w = lib.tensor(weight, requires_grad=True)
        p = lib.tensor(psw, requires_grad=True)
        out = fn.embedding_bag(lib.tensor(ids), w, lib.tensor(offsets), mode="sum",
                               per_sample_weights=p)
        out.sum().backward()
        got.append((out.detach().numpy(), w.grad.numpy(), p.grad.numpy()))
    # torch fuses each weight's multiply into the running sum (one rounding, not two):
    # within a few float32 ulps of the sums
    for e, t in zip(*got):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5)
    for dt in (ember.float16, ember.bfloat16):
        tdt = getattr(torch, str(dt).split(".")[1])
        for mode in ("sum", "mean", "max"):
            e = F.embedding_bag(ember.tensor(ids), ember.tensor(weight).to(dt),
                                ember.tensor(offsets), mode=mode)
            t = TF.embedding_bag(torch.tensor(ids), torch.tensor(weight).to(tdt),
                                 torch.tensor(offsets), mode=mode)
            assert e.dtype == dt
            np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


def test_sparse_gradient_and_module():
    weight, ids, offsets = _case(5)
    (eo, eg), (to, tg) = _both(lambda L, w, i, o: (F if L is ember else TF).embedding_bag(
        i, w, o, mode="mean", sparse=True), weight, ids, offsets)
    np.testing.assert_array_equal(eo, to)
    np.testing.assert_allclose(eg, tg, rtol=1e-5, atol=1e-6)
    m = ember.nn.EmbeddingBag(30, 19, mode="sum", padding_idx=0)
    assert not m.weight[0].any()
    assert tuple(m(ember.tensor(ids), ember.tensor(offsets)).shape) == (40, 19)


BAD = [
    ("offsets start", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 2, 1]), w, L.tensor([1, 2]))),
    ("offsets past", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 2, 1]), w, L.tensor([0, 4]))),
    ("index high", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 9]), w, L.tensor([0]))),
    ("index negative", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, -1]), w, L.tensor([0]))),
    ("float indices", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0.0, 1.0]), w, L.tensor([0]))),
    ("2-d offsets", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), w, L.tensor([[0]]))),
    ("weights shape", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), w, L.tensor([0]), mode="sum", per_sample_weights=L.ones(3))),
    ("weights dtype", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), w, L.tensor([0]), mode="sum",
        per_sample_weights=L.ones(2, dtype=L.float64))),
    ("weights with max", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), w, L.tensor([0]), mode="max", per_sample_weights=L.ones(2))),
    ("integer table", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), w.long(), L.tensor([0]))),
    ("mode", lambda L, w: L.nn.functional.embedding_bag(
        L.tensor([0, 1]), w, L.tensor([0]), mode="min")),
    ("3-d input", lambda L, w: L.nn.functional.embedding_bag(L.zeros(1, 1, 1).long(), w)),
    # both from_pretrained assert the table is 2-D before unpacking its shape
    ("bag from 1-d table", lambda L, w: L.nn.EmbeddingBag.from_pretrained(w[:, 0])),
    ("bag from 3-d table", lambda L, w: L.nn.EmbeddingBag.from_pretrained(w[None])),
    ("embedding from 1-d table", lambda L, w: L.nn.Embedding.from_pretrained(w[:, 0])),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_as_torch(name, fn):
    with pytest.raises(Exception) as t:
        fn(torch, torch.zeros(6, 2))
    with pytest.raises(type(t.value)) as e:
        fn(ember, ember.zeros(6, 2))
    assert str(e.value).replace("ember.", "torch.") == str(t.value)


def test_bool_indices_read_as_zero_and_one():
    w = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    got = F.embedding_bag(ember.tensor([True, False, True]), ember.tensor(w),
                          ember.tensor([0, 1]), mode="sum")
    want = TF.embedding_bag(torch.tensor([True, False, True]), torch.tensor(w),
                            torch.tensor([0, 1]), mode="sum")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_decreasing_offsets_are_refused():
    with pytest.raises(RuntimeError, match=r"offsets must be non-decreasing.*offsets\[2\] = 1"):
        F.embedding_bag(ember.tensor([0, 1, 2]), ember.zeros(4, 2), ember.tensor([0, 2, 1]))


@pytest.mark.parametrize("ids,offsets,mode,padding_idx", [
    ([1, 1, 1, 2], [0, 1], "sum", None),      # row 2 takes row 1's count, 1/3
    ([5, 2, 2, 7, 5], [0, 2], "mean", None),  # row 7 takes row 5's count, 1/2
    ([0, 0, 3, 1, 0, 4], [0, 2], "sum", 0),   # padding lookups still count
    ([3, 0, 3, 1], [0, 2], "sum", None),      # here every row gets its own count
])
def test_scale_grad_by_freq_follows_torchs_bag_kernel(ids, offsets, mode, padding_idx):
    # PyTorch's bag backward divides the k-th distinct index (sorted) by the count of the
    # k-th sorted lookup; the grads are sums of a few 1/n: compared with a float32 tolerance.
    w = np.zeros((8, 2), np.float32)
    grads = []
    for L, lib_F in ((torch, TF), (ember, F)):
        weight = L.tensor(w, requires_grad=True)
        lib_F.embedding_bag(L.tensor(ids), weight, L.tensor(offsets), mode=mode,
                            scale_grad_by_freq=True, padding_idx=padding_idx).sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_scale_grad_by_freq_of_embedding_uses_each_rows_own_count():
    grads = []
    for L in (torch, ember):
        weight = L.zeros(8, 2, requires_grad=True)
        L.nn.functional.embedding(L.tensor([1, 1, 1, 2]), weight,
                                  scale_grad_by_freq=True).sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_sparse_gradient_leaves_padding_lookups_out(mode):
    """PyTorch's sparse embedding_bag gradient has one entry per lookup that is not
    padding_idx (the dense gradient's padding row is zero either way)."""
    res = []
    for L in (ember, torch):
        bag = L.nn.EmbeddingBag(8, 3, mode=mode, sparse=True, padding_idx=0)
        psw = L.tensor([[1.0, 2.0, 3.0], [0.5, 1.0, 1.0]]) if mode == "sum" else None
        bag(L.tensor([[0, 4, 7], [7, 0, 0]]), per_sample_weights=psw).sum().backward()
        g = bag.weight.grad
        res.append((g._indices().tolist(), g._values().numpy(), g.is_coalesced()))
    assert res[0][0] == res[1][0] == [[4, 7, 7]]
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]
