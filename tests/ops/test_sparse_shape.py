"""Shape ops on sparse COO tensors (sparse_shape.py) and sparse sums over dense dims, a
repeated dim and keepdim (sparse_functions.py) against torch: coordinates in their order,
values, shape, sparse_dim, coalesced flag, node names and errors (type and message).
Everything is a copy or a single sum of a few exact floats, so comparisons are exact."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import same_message

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning",
                                        "ignore:The use of `x.T`:UserWarning")

IDX = [[0, 1, 1, 0, 2], [2, 0, 0, 2, 1]]


def _make(L, kind):
    i = L.tensor(IDX)
    if kind == "hybrid":  # 2 sparse dims, 1 dense dim, with duplicates
        s = L.sparse_coo_tensor(i, L.arange(10.0).view(5, 2), (3, 3, 2))
    else:
        s = L.sparse_coo_tensor(i, L.tensor([1.0, 2, 3, 4, 5]), (3, 3))
    return s.coalesce() if kind == "coalesced" else s


def _parts(t):
    if not t.is_sparse:
        return ("dense", tuple(t.shape), t.tolist())
    return (tuple(t.shape), t.sparse_dim(), t.is_coalesced(), t._indices().tolist(),
            t._values().tolist())


def _same(fn, kind="plain"):
    e, t = fn(_make(ember, kind)), fn(_make(torch, kind))
    assert _parts(e) == _parts(t)
    if e.is_sparse:
        assert e.to_dense().tolist() == t.to_dense().tolist()


KINDS = ["plain", "coalesced", "hybrid"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("d0,d1", [(0, 1), (1, 0), (0, 0), (-2, 0), (1, 1), (-1, 0)])
def test_transpose_and_aliases(kind, d0, d1):
    if kind == "hybrid" and d0 == -1:
        return  # a dense dim: refused, test_refusals_runtime
    _same(lambda s: s.transpose(d0, d1), kind)
    _same(lambda s: s.swapaxes(d0, d1), kind)
    _same(lambda s: s.swapdims(d0, d1), kind)


@pytest.mark.parametrize("kind", KINDS)
def test_mT_T_permute(kind):
    _same(lambda s: s.mT, "plain" if kind == "hybrid" else kind)
    if kind != "hybrid":
        _same(lambda s: s.T, kind)
        _same(lambda s: s.permute(1, 0), kind)
        _same(lambda s: s.permute(0, 1), kind)


def test_permute_3d_and_hybrid_dense_dims():
    mk = lambda L: L.sparse_coo_tensor(L.tensor([[1, 0], [0, 1], [2, 3]]), L.tensor([1.0, 2]),
                                       (3, 2, 4))
    for dims in [(2, 0, 1), (0, 1, 2), (1, 2, 0)]:
        assert _parts(mk(ember).permute(*dims)) == _parts(mk(torch).permute(*dims))
    assert _parts(mk(ember).T) == _parts(mk(torch).T)
    assert _parts(mk(ember).mT) == _parts(mk(torch).mT)
    h4 = lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.arange(20.0).view(5, 2, 2),
                                       (3, 3, 2, 2)).coalesce()
    for dims in [(1, 0, 3, 2), (0, 1, 3, 2), (0, 1, 2, 3)]:
        assert _parts(h4(ember).permute(*dims)) == _parts(h4(torch).permute(*dims))


@pytest.mark.parametrize("call", [
    lambda L: _make(L, "hybrid").transpose(1, 2),
    lambda L: _make(L, "hybrid").transpose(-1, 0),
    lambda L: _make(L, "hybrid").mT,
    lambda L: _make(L, "hybrid").permute(2, 0, 1),
    lambda L: _make(L, "hybrid").permute(1, 0),
    lambda L: _make(L, "plain").permute(0, 0),
    lambda L: _make(L, "plain").narrow_copy(-1, 1, 1),
    lambda L: _make(L, "plain").narrow_copy(0, 2, 5),
    lambda L: L.sparse.sum(_make(L, "plain"), dim=(0, -2)),
    lambda L: _make(L, "hybrid").sum((1, 1)),
])
def test_refusals_runtime(call):
    same_message(call, RuntimeError)


@pytest.mark.parametrize("call", [
    lambda L: _make(L, "plain").transpose(0, 5),
    lambda L: _make(L, "plain").unsqueeze(5),
    lambda L: _make(L, "plain").index_select(0, L.tensor([3])),
    lambda L: _make(L, "plain").index_select(0, L.tensor([-4])),
    lambda L: _make(L, "plain").index_select(0, L.tensor([1.0])),
    lambda L: _make(L, "plain").index_select(0, L.tensor([1], dtype=L.int32)),
    lambda L: _make(L, "plain").index_select(0, L.tensor([[1]])),
    lambda L: _make(L, "plain").index_select(0, L.tensor(1)),
    lambda L: _make(L, "plain").index_select(2, L.tensor([1])),
    lambda L: _make(L, "coalesced").select(1, 3),
])
def test_refusals_index(call):
    same_message(call, IndexError)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unsqueeze(kind, dim):
    _same(lambda s: s.unsqueeze(dim), kind)


def test_unsqueeze_one_entry_and_0d():
    one = lambda L: L.sparse_coo_tensor(L.tensor([[1], [2]]), L.tensor([7.0]), (3, 3))
    assert _parts(one(ember).unsqueeze(0)) == _parts(one(torch).unsqueeze(0))
    assert _parts(one(ember).transpose(0, 1)) == _parts(one(torch).transpose(0, 1))
    z = lambda L: L.tensor(3.0).to_sparse().unsqueeze(0)
    assert _parts(z(ember)) == _parts(z(torch))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dim,index", [(0, [2, 0, 0]), (1, [0, 2]), (-1, [1]), (0, []),
                                       (0, [-1]), (1, [1]), (0, [1, 1, 1, 1, 1, 1])])
def test_index_select_small(kind, dim, index):
    _same(lambda s: s.index_select(dim, ember.tensor(index, dtype=ember.int64)
                                   if isinstance(s, ember.Tensor)
                                   else torch.tensor(index, dtype=torch.int64)), kind)


def test_index_select_function_form_and_dense_dim():
    for kind in KINDS:
        e = ember.index_select(_make(ember, kind), 0, ember.tensor([1]))
        t = torch.index_select(_make(torch, kind), 0, torch.tensor([1]))
        assert _parts(e) == _parts(t)
        e = ember.narrow_copy(_make(ember, kind), 1, 1, 2)
        t = torch.narrow_copy(_make(torch, kind), 1, 1, 2)
        assert _parts(e) == _parts(t)
    e = _make(ember, "hybrid").coalesce().index_select(2, ember.tensor([1, 1, 0]))
    t = _make(torch, "hybrid").coalesce().index_select(2, torch.tensor([1, 1, 0]))
    assert _parts(e) == _parts(t)


@pytest.mark.parametrize("nnz,size,n,coalesce", [
    (200, 50, 100, False),     # brute force, index-major (nnz >= n)
    (100, 500, 200, False),    # brute force, entry-major
    (300, 1000, 80, False),    # binary search, nnz <= size, entry-major
    (300, 1000, 80, True),     # ... coalesced dim 0: index-major by the log test
    (300, 1000, 600, False),   # binary search, index-major
    (3000, 100, 40, False),    # count tables, nnz > size
    (3000, 100, 40, True),
    (400, 60, 900, False),
    (300, 1000, 600, True),    # coalesced dim 0 searched in order
    (40000, 50000, 1, False),  # more entries than one thread's grain
])
def test_index_select_order_matches_torch_paths(nnz, size, n, coalesce):
    rng = np.random.default_rng(nnz + size + n)
    idx = np.stack([rng.integers(0, size, nnz), rng.integers(0, 7, nnz)])
    sel = rng.integers(-size, size, n)
    vals = np.arange(float(nnz))

    def run(L):
        s = L.sparse_coo_tensor(L.tensor(idx), L.tensor(vals), (size, 7))
        if coalesce:
            s = s.coalesce()
        return s.index_select(0, L.tensor(sel)), s.index_select(1, L.tensor(sel % 7))

    for e, t in zip(run(ember), run(torch)):
        assert _parts(e) == _parts(t)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dim,start,length", [(0, 1, 2), (1, 0, 1), (0, 0, 0), (0, 0, 3)])
def test_narrow_copy(kind, dim, start, length):
    _same(lambda s: s.narrow_copy(dim, start, length), kind)


def test_narrow_copy_dense_dim():
    _same(lambda s: s.narrow_copy(2, 1, 1), "hybrid")
    _same(lambda s: s.coalesce().narrow_copy(2, 1, 1), "hybrid")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dim,index", [(0, 1), (1, 0), (1, -1), (0, 0)])
def test_select(kind, dim, index):
    _same(lambda s: s.select(dim, index), kind)


def test_select_flag_on_coalesced_input():
    def run(L, dense):
        i = L.tensor([[0, 0, 1, 1, 1], [0, 2, 0, 1, 2]])
        s = L.sparse_coo_tensor(i, L.ones((5,) + dense), (2, 3) + dense).coalesce()
        return [_parts(t) for t in (s[1], s.select(0, 1), s.select(1, 2), s.select(1, 1))]

    for dense in ((), (2,)):
        assert run(ember, dense) == run(torch, dense)


def test_select_dense_dim_and_1d():
    _same(lambda s: s.coalesce().select(2, 1), "hybrid")
    _same(lambda s: s.select(-1, 0), "hybrid")
    v = lambda L: L.sparse_coo_tensor(L.tensor([[0, 2, 2]]), L.tensor([1.0, 2, 3]), (4,))
    assert v(ember).select(0, 2).tolist() == v(torch).select(0, 2).tolist() == 5.0


@pytest.mark.parametrize("dims", [2, (0, 2), (1, 2), (0, 1), (0, 1, 2), ()])
def test_sparse_sum_over_dense_dims(dims):
    e = ember.sparse.sum(_make(ember, "hybrid"), dims)
    t = torch.sparse.sum(_make(torch, "hybrid"), dims)
    assert _parts(e) == _parts(t)


@pytest.mark.parametrize("kind,dims", [("plain", 0), ("plain", (0, 1)), ("hybrid", 0),
                                       ("hybrid", (0, 1)), ("hybrid", 2), ("plain", 1)])
def test_sum_keepdim(kind, dims):
    _same(lambda s: s.sum(dims, keepdim=True), kind)


def test_transpose_in_place():
    e, t = _make(ember, "hybrid"), _make(torch, "hybrid")
    assert e.transpose_(0, 1) is e
    t.transpose_(0, 1)
    assert _parts(e) == _parts(t)


@pytest.mark.parametrize("op,name", [
    (lambda s: s.transpose(0, 1), "TransposeBackward0"),
    (lambda s: s.mT, "TransposeBackward0"),
    (lambda s: s.T, "PermuteBackward0"),
    (lambda s: s.permute(1, 0), "PermuteBackward0"),
    (lambda s: s.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda s: s.index_select(0, s.new_tensor([1, 1, 2]).long()), "IndexSelectBackward0"),
    (lambda s: s.narrow_copy(1, 0, 2), "NarrowCopyBackward0"),
    (lambda s: s.select(1, 0), "SelectBackward0"),
])
def test_node_names_and_gradient(op, name):
    def run(L):
        v = L.tensor([1.0, 2, 3, 4, 5], requires_grad=True)
        return v, op(L.sparse_coo_tensor(L.tensor(IDX), v, (3, 3)))

    (ve, e), (vt, t) = run(ember), run(torch)
    assert e.grad_fn.name() == t.grad_fn.name() == name
    # torch differentiates only the transpose; ember's gradient reaches the values of every
    # op: checked against the dense computation (each kept entry's weight, summed)
    w = ember.arange(float(e.numel())).view(e.shape)
    (e.to_dense() if e.is_sparse else e).mul(w).sum().backward()
    assert ve.grad.tolist() == _dense_ref(op, w)
    if name == "TransposeBackward0":  # the one torch differentiates: the same gradient
        t.to_dense().mul(torch.arange(float(t.numel())).view(t.shape)).sum().backward()
        assert ve.grad.tolist() == vt.grad.tolist()


def _dense_ref(op, w):
    """d/dv of sum(op(s) * w), by evaluating op on one-hot values (the op is linear)."""
    out = []
    for k in range(5):
        onehot = ember.zeros(5)
        onehot[k] = 1.0
        r = op(ember.sparse_coo_tensor(ember.tensor(IDX), onehot, (3, 3)))
        r = r.to_dense() if r.is_sparse else r
        out.append(float((r * w).sum()))
    return out


@pytest.mark.parametrize("call", [
    lambda L, s: L.transpose(s, 0, 1), lambda L, s: L.swapaxes(s, 0, 1),
    lambda L, s: L.swapdims(s, 1, 0), lambda L, s: L.t(s), lambda L, s: L.permute(s, (1, 0)),
    lambda L, s: L.unsqueeze(s, 0), lambda L, s: L.select(s, 1, 0),
])
def test_function_forms_hand_sparse_tensors_to_their_layout(call):
    # torch dispatches the function forms by layout: the same sparse results as the methods
    def run(L):
        s = L.sparse_coo_tensor(L.tensor([[0, 1, 1, 2], [2, 0, 2, 1]]),
                                L.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3))
        r = call(L, s)
        return str(r.layout), tuple(r.shape), r.to_dense().tolist()

    assert run(ember) == tuple(x.replace("torch", "ember") if isinstance(x, str) else x
                               for x in run(torch))
