"""The sparse tensor type against torch: what it reports, how it prints, and what it refuses
(with torch's exception types); and that the strided tensor is untouched by it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops.sparse_tensor import SparseTensor

from helpers import same_error, same_message

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]
VAL = [3.0, 4.0, 5.0, 1.0]


def sparse(L, idx=IDX, val=VAL, size=(2, 3), **kw):
    return L.sparse_coo_tensor(L.tensor(idx), L.tensor(val, **kw), size)


def test_metadata():
    e, t = sparse(ember), sparse(torch)
    assert isinstance(e, ember.Tensor) and type(e) is SparseTensor
    assert e.is_sparse and not ember.ones(1).is_sparse
    assert e.layout is ember.sparse_coo and repr(e.layout) == "ember.sparse_coo"
    assert (e.sparse_dim(), e.dense_dim(), e._nnz()) == (t.sparse_dim(), t.dense_dim(), t._nnz())
    assert tuple(e.shape) == tuple(t.shape) and tuple(e.size()) == tuple(t.size())
    assert e.size(-1) == t.size(-1) and e.dim() == t.dim() and e.numel() == t.numel()
    assert e.dtype is ember.float32 and str(e.device) == "cpu"
    assert e.stride() == t.stride() and e.stride(1) == t.stride(1)
    assert e.is_contiguous() == t.is_contiguous() and e.storage_offset() == t.storage_offset()
    assert e._indices().dtype is ember.int64
    assert e._indices().tolist() == t._indices().tolist()
    assert e._values().tolist() == t._values().tolist()
    assert e.requires_grad is False and e.is_leaf


@pytest.mark.parametrize("make", [
    lambda L: sparse(L),
    lambda L: sparse(L).coalesce(),
    lambda L: sparse(L, dtype=L.float64),
    lambda L: sparse(L, val=[3, 4, 5, 1]),
    lambda L: sparse(L, val=[True, False, True, True]),
    lambda L: sparse(L, dtype=L.float16),
    lambda L: sparse(L).requires_grad_(),
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL, requires_grad=True), (2, 3)),
    lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (2, 3)),
    lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.arange(6.).view(2, 3) / 7, (2, 3)),
    lambda L: L.arange(40.).view(4, 10).to_sparse(),
    lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1e-8, 123456.0]), (2,)),
])
def test_repr_matches_torch(make):
    e, t = make(ember), make(torch)
    assert repr(e) == repr(t).replace("torch.", "ember.")


def test_repr_under_the_torch_name():
    from ember import _names

    old = _names.prefix
    _names.prefix = "torch"
    try:
        assert repr(sparse(ember)) == repr(sparse(torch))
    finally:
        _names.prefix = old


@pytest.mark.parametrize("call", [
    lambda L: sparse(L).view(6),
    lambda L: sparse(L).exp(),
    lambda L: sparse(L).reshape(6),
    lambda L: sparse(L).numpy(),
    lambda L: sparse(L) + 1,
    lambda L: sparse(L) + L.ones(2, 3),
    lambda L: sparse(L).tolist(),
    lambda L: sparse(L).data_ptr(),
    lambda L: sparse(L).contiguous(),
    lambda L: sparse(L).item(),
    lambda L: sparse(L).untyped_storage(),
    lambda L: sparse(L).indices(),
    lambda L: sparse(L)[0:1],
    lambda L: sparse(L)[5],
    lambda L: sparse(L) + sparse(L, size=(3, 3)),
    lambda L: L.sparse.mm(sparse(L), L.ones(2, 2)),
    lambda L: sparse(L).t().t().view(-1),
])
def test_unsupported_ops_raise_as_torch(call):
    same_error(call)


def test_refusals_say_what_to_do():
    s = sparse(ember)
    with pytest.raises(NotImplementedError, match=r"'aten::view'.*SparseCPU"):
        s.view(6)
    with pytest.raises(NotImplementedError, match=r"to_dense\(\)"):
        s.exp()
    with pytest.raises(TypeError, match=r"Use Tensor.to_dense\(\) first"):
        s.numpy()
    with pytest.raises(RuntimeError, match=r"Use add\(dense, sparse\) instead"):
        s + ember.ones(2, 3)


def test_dense_plus_sparse_is_dense():
    e = ember.ones(2, 3) + sparse(ember)
    t = torch.ones(2, 3) + sparse(torch)
    assert not e.is_sparse
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_indexing_with_an_integer():
    for i in (0, 1, -1):
        e, t = sparse(ember)[i], sparse(torch)[i]
        assert e.is_sparse and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())


def test_detach_clone_and_to():
    s = sparse(ember).requires_grad_()
    d = s.detach()
    assert d.is_sparse and not d.requires_grad and d._values() is s._values()
    c = s.clone()
    assert c.is_sparse and c._values() is not s._values()
    assert c._values().tolist() == s._values().tolist()
    h = sparse(ember).to(ember.float64)
    assert h.dtype is ember.float64 and h.is_sparse and sparse(ember).double().dtype is \
        ember.float64


def test_strided_tensor_reports_its_layout():
    x = ember.ones(2)
    assert x.layout is ember.strided and x.to_dense() is x and type(x) is ember.Tensor


@pytest.mark.parametrize("name", ["indices", "values", "coalesce", "is_coalesced",
                                  "sparse_dim", "dense_dim"])
@pytest.mark.parametrize("make", [lambda L: L.ones(2, 3), lambda L: L.eye(3).to_sparse(),
                                  lambda L: L.eye(3).to_sparse_csr(),
                                  lambda L: L.eye(3).to_sparse_csc()],
                         ids=["strided", "coo", "csr", "csc"])
def test_sparse_accessors_on_every_layout_answer_or_refuse_as_torch(name, make):
    def call(L):
        return getattr(make(L), name)()

    try:
        want = call(torch)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as got:
            call(ember)
        assert str(got.value) == str(exc)
        return
    got = call(ember)
    if isinstance(want, torch.Tensor):
        assert got.layout.name == str(want.layout).split(".")[1]
        assert (got.to_dense() if got.is_sparse else got).tolist() == \
            (want.to_dense() if want.is_sparse else want).tolist()
    else:
        assert got == want


@pytest.mark.parametrize("idx,val,size", [
    ([0, 1], [1.0, 2.0], (3,)),            # 1-D indices with a size: the size's length first
    ([0, 1], [[1.0], [2.0]], (3,)),
    ([0, 1], 1.0, (3,)),
    ([0, 1], [1.0, 2.0], (3, 3)),          # ... which passes, then the rank of the indices
    ([0, 1], [1.0, 2.0], None),
    ([[[0, 1], [1, 0]]], [1.0, 2.0], (3,)),
])
def test_constructor_checks_in_torch_order(idx, val, size):
    extra = () if size is None else (size,)
    same_message(lambda L: L.sparse_coo_tensor(L.tensor(idx), L.tensor(val), *extra))


def test_constructor_zero_dim_indices():
    same_message(lambda L: L.sparse_coo_tensor(L.tensor(0), L.ones(2), (3,)), IndexError)
    same_message(lambda L: L.sparse_coo_tensor(L.tensor(0), L.ones(2)))
