"""`dense.add_(sparse, alpha=)`, the step of every optimizer on a sparse gradient, against
PyTorch's CPU kernel: entry by entry with one rounding per element (its BLAS axpy) for a
sparse tensor with dense dims or with duplicate coordinates, `r += alpha * v` rounded twice
for a coalesced one without dense dims. The references are computed here in NumPy; torch is
compared to one float32 ulp, since its axpy rounds once only on a CPU with FMA."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

ALPHA = -0.1


def _case(hybrid: bool, coalesce: bool, nnz: int = 3000, rows: int = 40):
    rng = np.random.default_rng(7 + hybrid + 2 * coalesce)
    idx = rng.integers(0, rows, (1, nnz))
    vals = rng.standard_normal((nnz, 3) if hybrid else nnz).astype(np.float32)
    dense = rng.standard_normal((rows, 3) if hybrid else rows).astype(np.float32)
    return idx, vals, dense


def _run(L, idx, vals, dense, coalesce, alpha=ALPHA):
    s = L.sparse_coo_tensor(L.tensor(idx), L.tensor(vals), dense.shape)
    if coalesce:
        s = s.coalesce()
    d = L.tensor(dense)
    d.add_(s, alpha=alpha)
    return d.numpy(), s._indices().numpy(), s._values().numpy()


def _reference(dense, idx, vals, fused: bool, alpha=ALPHA):
    out = dense.copy()
    a = np.float32(alpha)
    for k in range(idx.shape[1]):
        i = tuple(idx[:, k])
        if fused:
            out[i] = (out[i].astype(np.float64) + np.float64(a) * vals[k]).astype(np.float32)
        else:
            out[i] = out[i] + (a * vals[k]).astype(np.float32)
    return out


@pytest.mark.parametrize("hybrid,coalesce,fused", [
    (True, False, True), (True, True, True), (False, False, True), (False, True, False)])
def test_add_sparse_into_dense_rounding(hybrid, coalesce, fused):
    idx, vals, dense = _case(hybrid, coalesce)
    got, i, v = _run(ember, idx, vals, dense, coalesce)
    assert np.array_equal(got, _reference(dense, i, v, fused))
    want = _run(torch, idx, vals, dense, coalesce)[0]
    # NOTE: torch's axpy rounds once on an FMA CPU (bit-equal here), twice without FMA
    assert np.allclose(got, want, rtol=2 ** -23, atol=0)


def test_two_sparse_dims_duplicates_in_entry_order():
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 5, (2, 500))
    vals = rng.standard_normal(500).astype(np.float32)
    dense = rng.standard_normal((5, 5)).astype(np.float32)
    got, i, v = _run(ember, idx, vals, dense, False, alpha=0.3)
    assert np.array_equal(got, _reference(dense, i, v, True, alpha=0.3))


def test_sgd_momentum_on_sparse_embedding_gradient():
    def run(L):
        L.manual_seed(1)
        e = L.nn.Embedding(6, 2, sparse=True)
        o = L.optim.SGD(e.parameters(), lr=0.1, momentum=0.9)
        for k in range(3):
            o.zero_grad()
            e(L.tensor([1, 3, 3, k])).pow(2).sum().backward()
            o.step()
        return e.weight.detach().numpy()

    # NOTE: one float32 ulp for CPUs without FMA (torch's axpy then rounds twice)
    assert np.allclose(run(ember), run(torch), rtol=2 ** -22, atol=0)


def test_grad_tracking_and_other_dtypes_keep_general_path():
    idx = np.array([[0, 0, 1]])
    for dtype in ("float64", "float16"):
        s = ember.sparse_coo_tensor(ember.tensor(idx), ember.ones(3, dtype=getattr(ember, dtype)),
                                    (2,))
        t = torch.sparse_coo_tensor(torch.tensor(idx), torch.ones(3, dtype=getattr(torch, dtype)),
                                    (2,))
        e = ember.zeros(2, dtype=getattr(ember, dtype)).add_(s, alpha=0.5)
        w = torch.zeros(2, dtype=getattr(torch, dtype)).add_(t, alpha=0.5)
        assert e.tolist() == w.tolist() == [1.0, 0.5]


def test_sparse_plus_sparse_with_alpha_rounds_once_per_element():
    # (sparse_functions.add: PyTorch's merge adds `alpha * b` with an axpy)
    rng = np.random.default_rng(11)
    ia, ib = np.sort(rng.choice(30, 12, replace=False)), np.sort(rng.choice(30, 15, replace=False))
    va = rng.standard_normal((12, 3)).astype(np.float32)
    vb = rng.standard_normal((15, 3)).astype(np.float32)

    def run(L):
        a = L.sparse_coo_tensor(L.tensor(ia[None]), L.tensor(va), (30, 3)).coalesce()
        b = L.sparse_coo_tensor(L.tensor(ib[None]), L.tensor(vb), (30, 3)).coalesce()
        r = a.add(b, alpha=0.9)
        return r._indices().numpy(), r._values().numpy()

    (ei, ev), (ti, tv) = run(ember), run(torch)
    assert np.array_equal(ei, ti)
    ref = {int(i): va[k].astype(np.float64) for k, i in enumerate(ia)}
    for k, i in enumerate(ib):
        ref[int(i)] = ref.get(int(i), 0.0) + np.float64(np.float32(0.9)) * vb[k]
    assert np.array_equal(ev, np.stack([ref[int(i)] for i in ei[0]]).astype(np.float32))
    assert np.allclose(ev, tv, rtol=2 ** -23, atol=0)  # (torch: once with FMA, else twice)


def test_nesterov_sgd_on_sparse_embedding():
    def run(L):
        L.manual_seed(1)
        e = L.nn.Embedding(30, 4, sparse=True)
        o = L.optim.SGD(e.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        g = L.Generator().manual_seed(2)
        for _ in range(6):
            o.zero_grad()
            ids = L.randint(0, 30, (64,), generator=g)
            (e(ids).pow(2).sum(1) * L.linspace(-1, 1, 64)).sum().backward()
            o.step()
        return e.weight.detach().numpy()

    # NOTE: a few float32 ulps for CPUs without FMA (torch's axpy then rounds twice)
    assert np.allclose(run(ember), run(torch), rtol=2 ** -20, atol=0)
