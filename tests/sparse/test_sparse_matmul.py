"""Products with a sparse COO operand against torch, in every spelling (mm, spmm, @, matmul,
the Tensor methods, sparse.mm, addmm, sparse.addmm, mv, smm, hspmm, sspaddmm), on sparse
tensors built every way: values, layouts, node names, the gradients for the dense operand,
the sparse operand and its values, the errors, and a small GCN trained by SGD."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import E2T, assert_same, check_grads, same_error

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning",
                                        "ignore:Sparse CSR tensor support:UserWarning")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # unsorted, (0, 2) twice
VAL = [3.0, 4.0, 5.0, 1.0, -2.0]
RNG = np.random.default_rng(7)
R = RNG.standard_normal((4, 3))  # dense on the left
D = RNG.standard_normal((3, 2))  # dense on the right
C = RNG.standard_normal((3, 2))  # addmm's input
V = RNG.standard_normal(3)
W = RNG.standard_normal((3, 2))  # the weights of the loss


def _sparse(L, how: str, dtype, requires_grad: bool = False):
    """The 3x3 sparse operand, built `how`."""
    s = L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL, dtype=dtype), (3, 3))
    if how == "coalesced":
        s = s.coalesce()
    elif how == "to_sparse":
        s = s.to_dense().to_sparse()
    elif how == "transposed":
        s = s.t()
    elif how == "is_coalesced":  # built sorted and flagged so
        c = s.coalesce()
        s = L.sparse_coo_tensor(c._indices(), c._values(), (3, 3), is_coalesced=True)
    s = s.detach()
    return s.requires_grad_() if requires_grad else s


BUILDS = ["uncoalesced", "coalesced", "to_sparse", "transposed", "is_coalesced"]

# each spelling: (L, s, dense operands) -> result
SPELLINGS = {
    "mm(S, D)": lambda L, s, r, d, c, v: L.mm(s, d),
    "spmm(S, D)": lambda L, s, r, d, c, v: L.spmm(s, d),
    "S @ D": lambda L, s, r, d, c, v: s @ d,
    "matmul(S, D)": lambda L, s, r, d, c, v: L.matmul(s, d),
    "S.mm(D)": lambda L, s, r, d, c, v: s.mm(d),
    "S.matmul(D)": lambda L, s, r, d, c, v: s.matmul(d),
    "sparse.mm(S, D)": lambda L, s, r, d, c, v: L.sparse.mm(s, d),
    "R @ S": lambda L, s, r, d, c, v: r @ s,
    "mm(R, S)": lambda L, s, r, d, c, v: L.mm(r, s),
    "R.mm(S)": lambda L, s, r, d, c, v: r.mm(s),
    "matmul(R, S)": lambda L, s, r, d, c, v: L.matmul(r, s),
    "spmm(R, S)": lambda L, s, r, d, c, v: L.spmm(r, s),
    "sparse.mm(R, S)": lambda L, s, r, d, c, v: L.sparse.mm(r, s),
    "batch @ S": lambda L, s, r, d, c, v: r.reshape(2, 2, 3) @ s,
    "addmm(C, S, D)": lambda L, s, r, d, c, v: L.addmm(c, s, d),
    "addmm(row, S, D, beta, alpha)": lambda L, s, r, d, c, v: L.addmm(c[0], s, d, beta=0.5,
                                                                     alpha=-2.0),
    "C.addmm(S, D)": lambda L, s, r, d, c, v: c.addmm(s, d, beta=0.0),
    "sparse.addmm": lambda L, s, r, d, c, v: L.sparse.addmm(c, s, d, beta=2.0, alpha=0.5),
    "S @ v": lambda L, s, r, d, c, v: s @ v,
    "mv(S, v)": lambda L, s, r, d, c, v: L.mv(s, v),
    "S.mv(v)": lambda L, s, r, d, c, v: s.mv(v),
    "v @ S": lambda L, s, r, d, c, v: v @ s,
    "S @ S": lambda L, s, r, d, c, v: s @ s,
    "mm(S, S)": lambda L, s, r, d, c, v: L.mm(s, s.t()),
    "sparse.mm(S, S)": lambda L, s, r, d, c, v: L.sparse.mm(s, s),
    "S.mm(S)": lambda L, s, r, d, c, v: s.mm(s.t()),
}


def _dense_args(L, dtype, requires_grad: bool = False):
    return [L.tensor(a, dtype=dtype, requires_grad=requires_grad) for a in (R, D, C, V)]


def _same_result(e, t, stride: bool = True) -> None:
    assert e.layout == ember.sparse_coo if t.layout == torch.sparse_coo else \
        e.layout == ember.strided
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    if t.layout == torch.sparse_coo:
        assert_sparse(e, t)
    else:
        assert_same(e, t, check_stride=stride)


def assert_sparse(e, t, flag: bool = True) -> None:
    """Same sparse tensor: shape, dtype, raw indices and values (and coalesced flag)."""
    assert e.is_sparse and t.is_sparse
    assert tuple(e.shape) == tuple(t.shape) and E2T[e.dtype] == t.dtype
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    if flag:
        assert e.is_coalesced() == t.is_coalesced()
    assert_same(e._indices(), t._indices())
    assert_same(e._values(), t._values())


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("how", list(SPELLINGS))
def test_every_spelling_gives_torchs_result(how, build):
    res = {}
    for L in (ember, torch):
        s = _sparse(L, build, L.float64, requires_grad=True)
        res[L] = SPELLINGS[how](L, s, *_dense_args(L, L.float64))
    _same_result(res[ember], res[torch])


def _weighted(L, y):
    y = y.to_dense() if y.is_sparse else y
    w = L.tensor(np.resize(W.reshape(-1), y.numel()).reshape(tuple(y.shape)))
    return (y * w).sum()


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("how", list(SPELLINGS))
def test_gradients_for_the_sparse_leaf_and_the_dense_operands(how, build):
    res = {}
    for L in (ember, torch):
        s = _sparse(L, build, L.float64, requires_grad=build in ("uncoalesced", "coalesced",
                                                                  "to_sparse"))
        dense = _dense_args(L, L.float64, requires_grad=True)
        y = SPELLINGS[how](L, s, *dense)
        if y.requires_grad:  # (not a product of a constant sparse tensor with itself)
            _weighted(L, y).backward()
        res[L] = (s.grad, [x.grad for x in dense])
    (sg_e, dg_e), (sg_t, dg_t) = res[ember], res[torch]
    for a, b in zip(dg_e, dg_t):
        assert (a is None) == (b is None)
        if b is not None:
            assert_same(a, b)
    assert (sg_e is None) == (sg_t is None)
    if sg_t is None:
        return
    assert sg_e.is_sparse == sg_t.is_sparse  # sparse.mm and sparse @ sparse: sparse
    if not sg_t.is_sparse:
        assert_same(sg_e, sg_t)
    else:
        # NOTE: the flag of a sparse .grad follows torch's engine's reference counts when two
        # paths meet (s used twice); compared where one path reaches it
        assert_sparse(sg_e, sg_t, flag=how not in ("S @ S", "sparse.mm(S, S)"))


@pytest.mark.parametrize("how", list(SPELLINGS))
def test_gradients_for_the_values(how):
    """sparse_coo_tensor(i, v) with v requiring grad: v's gradient is the one at each
    entry's coordinate (a duplicate gets its coordinate's whole gradient)."""
    res = {}
    for L in (ember, torch):
        v = L.tensor(VAL, dtype=L.float64, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(IDX), v, (3, 3))
        _weighted(L, SPELLINGS[how](L, s, *_dense_args(L, L.float64))).backward()
        res[L] = v.grad
    assert_same(res[ember], res[torch])


@pytest.mark.parametrize("how", ["mm(S, D)", "R @ S", "addmm(row, S, D, beta, alpha)",
                                 "sparse.mm(S, D)", "sparse.addmm", "S @ v", "v @ S",
                                 "batch @ S", "mm(S, S)", "sparse.mm(S, S)"])
def test_gradients_by_finite_differences(how):
    """Values and every dense operand against central differences (and through a second
    product, so the gradients' own graphs are differentiated too)."""
    idx = ember.tensor(IDX)

    def f(vals, r, d, c, v):
        s = ember.sparse_coo_tensor(idx, vals, (3, 3))
        y = SPELLINGS[how](ember, s, r, d, c, v)
        unused = 0.0 * (r.sum() + d.sum() + c.sum() + v.sum())  # (every input gets a .grad)
        return (y.to_dense() if y.is_sparse else y) + unused

    check_grads(f, np.array(VAL), R, D, C, V)

    def g(vals, d):  # double backward: d's gradient, differentiated again
        d.requires_grad_()
        s = ember.sparse_coo_tensor(idx, vals, (3, 3))
        (gd,) = ember.autograd.grad((s @ d).pow(2).sum(), d, create_graph=True)
        return gd

    check_grads(g, np.array(VAL), D)


def test_float32_products_round_as_torch_bit_for_bit():
    """dense @ sparse and addmm walk the entries in their stored order with one fused
    multiply-add each, as torch's kernel does (sparse @ dense: test_sparse_ops)."""
    rng = np.random.default_rng(3)
    m, k, n, nnz = 20, 30, 7, 400
    idx = np.stack([rng.integers(0, k, nnz), rng.integers(0, m, nnz)])
    vals = rng.standard_normal(nnz).astype(np.float32)
    left = rng.standard_normal((n, k)).astype(np.float32)
    right = rng.standard_normal((m, n)).astype(np.float32)
    inp = rng.standard_normal((k, n)).astype(np.float32)
    out = {}
    for L in (ember, torch):
        s = L.sparse_coo_tensor(L.tensor(idx), L.tensor(vals), (k, m))
        out[L] = [(L.tensor(left) @ s).numpy(),
                  L.addmm(L.tensor(inp), s, L.tensor(right), beta=0.5, alpha=3.0).numpy(),
                  L.addmm(L.tensor(inp), s, L.tensor(right)).numpy()]
    for a, b in zip(out[ember], out[torch]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "complex128", "int64"])
