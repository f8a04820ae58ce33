"""Sparse COO primitives against torch: construction, coalesce, to_dense / to_sparse, the
sparse ops composed from them, and gradients (dense operand, values, sparse leaves)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import (
    DTYPE_PAIRS,
    E2T,
    TORCH_VECTOR_KERNELS,
    assert_same,
    assert_ulp,
    check_grads,
    same_error,
    to_ember,
    to_torch,
)

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # unsorted, (0, 2) twice
VAL = [3.0, 4.0, 5.0, 1.0, -2.0]


def assert_sparse(e, t) -> None:
    """Same sparse tensor: layout, shape, dtype, flags, raw indices and values."""
    assert e.is_sparse and t.is_sparse
    assert tuple(e.shape) == tuple(t.shape)
    assert E2T[e.dtype] == t.dtype
    assert (e._nnz(), e.sparse_dim(), e.dense_dim()) == (t._nnz(), t.sparse_dim(), t.dense_dim())
    assert e.is_coalesced() == t.is_coalesced()
    assert_same(e._indices(), t._indices())
    assert_same(e._values(), t._values())


def both(fn):
    return fn(ember), fn(torch)


# --- construction ------------------------------------------------------------------------

@pytest.mark.parametrize("size", [(3, 4), None, (5, 3)])
def test_construction_keeps_duplicates_and_order(size):
    args = () if size is None else (size,)
    e, t = both(lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL), *args))
    assert_sparse(e, t)
    assert e.layout is ember.sparse_coo and ember.randn(2).layout is ember.strided
    assert e.size() == ember.Size(t.size()) and e.dim() == t.dim() and e.numel() == t.numel()


def test_construction_from_lists_with_dtype():
    e, t = both(lambda L: L.sparse_coo_tensor([[0, 2]], [1, 2], dtype=L.float64))
    assert_sparse(e, t)
    e, t = both(lambda L: L.sparse_coo_tensor(L.tensor([[0, 2]], dtype=L.int32), [1.0, 2.0],
                                              (4,)))
    assert_sparse(e, t)


def test_hybrid_and_empty():
    e, t = both(lambda L: L.sparse_coo_tensor(L.tensor([[1, 0, 1]]),
                                              L.arange(6.).view(3, 2), (2, 2)))
    assert_sparse(e, t)
    assert_same(e.to_dense(), t.to_dense())
    assert_sparse(e.coalesce(), t.coalesce())
    e, t = both(lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (2, 3)))
    assert_sparse(e, t)
    assert_same(e.to_dense(), t.to_dense())
    e, t = both(lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0)))
    assert_sparse(e, t)


@pytest.mark.parametrize("call", [
    lambda L: L.sparse_coo_tensor(L.tensor([0, 1]), L.ones(2), (3,)),  # indices not 2-D
    lambda L: L.sparse_coo_tensor(L.zeros(2, 2, 2, dtype=L.long), L.ones(2), (3, 3)),
    lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(3), (3,)),  # nnz mismatch
    lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(2), (3, 3)),  # len(size)
    lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(2, 2), (3, 3)),  # dense size
    lambda L: L.sparse_coo_tensor(L.tensor([[0, 5]]), L.ones(2), (3,), check_invariants=True),
    lambda L: L.sparse_coo_tensor(L.tensor([[0, -1]]), L.ones(2), (3,), check_invariants=True),
    lambda L: L.sparse_coo_tensor(L.tensor([[0, 1], [2, 3]]), L.ones(2), (2, 3),
                                  check_invariants=True),  # size too small in dim 1
])
def test_bad_construction_raises_as_torch(call):
    assert same_error(call) is RuntimeError


def test_bad_construction_messages():
    with pytest.raises(RuntimeError, match=r"indices must be sparse_dim x nnz, but got: \[2\]"):
        ember.sparse_coo_tensor(ember.tensor([0, 1]), ember.ones(2))
    with pytest.raises(RuntimeError, match="for dim 1, size is 3 but found index 3"):
        ember.sparse_coo_tensor([[0, 1], [2, 3]], [1.0, 2.0], (2, 3), check_invariants=True)


# --- coalesce, to_dense, to_sparse -------------------------------------------------------

@pytest.mark.parametrize("e_dt,t_dt", DTYPE_PAIRS)
def test_coalesce_and_round_trips_over_dtypes(e_dt, t_dt):
    raw = np.array([3, 4, 5, 1, 0, 2])
    vals = raw.astype(np.complex128) * (1 + 1j) if e_dt.is_complex else raw
    e, t = both(lambda L: L.sparse_coo_tensor(
        L.tensor([[0, 1, 1, 0, 2, 1], [2, 0, 2, 2, 1, 0]]),
        L.tensor(vals.tolist(), dtype=e_dt if L is ember else t_dt), (3, 3)))
    assert_sparse(e, t)
    assert_sparse(e.coalesce(), t.coalesce())
    assert e.coalesce().is_coalesced() and not e.is_coalesced()
    assert_same(e.to_dense(), t.to_dense())
    d_e, d_t = e.to_dense(), t.to_dense()
    assert_sparse(d_e.to_sparse(), d_t.to_sparse())
    assert_same(d_e.to_sparse().to_dense(), d_t)
    assert_same(e.coalesce().indices(), t.coalesce().indices())
    assert_same(e.coalesce().values(), t.coalesce().values())
    assert same_error(lambda L: L.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2,)).values()) \
        is RuntimeError


def test_coalesce_sums_duplicates_and_sorts():
    s = ember.sparse_coo_tensor([[2, 0, 2, 1]], [1.0, 2.0, 3.0, 4.0], (4,)).coalesce()
    assert s._indices().tolist() == [[0, 1, 2]]
    assert s._values().tolist() == [2.0, 4.0, 4.0]


def test_to_sparse_sparse_dim_out_of_range():
    assert same_error(lambda L: L.ones(2, 3).to_sparse(0)) is RuntimeError
    assert same_error(lambda L: L.ones(2, 3).to_sparse(3)) is RuntimeError
    assert_sparse(ember.tensor(2.0).to_sparse(), torch.tensor(2.0).to_sparse())


@pytest.mark.parametrize("sparse_dim", [1, 2, 3])
def test_to_sparse_with_sparse_dim(sparse_dim):
    a = np.zeros((3, 2, 2), np.float32)
    a[0, 1, 0], a[2, 0, 1], a[2, 1, 1] = 1.0, 2.0, 3.0
    assert_sparse(ember.tensor(a).to_sparse(sparse_dim), torch.tensor(a).to_sparse(sparse_dim))
    assert_same(ember.tensor(a).to_sparse(sparse_dim).to_dense(), torch.tensor(a))


def test_uncoalesced_indices_and_strided_to_dense():
    s = ember.sparse_coo_tensor(IDX, VAL)
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    x = ember.ones(2)
    assert x.to_dense() is x and s.to_sparse() is s


# --- composed ops --------------------------------------------------------------------------

def _pair(L, idx=IDX, val=VAL, size=(3, 3)):
    return L.sparse_coo_tensor(L.tensor(idx), L.tensor(val), size)


@pytest.mark.parametrize("op", [
    lambda s: s * 2, lambda s: 2.5 * s, lambda s: s / 4, lambda s: -s, lambda s: s.t(),
    lambda s: s + s, lambda s: s.coalesce() + s.coalesce().t(), lambda s: s + s.coalesce(),
    lambda s: s.coalesce() * 3, lambda s: s[2], lambda s: s.coalesce()[0],
    lambda s: s - s.coalesce(), lambda s: s.coalesce().sub(s, alpha=2), lambda s: list(s)[1],
    lambda s: __import__("copy").deepcopy(s),
])
def test_sparse_results_match(op):
    assert_sparse(op(_pair(ember)), op(_pair(torch)))


def test_sparse_add_merges_as_torch():
    e, t = both(lambda L: _pair(L) + _pair(L, [r[:2] for r in IDX], VAL[:2]))
    assert_sparse(e, t)


def test_sum():
    e, t = _pair(ember), _pair(torch)
    assert_same(ember.sparse.sum(e), torch.sparse.sum(t))
    assert_same(e.sum(), t.sum())
    for dim in (0, 1, -1):
        assert_sparse(ember.sparse.sum(e, dim), torch.sparse.sum(t, dim))
    assert_same(ember.sparse.sum(e, (0, 1)), torch.sparse.sum(t, (0, 1)))


@pytest.mark.parametrize("how", ["sparse.mm", "mm", "matmul", "@"])
def test_mm_values(how):
    d = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)

    def run(L):
        s, dd = _pair(L), L.tensor(d)
        return {"sparse.mm": lambda: L.sparse.mm(s, dd), "mm": lambda: L.mm(s, dd),
                "matmul": lambda: L.matmul(s, dd), "@": lambda: s @ dd}[how]()

    assert_same(*both(run))
    assert_same(_pair(ember) @ ember.tensor(d[:, 0]), _pair(torch) @ torch.tensor(d[:, 0]))


def test_mm_errors():
    assert same_error(lambda L: L.sparse.mm(_pair(L), L.ones(2, 2))) is RuntimeError
    assert same_error(lambda L: L.sparse.mm(_pair(L), L.ones(3, 2, dtype=L.float64))) \
        is RuntimeError


# --- gradients ---------------------------------------------------------------------------

def _product(L, how: str, s, d):
    if how == "sparse.mm":
        return L.sparse.mm(s, d)
    if how == "mm":
        return L.mm(s, d)
    return s @ d if how == "@" else s.to_dense() @ d


def _grads(how: str, values_grad: bool):
    """Gradients of a weighted sum of `how`(S, D) for D and for S (a leaf) or its values."""
    rng = np.random.default_rng(1)
    d = rng.standard_normal((3, 2))
    w = rng.standard_normal((3, 2))
    out = {}
    for L in (ember, torch):
        v = L.tensor(VAL, dtype=L.float64, requires_grad=values_grad)
        dd = L.tensor(d, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(IDX), v, (3, 3), requires_grad=not values_grad)
        y = _product(L, how, s, dd)
        (y * L.tensor(w)).sum().backward()
        out[L] = (y, dd.grad, v.grad if values_grad else s.grad)
    return out[ember], out[torch]


@pytest.mark.parametrize("how", ["sparse.mm", "mm", "@", "to_dense"])
def test_mm_grads_for_values_and_dense(how):
    (y_e, dg_e, vg_e), (y_t, dg_t, vg_t) = _grads(how, values_grad=True)
    assert_same(y_e, y_t)
    assert_same(dg_e, dg_t)
    assert_same(vg_e, vg_t)


@pytest.mark.parametrize("how", ["sparse.mm", "mm", "@", "to_dense"])
def test_sparse_leaf_grad_is_what_torch_gives(how):
    (y_e, dg_e, sg_e), (y_t, dg_t, sg_t) = _grads(how, values_grad=False)
    assert type(y_e.grad_fn).__name__ == type(y_t.grad_fn).__name__
    assert_same(dg_e, dg_t)
    assert sg_e.is_sparse == sg_t.is_sparse  # sparse.mm, to_dense: sparse; mm, @: dense
    if sg_t.is_sparse:
        assert_sparse(sg_e, sg_t)
    else:
        assert_same(sg_e, sg_t)


def test_sparse_grad_accumulates_over_two_backwards():
    out = []
    for L in (ember, torch):
        s = _pair(L).requires_grad_()
        L.sparse.mm(s, L.ones(3, 2)).sum().backward()
        s.to_dense().sum().backward()
        out.append(s.grad)
    assert_sparse(*out)


def test_sparse_grads_meeting_in_one_backward_sum():
    out = []
    for L in (ember, torch):
        s = _pair(L).requires_grad_()
        d = L.ones(3, 2)
        (L.sparse.mm(s, d).sum() + (L.sparse.mm(s, 2 * d)).sum()).backward()
        out.append(s.grad)
    # NOTE: torch's engine flags this sum coalesced; ember's sums with the sparse add, which
    # (as torch's own add does) flags it coalesced only when both terms were.
    assert not out[0].is_coalesced() and out[1].is_coalesced()
    assert_same(out[0]._indices(), out[1]._indices())
    assert_same(out[0]._values(), out[1]._values())


def test_grad_fn_names():
    for L in (ember, torch):
        v = L.tensor(VAL, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(IDX), v, (3, 3))
        names = [type(x.grad_fn).__name__ for x in
                 (s, s.coalesce(), s.to_dense(), L.sparse.mm(s, L.ones(3, 1)), s @ L.ones(3, 1))]
        assert names == ["SparseCooTensorWithDimsAndTensorsBackward0", "CoalesceBackward0",
                         "ToDenseBackward0", "SparseAddmmBackward0", "MmBackward0"]


@pytest.mark.parametrize("op", [
    lambda s: (s * 3).to_dense(), lambda s: s.t().to_dense(), lambda s: (s + s).to_dense(),
    lambda s: s.coalesce().values(), lambda s: ember.sparse.sum(s, 0).to_dense(),
    lambda s: s[1].to_dense(), lambda s: s.to_dense().to_sparse().to_dense(),
])
def test_values_grads_by_finite_differences(op):
    idx = ember.tensor(IDX)
    check_grads(lambda v: op(ember.sparse_coo_tensor(idx, v, (3, 3))),
                np.array(VAL, np.float64))


def test_dense_operand_grad_by_finite_differences():
    s = ember.sparse_coo_tensor(IDX, np.array(VAL), (3, 3))
    check_grads(lambda d: ember.sparse.mm(s, d), np.arange(6.0).reshape(3, 2))
    check_grads(lambda d: s @ d, np.arange(3.0))


def test_to_ember_round_trip_of_dense_results():
    t = _pair(torch).to_dense()
    assert_same(to_ember(t).to_sparse().to_dense(), to_torch(to_ember(t)))


def test_float32_product_rounds_as_torch_bit_for_bit():
    # many entries per row, in no particular order: the sum's rounding depends on both
    rng = np.random.default_rng(3)
    m, k, n, nnz = 20, 30, 7, 400
    idx = np.stack([rng.integers(0, m, nnz), rng.integers(0, k, nnz)])
    vals = rng.standard_normal(nnz).astype(np.float32)
    d = rng.standard_normal((k, n)).astype(np.float32)
    g = rng.standard_normal((m, n)).astype(np.float32)
    res = {}
    for L in (ember, torch):
        s = L.sparse_coo_tensor(L.tensor(idx), L.tensor(vals), (m, k), requires_grad=True)
        dd = L.tensor(d, requires_grad=True)
        y = L.sparse.mm(s, dd)
        y.backward(L.tensor(g))
        res[L] = (y.detach().numpy(), dd.grad.numpy(), s.grad._values().numpy())
    # each result is a sum of products; its last bits are only as exact as its terms' size
    dense = np.zeros((m, k))
    np.add.at(dense, tuple(idx), np.abs(vals))
    gi = s.grad._indices().numpy()
    scales = (dense @ np.abs(d), dense.T @ np.abs(g), (np.abs(g)[gi[0]] * np.abs(d)[gi[1]]).sum(1))
    # y and d.grad come from torch's own kernel, which fuses its multiply-adds in its AVX2/AVX512
    # builds; the sparse gradient from g @ d.T through MKL, whose kernel depends on the CPU
    why = ("torch's sparse mm rounds twice per product in its default (scalar) build",
           "torch's sparse mm rounds twice per product in its default (scalar) build",
           "MKL's g @ d.T adds in an order and with FMAs that depend on the CPU")
    ulps = (0 if TORCH_VECTOR_KERNELS else 4, 0 if TORCH_VECTOR_KERNELS else 4, 4)
    for a, b, scale, n, reason in zip(res[ember], res[torch], scales, ulps, why):
        assert_ulp(a, b, n, reason, scale=scale)


def test_a_row_with_more_entries_than_rounds_still_sums_right():
    from ember.ops.sparse_matmul import _fma_rows

    rng = np.random.default_rng(4)
    rows = np.zeros(50, np.int64)
    cols = rng.integers(0, 5, 50)
    vals = rng.standard_normal(50).astype(np.float32)
    d = rng.standard_normal((5, 3)).astype(np.float32)
    want = (vals.astype(np.float64)[:, None] * d.astype(np.float64)[cols]).sum(0)
    got = _fma_rows(rows, cols, vals, d, 2, max_rounds=8)
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    assert not got[1].any()
