"""sparse.softmax / sparse.log_softmax (over the specified entries of each line) and
Tensor.sparse_mask, against torch: pattern, values, gradients, node names and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

# a 3x3 pattern with a duplicate coordinate (1, 0), and a hybrid one with a dense dim
IDX = [[0, 1, 1, 2, 1], [2, 0, 2, 1, 0]]
VALS = [1.0, 2.0, 3.0, 4.0, 5.0]


def _pair(hybrid: bool):
    if hybrid:
        v = np.arange(10.0, dtype=np.float32).reshape(5, 2)
        return [(L, L.sparse_coo_tensor(L.tensor(IDX[:1]), L.tensor(v, requires_grad=True),
                                        (3, 2))) for L in (torch, ember)]
    v = np.array(VALS, np.float32)
    return [(L, L.sparse_coo_tensor(L.tensor(IDX), L.tensor(v, requires_grad=True), (3, 3)))
            for L in (torch, ember)]


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("hybrid,dim", [(False, 0), (False, -1), (True, 0), (True, 1)])
def test_softmax_over_specified_entries(fn, hybrid, dim):
    outs = []
    for L, s in _pair(hybrid):
        out = getattr(L.sparse, fn)(s, dim)
        assert out.is_coalesced() and type(out.grad_fn).__name__ == (
            "SparseSoftmaxBackward0" if fn == "softmax" else "SparseLogSoftmaxBackward0")
        outs.append((out.indices().numpy(), out.values().detach().numpy()))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    # exp and log are transcendental (NumPy's vs torch's vector path): a float32 tolerance
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=2e-6, atol=1e-7)


def test_softmax_gradient_reaches_the_values():
    grads = []
    for L in (torch, ember):
        v = L.tensor(VALS, requires_grad=True)
        out = L.sparse.softmax(L.sparse_coo_tensor(L.tensor(IDX), v, (3, 3)), 1)
        (out.to_dense() * L.arange(9.0).reshape(3, 3)).sum().backward()
        grads.append(v.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-7)  # (through exp)


def test_softmax_dtype_argument():
    s = ember.sparse_coo_tensor(ember.tensor(IDX), ember.tensor(VALS), (3, 3))
    assert ember.sparse.softmax(s, 1, dtype=ember.float64).dtype is ember.float64


def test_sparse_mask_keeps_the_masks_pattern_and_grads_the_dense_tensor():
    got = []
    for L in (torch, ember):
        d = L.arange(9.0).reshape(3, 3).requires_grad_()
        m = d.sparse_mask(L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VALS), (3, 3)))
        assert not m.is_coalesced() and type(m.grad_fn).__name__ == "SparseMaskBackward0"
        m.to_dense().sum().backward()
        got.append((m._indices().numpy(), m._values().detach().numpy(), d.grad.numpy()))
    for a, b in zip(got[1], got[0]):
        np.testing.assert_array_equal(a, b)


BAD = [
    ("softmax of a dense tensor", lambda L, s: L.sparse.softmax(L.ones(2, 2), 0)),
    ("softmax dim", lambda L, s: L.sparse.softmax(s, 2)),
    ("dense mask", lambda L, s: L.ones(2, 2).sparse_mask(L.ones(2, 2))),
    ("mask size", lambda L, s: L.ones(2, 3).sparse_mask(s)),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[b[0] for b in BAD])
def test_errors_as_torch(name, fn):
    with pytest.raises(Exception) as t:
        fn(torch, torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS), (3, 3)))
    with pytest.raises(type(t.value)) as e:
        fn(ember, ember.sparse_coo_tensor(ember.tensor(IDX), ember.tensor(VALS), (3, 3)))
    # (torch's dispatcher text goes on to list its backends: the first sentence is compared)
    assert str(t.value).startswith(str(e.value).replace("ember.", "torch."))
