"""Embedding(sparse=True) gives PyTorch's sparse COO gradient, and what consumes one (the
engine's accumulation, a dense parameter's `add_`, SGD and SparseAdam) rounds as torch does."""

import numpy as np
import pytest
import torch

import ember

from helpers import same_message

W0 = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)


def _embedding(L, **kw):
    emb = L.nn.Embedding(10, 4, sparse=True, **kw)
    with L.no_grad():
        emb.weight.copy_(L.tensor(W0))
    return emb


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_the_gradient_is_sparse_with_one_row_per_lookup(padding_idx):
    grads = []
    for L in (ember, torch):
        emb = _embedding(L, padding_idx=padding_idx)
        (emb(L.tensor([[1, 2], [1, 5]])) * L.tensor([1.0, -2.0, 0.5, 3.0])).sum().backward()
        g = emb.weight.grad
        assert g.is_sparse and not g.is_coalesced()
        grads.append((g._indices().numpy(), g._values().numpy(), g._nnz()))
    (ie, ve, ne), (it, vt, nt) = grads
    assert ne == nt == (3 if padding_idx == 2 else 4)
    np.testing.assert_array_equal(ie, it)
    np.testing.assert_array_equal(ve, vt)


def test_accumulated_sparse_gradients_and_an_sgd_step_are_torchs_bits():
    out = {}
    for L in (ember, torch):
        emb = _embedding(L)
        for _ in range(3):  # (uncoalesced gradients accumulate by concatenation: nnz 12)
            emb(L.tensor([[1, 3], [1, 1]])).sum().backward()
        nnz = emb.weight.grad._nnz()
        L.optim.SGD(emb.parameters(), lr=0.1).step()  # (each entry added in turn)
        out[L.__name__] = nnz, emb.weight.detach().numpy()
    assert out["ember"][0] == out["torch"][0] == 12
    np.testing.assert_array_equal(out["ember"][1], out["torch"][1])


def test_embedding_bag_gradient_is_sparse_too():
    dense = []
    for L in (ember, torch):
        bag = L.nn.EmbeddingBag(10, 4, mode="sum", sparse=True)
        with L.no_grad():
            bag.weight.copy_(L.tensor(W0))
        bag(L.tensor([[1, 2, 1], [4, 4, 0]])).pow(2).sum().backward()
        assert bag.weight.grad.is_sparse
        dense.append(bag.weight.grad.to_dense().numpy())
    np.testing.assert_allclose(dense[0], dense[1], rtol=1e-6)


def test_scale_grad_by_freq_with_sparse_gradients_is_refused():
    def call(L):
        _embedding(L, scale_grad_by_freq=True)(L.tensor([1, 1])).sum().backward()

    same_message(call)


def test_dense_add_of_a_sparse_tensor_adds_each_entry_in_turn():
    idx = np.array([[3, 1, 3, 3, 0]])
    vals = np.float32([[0.1], [0.2], [0.3], [0.7], [1e-8]]) * np.ones((1, 2), np.float32)
    out = []
    for L in (ember, torch):
        s = L.sparse_coo_tensor(L.tensor(idx), L.tensor(vals), (5, 2))
        d = L.tensor(W0[:5, :2].copy())
        d.add_(s, alpha=-0.3)
        out.append(d.numpy())
    np.testing.assert_array_equal(out[0], out[1])


def test_sum_of_uncoalesced_sparse_tensors_concatenates_their_entries():
    res = []
    for L in (ember, torch):
        a = L.sparse_coo_tensor(L.tensor([[1, 0, 1]]), L.tensor([1.0, 2.0, 3.0]), (3,))
        b = L.sparse_coo_tensor(L.tensor([[2, 1]]), L.tensor([4.0, 5.0]), (3,))
        s = a + b
        res.append((s._indices().numpy(), s._values().numpy(), s.is_coalesced()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2] == res[1][2] is False


@pytest.mark.parametrize("first,second", [("sum", "sum"), ("sum", "mul"), ("mul", "sum"),
                                          ("mul", "mul")])
def test_how_a_second_sparse_gradient_joins_the_first(first, second):
    """PyTorch merges two sparse tensors' sorted entry lists when both hold contiguous
    values and concatenates them otherwise; a gradient expanded from `sum()` is not
    contiguous, a leaf's stored `.grad` is."""
    def nnz(L):
        w = L.tensor([1.0, 2.0])
        emb = L.nn.Embedding(10, 2, sparse=True)
        for kind in (first, second):
            y = emb(L.tensor([1, 3, 1]))
            (y.sum() if kind == "sum" else (y * w).sum()).backward()
        return emb.weight.grad._nnz()

    assert nnz(ember) == nnz(torch) == (6 if second == "sum" else 3)


def _entries(g):
    return g._indices().tolist(), g._values()[:, 0].tolist(), g.is_coalesced()


@pytest.mark.parametrize("order", ["first_scaled", "second_scaled", "reversed_sum"])
def test_a_weight_used_twice_in_one_graph_lists_its_earliest_use_first(order):
    """PyTorch's engine runs later nodes first and puts the newer gradient first when the
    buffered one is sparse (new + old), so the concatenated entries follow the lookups'
    order in the forward pass."""
    res = []
    for L in (ember, torch):
        emb = _embedding(L)
        a = emb(L.tensor([0, 1])).sum() * (3.0 if order == "first_scaled" else 1.0)
        b = emb(L.tensor([1, 2])).sum() * (3.0 if order == "second_scaled" else 1.0)
        (b + a if order == "reversed_sum" else a + b).backward()
        res.append(_entries(emb.weight.grad))
    assert res[0] == res[1]


@pytest.mark.parametrize("create_graph", [False, True])
def test_autograd_grad_of_a_weight_used_twice(create_graph):
    """With create_graph (grad mode on) PyTorch's buffer adds old + new instead."""
    res = []
    for L in (ember, torch):
        emb = _embedding(L)
        y = emb(L.tensor([0, 1])).sum() * 2 + emb(L.tensor([2, 3])).sum()
        g, = L.autograd.grad(y, emb.weight, create_graph=create_graph)
        res.append(_entries(g))
    assert res[0] == res[1]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_with_create_graph_stores_a_sparse_grad():
    res = []
    for L in (ember, torch):
        emb = _embedding(L)
        y = emb(L.tensor([0, 1])).sum() * 2 + emb(L.tensor([2, 3])).sum()
        y.backward(create_graph=True)
        res.append(_entries(emb.weight.grad) + (emb.weight.grad.layout is L.sparse_coo,))
    assert res[0] == res[1]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_a_sparse_gradient_made_with_create_graph_is_differentiable():
    """The sparse gradient's values stay in the graph (the stored `.grad` is a clone,
    CloneBackward0), so a penalty on the gradient reaches the weight again."""
    res = []
    for L in (ember, torch):
        emb = _embedding(L)
        (emb(L.tensor([1, 1, 2])) ** 3).sum().backward(create_graph=True)
        g = emb.weight.grad
        first = (type(g.grad_fn).__name__, g.requires_grad, g._values().detach().numpy())
        (g.to_dense() ** 2).sum().backward()
        res.append(first + (emb.weight.grad.to_dense().detach().numpy(),))
    (ne, re_, ve, we), (nt, rt, vt, wt) = res
    assert ne == nt == "CloneBackward0" and re_ and rt
    # products of a few float32 factors in another order than torch's kernels
    np.testing.assert_allclose(ve, vt, rtol=1e-6)
    np.testing.assert_allclose(we, wt, rtol=1e-6)