def test_dtypes(dtype):
    res = {}
    for L in (ember, torch):
        d = getattr(L, dtype)
        s = _sparse(L, "uncoalesced", L.float64).to(d)
        r, dd = L.tensor(R).to(d), L.tensor(D).to(d)
        res[L] = [s @ dd, r @ s, L.sparse.mm(s, dd), L.addmm(dd, s, dd)]
        if dtype in ("float32", "complex128"):
            res[L].append(s @ s)
    # (16-bit floats: torch rounds after every entry, ember once per sum)
    tol = {"float16": 1e-2, "bfloat16": 6e-2}.get(dtype)
    for e, t in zip(res[ember], res[torch]):
        if t.is_sparse:
            assert_sparse(e, t)
        else:
            assert_same(e, t, rtol=tol, atol=tol)


def test_complex_gradients_conjugate():
    res = {}
    rng = np.random.default_rng(5)
    vals = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    d = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    for L in (ember, torch):
        v = L.tensor(vals, requires_grad=True)
        dd = L.tensor(d, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(IDX), v, (3, 3))
        y = (s @ dd).sum() + L.sparse.mm(s, dd).sum() + (dd.mT @ s).sum() + \
            (s @ s).to_dense().sum()
        y.abs().backward()
        res[L] = (v.grad, dd.grad)
    assert_same(res[ember], res[torch])


