"""CSR / CSC matrices against torch: construction, accessors, conversions, printing, the
products and their gradients, scaling, transposes, dtype changes and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops.sparse_compressed import CompressedTensor

from helpers import assert_same, rand_array, same_error, same_message

pytestmark = pytest.mark.filterwarnings("ignore:Sparse:UserWarning")

CROW, COL, VAL = [0, 2, 3, 5], [0, 2, 1, 0, 3], [1.0, 2.0, 3.0, 4.0, -5.0]


def csr(L, val=VAL, **kw):
    return L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL), L.tensor(val, **kw), (3, 4))


def _repr(x) -> str:
    return repr(x).replace("ember.", "torch.")


def test_metadata_and_accessors():
    e, t = csr(ember), csr(torch)
    assert type(e) is CompressedTensor and isinstance(e, ember.Tensor)
    assert e.layout is ember.sparse_csr and repr(e.layout) == "ember.sparse_csr"
    assert (e.is_sparse, e.is_sparse_csr) == (t.is_sparse, t.is_sparse_csr) == (False, True)
    assert tuple(e.shape) == tuple(t.shape) and e._nnz() == t._nnz() == 5
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    for name in ("crow_indices", "col_indices", "values"):
        assert getattr(e, name)().tolist() == getattr(t, name)().tolist()
    assert e.crow_indices().dtype is ember.int64
    ce, ct = e.to_sparse_csc(), t.to_sparse_csc()
    assert not ce.is_sparse_csr and ce.layout is ember.sparse_csc
    for name in ("ccol_indices", "row_indices", "values"):
        assert getattr(ce, name)().tolist() == getattr(ct, name)().tolist()
    # int32 indices stay int32 when both are
    e32 = ember.sparse_csr_tensor(ember.tensor(CROW).int(), ember.tensor(COL).int(),
                                  ember.tensor(VAL))
    assert e32.crow_indices().dtype is ember.int32 and tuple(e32.shape) == (3, 4)


def test_repr_like_torch():
    e, t = csr(ember), csr(torch)
    assert _repr(e) == repr(t)
    assert _repr(e.to_sparse_csc()) == repr(t.to_sparse_csc())
    assert _repr(e.double()) == repr(t.double())
    assert _repr(ember.zeros(2, 3).to_sparse_csr()) == repr(torch.zeros(2, 3).to_sparse_csr())
    assert _repr(e.clone().requires_grad_()) == repr(t.clone().requires_grad_())
    ev = ember.tensor(VAL, requires_grad=True)
    tv = torch.tensor(VAL, requires_grad=True)
    e2 = ember.sparse_csr_tensor(ember.tensor(CROW), ember.tensor(COL), ev, (3, 4))
    t2 = torch.sparse_csr_tensor(torch.tensor(CROW), torch.tensor(COL), tv, (3, 4))
    assert _repr(e2) == repr(t2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_conversions_round_trip(dtype):
    a = (rand_array((4, 5), np.float64) * (rand_array((4, 5), seed=1) > 0.5)).astype(dtype)
    e, t = ember.tensor(a), torch.tensor(a)
    for conv in ("to_sparse_csr", "to_sparse_csc"):
        se, st = getattr(e, conv)(), getattr(t, conv)()
        assert _repr(se) == repr(st)
        # integers and copies: bit for bit
        np.testing.assert_array_equal(se.to_dense().numpy(), st.to_dense().numpy())
        coo_e, coo_t = se.to_sparse_coo(), st.to_sparse_coo()
        assert _repr(coo_e) == repr(coo_t)
        assert _repr(coo_e.to_sparse_csr()) == repr(coo_t.to_sparse_csr())
        assert _repr(se.to_sparse(layout=ember.sparse_csc)) == \
            repr(st.to_sparse(layout=torch.sparse_csc))
    assert _repr(e.to_sparse(layout=ember.sparse_csr)) == repr(t.to_sparse(layout=torch.sparse_csr))


def test_transpose_scale_dtype():
    e, t = csr(ember), csr(torch)
    for f in (lambda x: x.t(), lambda x: x.transpose(0, 1), lambda x: x.mT,
              lambda x: x * 2.5, lambda x: 3 * x, lambda x: -x, lambda x: x.to(x.dtype),
              lambda x: x.to_sparse_csc().t(), lambda x: x + x):
        assert _repr(f(e)) == repr(f(t))
    assert _repr(e.to(ember.float64)) == repr(t.to(torch.float64))
    assert_same(e + ember.ones(3, 4), t + torch.ones(3, 4))
    assert_same(ember.ones(3, 4) + e, torch.ones(3, 4) + t)
    assert_same(e.sum(), t.sum())


def _products(L, a, d, v):
    return {
        "matmul": a @ d, "mm": L.mm(a, d), "sparse.mm": L.sparse.mm(a, d),
        "matmul_fn": L.matmul(a, d), "mv": L.mv(a, v), "matvec": a @ v,
        "addmm": L.addmm(d[:3, :2] * 0 + 1, a, d[:, :2], beta=0.5, alpha=2.0),
        "csc": a.to_sparse_csc() @ d, "dense@csr": d.T @ a.to_dense().T.to_sparse_csr(),
    }


@pytest.mark.parametrize("name", ["matmul", "mm", "sparse.mm", "matmul_fn", "mv", "matvec",
                                  "addmm", "csc", "dense@csr"])
def test_products_and_gradients(name):
    d = rand_array((4, 3))
    v = rand_array((4,), seed=2)
    res = {}
    for L in (ember, torch):
        vals = L.tensor(VAL, requires_grad=True)
        a = L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL), vals, (3, 4))
        dd, vv = L.tensor(d, requires_grad=True), L.tensor(v, requires_grad=True)
        out = _products(L, a, dd, vv)[name]
        (out * out).sum().backward()
        res[L.__name__] = (out, out.grad_fn.name(), vals.grad, dd.grad, vv.grad)
    (oe, ne, ve, de, we), (ot, nt, vt, dt_, wt) = res["ember"], res["torch"]
    assert ne == nt
    # NOTE: products are sums of float32 products; their order may differ from MKL's
    assert_same(oe, ot, rtol=1e-5, atol=1e-6)
    assert_same(ve, vt, rtol=1e-5, atol=1e-5)
    for ge, gt in ((de, dt_), (we, wt)):
        assert (ge is None) == (gt is None)
        if ge is not None:
            assert_same(ge, gt, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("masked", [False, True])
def test_gradient_of_a_csr_leaf(masked):
    d = rand_array((4, 2))
    grads = []
    for L in (ember, torch):
        a = csr(L).clone().requires_grad_()
        mm = L.sparse.mm if masked else L.mm
        mm(a, L.tensor(d)).pow(2).sum().backward()
        grads.append(a.grad)
    # unmasked: dense (the whole product); sparse.mm: on the matrix's pattern
    ge, gt = grads
    assert (ge.layout is ember.strided) == (gt.layout is torch.strided)
    np.testing.assert_allclose(ge.to_dense().numpy(), gt.to_dense().numpy(), rtol=1e-5,
                               atol=1e-6)
    # to_dense's gradient for a CSR matrix: CSR on its pattern
    a_e, a_t = csr(ember).clone().requires_grad_(), csr(torch).clone().requires_grad_()
    w = rand_array((3, 4))
    (a_e.to_dense() * ember.tensor(w)).sum().backward()
    (a_t.to_dense() * torch.tensor(w)).sum().backward()
    assert _repr(a_e.grad) == repr(a_t.grad)


def test_grad_fn_names():
    names = []
    for L in (ember, torch):
        vals = L.tensor(VAL, requires_grad=True)
        a = L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL), vals, (3, 4))
        outs = (a, a * 2, -a, a.t(), a.mT, a.to_dense(), a.values(), a.to_sparse_csc(),
                a.clone(), a.to(L.float64), a.to_sparse())
        names.append([o.grad_fn.name() for o in outs])
    assert names[0] == names[1]
    # a dense tensor through to_sparse_csr gets its gradient back dense
    x = rand_array((3, 4)) * (rand_array((3, 4), seed=3) > 0)
    g = []
    for L in (ember, torch):
        xx = L.tensor(x, requires_grad=True)
        s = xx.to_sparse_csr()
        assert s.grad_fn.name() == "ToSparseCsrBackward0"
        (s @ L.ones(4, 2)).sum().backward()
        g.append(xx.grad)
    assert_same(g[0], g[1])


@pytest.mark.parametrize("call", [
    lambda L: csr(L).stride(),
    lambda L: csr(L).is_contiguous(),
    lambda L: csr(L).contiguous(),
    lambda L: csr(L).reshape(12),
    lambda L: csr(L).tolist(),
    lambda L: csr(L).indices(),
    lambda L: csr(L).coalesce(),
    lambda L: csr(L).is_coalesced(),
    lambda L: csr(L).to_sparse_csc().crow_indices(),
    lambda L: csr(L).ccol_indices(),
    lambda L: csr(L).row_indices(),
    lambda L: csr(L).to_sparse_csc().col_indices(),
    lambda L: L.ones(2, 2).crow_indices(),
    lambda L: csr(L) / 2,
    lambda L: csr(L) @ L.ones(3, 2),
    lambda L: csr(L) @ L.ones(4, 2, dtype=L.float64),
    lambda L: L.ones(3, 3).to_sparse_csr(1),
    # (PyTorch checks these shapes under check_invariants only; ember always does)
    lambda L: L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL), L.ones(4), (3, 4),
                                  check_invariants=True),
    lambda L: L.sparse_csr_tensor(L.tensor([0, 2, 5]), L.tensor(COL), L.tensor(VAL), (3, 4),
                                  check_invariants=True),
    lambda L: L.sparse_csr_tensor(L.tensor([1, 2, 3, 5]), L.tensor(COL), L.tensor(VAL), (3, 4),
                                  check_invariants=True),
    lambda L: L.sparse_csr_tensor(L.tensor(CROW), L.tensor([0, 2, 1, 0, 4]), L.tensor(VAL),
                                  (3, 4), check_invariants=True),
    lambda L: L.sparse_csr_tensor(L.tensor(CROW), L.tensor([2, 0, 1, 0, 3]), L.tensor(VAL),
                                  (3, 4), check_invariants=True),
    lambda L: L.sparse_csr_tensor(L.tensor([0, 2, 3, 4]), L.tensor(COL), L.tensor(VAL), (3, 4),
                                  check_invariants=True),
])
def test_errors_match_torch(call):
    kind = same_error(call)
    same_message(call, kind)


@pytest.mark.parametrize("call", [
    lambda L: csr(L).view(12),
    lambda L: csr(L).T,
    lambda L: csr(L).numpy(),
    lambda L: csr(L).untyped_storage(),
    lambda L: L.mm(csr(L), L.ones(4)),
    lambda L: csr(L).long() @ L.ones(4, 2, dtype=L.int64),
])
def test_error_types_match_torch(call):
    same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: csr(L).sum(0),
    lambda L: csr(L) @ L.ones(2, 4, 2),
    lambda L: csr(L).to_dense(L.float64),
    lambda L: L.sparse_compressed_tensor(L.tensor(CROW), L.tensor(COL), L.tensor(VAL), (3, 4)),
    lambda L: L.sparse_compressed_tensor(L.tensor(CROW), L.tensor(COL), L.tensor(VAL), (3, 4),
                                         layout=L.sparse_coo),
])
def test_more_errors_match_torch(call):
    same_message(call, same_error(call))


def test_sparse_result_products_and_in_place_scaling():
    outs = []
    for L in (ember, torch):
        vals = L.tensor(VAL, requires_grad=True)
        a = L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL), vals, (3, 4))
        sq = a @ a.t().to_sparse_csr()  # CSR @ CSR: CSR, on the pattern the products reach
        sq.to_dense().sum().backward()
        b = csr(L).clone()
        b.mul_(3)
        outs.append((sq, sq.grad_fn.name(), vals.grad, b, csr(L).sum(1, keepdim=True)))
    (se, ne, ge, be, ke), (st, nt, gt, bt, kt) = outs
    assert _repr(se.detach()) == repr(st.detach()) and ne == nt
    assert_same(ge, gt)  # (sums of two or three small integers: exact)
    assert _repr(be) == repr(bt)
    np.testing.assert_array_equal(ke.to_dense().numpy(), kt.to_dense().numpy())
    assert ke.layout is ember.sparse_csr


def test_forward_mode_through_the_compressed_primitives():
    """jvp of values -> CSR -> products / to_dense is the same linear map (exact here)."""
    d = ember.tensor(rand_array((4, 2)))
    tangent = ember.tensor([0.5, -1.0, 2.0, 0.0, 1.5])

    def f(v):
        a = ember.sparse_csr_tensor(ember.tensor(CROW), ember.tensor(COL), v, (3, 4))
        return a.to_dense() * 2 + (a.t().t() @ d).sum()

    _, jvp_out = ember.func.jvp(f, (ember.tensor(VAL),), (tangent,))
    lin = f(tangent) - f(ember.zeros(5))  # f is affine in v
    np.testing.assert_allclose(jvp_out.numpy(), lin.numpy(), rtol=1e-6, atol=1e-6)


def test_block_layouts_refuse_cleanly():
    with pytest.raises(NotImplementedError, match="sparse_bsr, sparse_bsc"):
        ember.ones(2, 2).to_sparse_bsr((1, 1))
    with pytest.raises(NotImplementedError, match="sparse_bsr, sparse_bsc"):
        ember.ones(2, 2).to_sparse(layout=ember.sparse_bsc, blocksize=(1, 1))
    assert repr(ember.sparse_bsr) == "ember.sparse_bsr"