# --- sparse @ sparse: the gradient's pattern ----------------------------------------------

A_IDX, A_VAL = [[0, 0, 2, 1], [0, 2, 1, 0]], [1.0, 2.0, 3.0, -2.0]  # unsorted
B_IDX, B_VAL = [[0, 2, 1, 0], [1, 0, 1, 1]], [1.0, 1.0, 4.0, 5.0]  # (0, 1) twice
FULL_IDX = [[0, 0, 0, 1, 1, 1, 2, 2, 2], [2, 1, 0, 0, 1, 2, 0, 1, 2]]


@pytest.mark.parametrize("a_full", [False, True])
@pytest.mark.parametrize("coalesce_a", [False, True])
@pytest.mark.parametrize("coalesce_b", [False, True])
@pytest.mark.parametrize("how", ["mm", "sparse.mm"])
def test_sparse_times_sparse_gradients(how, coalesce_a, coalesce_b, a_full):
    """torch.mm's gradient is the full product (grad @ b^T); sparse.mm's is masked by the
    operand, on its own pattern or the product's (whichever has fewer entries, when the
    operand is coalesced)."""
    res = {}
    for L in (ember, torch):
        ai, av = (FULL_IDX, np.arange(1.0, 10.0)) if a_full else (A_IDX, A_VAL)
        a = L.sparse_coo_tensor(L.tensor(ai), L.tensor(av, dtype=L.float64), (3, 3))
        b = L.sparse_coo_tensor(L.tensor(B_IDX), L.tensor(B_VAL, dtype=L.float64), (3, 2))
        a = (a.coalesce() if coalesce_a else a).detach().requires_grad_()
        b = (b.coalesce() if coalesce_b else b).detach().requires_grad_()
        out = L.mm(a, b) if how == "mm" else L.sparse.mm(a, b)
        (out.to_dense() * L.arange(1.0, 7.0, dtype=L.float64).reshape(3, 2)).sum().backward()
        res[L] = (out, a.grad, b.grad)
    (oe, ae, be), (ot, at, bt) = res[ember], res[torch]
    assert_sparse(oe, ot)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
    # NOTE: a sparse .grad's coalesced flag is torch's engine's reference counting (a fresh
    # gradient is rewrapped without the flag, a shared one cloned with it): compared where
    # that is settled, the values and patterns everywhere
    assert_sparse(ae, at, flag=how == "mm")
    assert_sparse(be, bt, flag=how == "mm" or not (a_full and coalesce_b))


def test_sparse_times_sparse_keeps_cancelled_and_empty_products():
    for case in (lambda L: L.sparse_coo_tensor([[0, 0], [0, 1]], [1.0, -1.0], (1, 2)) @
                 L.sparse_coo_tensor([[0, 1], [0, 0]], [1.0, 1.0], (2, 1)),
                 lambda L: _sparse(L, "uncoalesced", L.float32) @ L.sparse_coo_tensor(
                     L.zeros(2, 0, dtype=L.long), L.zeros(0), (3, 4))):
        e, t = case(ember), case(torch)
        assert_sparse(e, t)


# --- the sparse results: smm, hspmm, sspaddmm ----------------------------------------------

@pytest.mark.parametrize("build", ["uncoalesced", "coalesced"])
def test_sparse_result_products(build):
    res = {}
    for L in (ember, torch):
        s = _sparse(L, build, L.float64)
        d = L.tensor(D)
        t = L.sparse_coo_tensor([[2, 0], [1, 0]], [1.0, 2.0], (3, 2), dtype=L.float64)
        res[L] = [L.smm(s, d), s.smm(d), L.hspmm(s, d), L.sspaddmm(t, s, d, beta=2, alpha=3),
                  t.sspaddmm(s, d)]
    for e, t in zip(res[ember], res[torch]):
        assert_sparse(e, t)


def test_sparse_result_products_are_differentiable_here():
    """PyTorch has no derivative for smm, hspmm and sspaddmm (backward raises); ember's
    are composed from the product, so they have one: checked by finite differences."""
    idx = ember.tensor(IDX)
    t_idx = ember.tensor([[2, 0], [1, 0]])
    for fn in (lambda s, d, tv: ember.smm(s, d),
               lambda s, d, tv: ember.hspmm(s, d),
               lambda s, d, tv: ember.sspaddmm(ember.sparse_coo_tensor(t_idx, tv, (3, 2)), s, d,
                                               beta=2, alpha=3)):
        check_grads(lambda v, d, tv, fn=fn: fn(ember.sparse_coo_tensor(idx, v, (3, 3)), d,
                                               tv).to_dense() + 0.0 * tv.sum(),  # (tv: a .grad)
                    np.array(VAL), D, np.array([1.0, 2.0]))


# --- in place, out= ----------------------------------------------------------------------

def test_addmm_in_place_and_out():
    res = {}
    for L in (ember, torch):
        s = _sparse(L, "uncoalesced", L.float64, requires_grad=True)
        d = L.tensor(D, requires_grad=True)
        c = L.tensor(C, requires_grad=True)
        y = c.clone()
        y.addmm_(s, d, beta=0.5)
        name = type(y.grad_fn).__name__
        _weighted(L, y).backward()
        with L.no_grad():
            z = L.tensor(C).addmm_(s, d, alpha=2)
            o1, o2 = L.empty(3, 2, dtype=L.float64), L.empty(3, 2, dtype=L.float64)
            L.addmm(c, s, d, out=o1)
            L.mm(s, d, out=o2)
        res[L] = (name, y, s.grad, d.grad, c.grad, z, z._version, o1, o2)
    e, t = res[ember], res[torch]
    assert e[0] == t[0] == "AddmmBackward0"
    assert e[6] == t[6]
    for a, b in zip(e[1:6] + e[7:], t[1:6] + t[7:]):
        assert_same(a, b)


# --- errors ------------------------------------------------------------------------------

def _s(L, dtype=None, shape=(3, 3)):
    return L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL, dtype=dtype), shape)


ERRORS = {
    "dense @ sparse of another dtype": lambda L: L.ones(2, 3) @ _s(L, L.float64),
    "sparse @ dense of another dtype": lambda L: L.spmm(_s(L), L.ones(3, 2,
                                                                      dtype=L.float64)),
    "sparse @ sparse of another dtype": lambda L: L.mm(_s(L), _s(L, L.float64)),
    "addmm input dtype": lambda L: L.addmm(L.ones(3, 2, dtype=L.float64), _s(L),
                                           L.ones(3, 2)),
    "sparse.mm dense of another dtype": lambda L: L.sparse.mm(L.ones(2, 3, dtype=L.float64),
                                                              _s(L)),
    "inner sizes": lambda L: L.mm(_s(L), L.ones(2, 2)),
    "inner sizes, dense first": lambda L: L.mm(L.ones(2, 2), _s(L)),
    "inner sizes, sparse @ sparse": lambda L: _s(L) @ L.sparse_coo_tensor([[0], [0]], [1.0],
                                                                         (2, 2)),
    "sparse @ batch": lambda L: _s(L) @ L.ones(2, 3, 2),
    "mm with a batch": lambda L: L.mm(_s(L), L.ones(2, 3, 2)),
    "mm with a vector": lambda L: L.mm(_s(L), L.ones(3)),
    "mm of a vector": lambda L: L.mm(L.ones(3), _s(L)),
    "batched sparse": lambda L: L.sparse_coo_tensor([[0], [0], [0]], [1.0], (2, 3, 3)) @
    L.ones(3, 2),
    "hybrid sparse": lambda L: L.mm(L.sparse_coo_tensor([[0, 2]], L.ones(2, 3), (3, 3)),
                                    L.ones(3, 2)),
    "dense @ hybrid": lambda L: L.ones(2, 3) @ L.sparse_coo_tensor([[0, 2]], L.ones(2, 3),
                                                                   (3, 3)),
    "mv sizes": lambda L: L.mv(_s(L), L.ones(2)),
    "vector @ sparse sizes": lambda L: L.ones(2) @ _s(L),
    "sparse vector @ vector": lambda L: L.sparse_coo_tensor([[0]], [1.0], (3,)) @ L.ones(3),
    "bool": lambda L: _s(L).bool() @ L.ones(3, 2, dtype=L.bool),
    "integer sparse @ sparse": lambda L: _s(L).long() @ _s(L).long(),
    "half sparse @ sparse": lambda L: _s(L).half() @ _s(L).half(),
    "addmm of dense @ sparse": lambda L: L.addmm(L.ones(3, 3), L.ones(3, 3), _s(L)),
    "addmm of sparse @ sparse": lambda L: L.addmm(L.ones(3, 3), _s(L), _s(L)),
    "addmm into sparse": lambda L: L.addmm(_s(L), _s(L), L.ones(3, 3)),
    "addmm sparse input": lambda L: L.addmm(_s(L), L.ones(3, 3), L.ones(3, 3)),
    "addmm input shape": lambda L: L.addmm(L.ones(2, 2), _s(L), L.ones(3, 2)),
    "smm of dense": lambda L: L.smm(L.ones(3, 3), L.ones(3, 2)),
    "smm of sparse": lambda L: L.smm(_s(L), _s(L)),
    "hspmm of dense": lambda L: L.hspmm(L.ones(3, 3), L.ones(3, 2)),
    "hspmm of sparse": lambda L: L.hspmm(_s(L), _s(L)),
    "sspaddmm sizes": lambda L: L.sspaddmm(_s(L, shape=(3, 3)), _s(L), L.ones(3, 2)),
}

MESSAGES = [k for k in ERRORS if k not in (
    "batched sparse", "sparse vector @ vector", "smm of sparse", "hspmm of dense")]


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_torchs(case):
    kind = same_error(ERRORS[case])
    if case in MESSAGES and kind is not NotImplementedError:
        msgs = []
        for L in (ember, torch):
            with pytest.raises(kind) as info:
                ERRORS[case](L)
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]


def test_integer_products():
    for case in (lambda L: _s(L).long() @ L.ones(3, 2, dtype=L.long),
                 lambda L: L.addmm(L.ones(3, 2, dtype=L.long), _s(L).long(),
                                   L.ones(3, 2, dtype=L.long)),
                 lambda L: L.ones(2, 3, dtype=L.long) @ _s(L).long()):
        e, t = case(ember), case(torch)
        assert_same(e, t)


# --- a graph convolution network trained with SGD ---------------------------------------

def _graph(L, build: str):
    """A 6-node graph's normalised adjacency D^-1/2 (A + I) D^-1/2, as a sparse tensor."""
    edges = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (1, 4)]
    a = np.eye(6)
    for i, j in edges:
        a[i, j] = a[j, i] = 1.0
    dinv = 1.0 / np.sqrt(a.sum(1))
    norm = (dinv[:, None] * a * dinv[None, :]).astype(np.float32)
    if build == "to_sparse":
        return L.tensor(norm).to_sparse()
    rows, cols = np.nonzero(norm)
    order = np.random.default_rng(0).permutation(len(rows))  # unsorted: uncoalesced
    i = L.tensor(np.stack([rows[order], cols[order]]))
    return L.sparse_coo_tensor(i, L.tensor(norm[rows[order], cols[order]]), (6, 6))


@pytest.mark.parametrize("spelling", ["@", "torch.mm", "torch.sparse.mm", "torch.spmm"])
@pytest.mark.parametrize("build", ["to_sparse", "sparse_coo_tensor"])
def test_gcn_training_gives_torchs_losses(spelling, build):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w1 = (rng.standard_normal((4, 8)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((8, 3)) * 0.5).astype(np.float32)
    labels = np.array([0, 1, 2, 0, 1, 2])
    losses = {}
    for L in (ember, torch):
        adj = _graph(L, build)
        prod = {"@": lambda a, b: a @ b, "torch.mm": L.mm, "torch.sparse.mm": L.sparse.mm,
                "torch.spmm": L.spmm}[spelling]
        params = [L.tensor(w1, requires_grad=True), L.tensor(w2, requires_grad=True)]
        opt = L.optim.SGD(params, lr=0.5)
        feats, y = L.tensor(x), L.tensor(labels)
        out = []
        for _ in range(5):
            opt.zero_grad()
            h = L.relu(prod(adj, feats @ params[0]))
            logits = prod(adj, h @ params[1])
            loss = L.nn.functional.cross_entropy(logits, y)
            loss.backward()
            opt.step()
            out.append(loss.item())
        losses[L] = (out, params[0].detach(), params[1].detach())
    # float32 through BLAS products and a log-softmax: a tolerance, not bit equality
    np.testing.assert_allclose(losses[ember][0], losses[torch][0], rtol=1e-5)
    assert losses[ember][0][-1] < losses[ember][0][0]
    for a, b in zip(losses[ember][1:], losses[torch][1:]):
        assert_same(a, b, rtol=1e-4, atol=1e-5)
