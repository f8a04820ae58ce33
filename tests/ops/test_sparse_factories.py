"""`sparse.spdiags` against torch: the entries, their order, the layouts, and the errors
(types and messages). Values are copies, so every comparison is exact."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import same_message

pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning",
                                        "ignore:Sparse invariant checks:UserWarning")

D34 = np.arange(1.0, 13.0).reshape(3, 4)


def _spd(L, diags, offsets, shape, layout=None, off_dtype="int64"):
    d = L.tensor(diags)
    o = L.tensor(offsets, dtype=getattr(L, off_dtype))
    lay = None if layout is None else getattr(L, layout)
    return L.sparse.spdiags(d, o, shape, layout=lay)


def _coo_parts(t):
    return t._indices().tolist(), t._values().tolist(), tuple(t.shape), t.is_coalesced()


@pytest.mark.parametrize("offsets,shape", [([0, -1, 2], (3, 5)), ([0, -1, 1], (4, 4)),
                                           ([1, -2, 0], (4, 4)), ([0, 3, -3], (4, 4)),
                                           ([0, -1, 2], (3, 4))])
def test_coo_entries_and_order(offsets, shape):
    e, t = _spd(ember, D34, offsets, shape), _spd(torch, D34, offsets, shape)
    assert _coo_parts(e) == _coo_parts(t)
    assert e.to_dense().tolist() == t.to_dense().tolist()
    assert str(e.dtype) == str(t.dtype).replace("torch", "ember")


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_coo"])
def test_layouts(layout):
    e = _spd(ember, D34, [0, -1, 1], (4, 4), layout)
    t = _spd(torch, D34, [0, -1, 1], (4, 4), layout)
    assert e.layout is getattr(ember, layout)
    if layout == "sparse_coo":  # (uncoalesced: only the private accessor reads it)
        assert e._values().tolist() == t._values().tolist()
    else:
        assert e.values().tolist() == t.values().tolist()
    if layout == "sparse_csr":
        assert e.crow_indices().tolist() == t.crow_indices().tolist()
        assert e.col_indices().tolist() == t.col_indices().tolist()
    elif layout == "sparse_csc":
        assert e.ccol_indices().tolist() == t.ccol_indices().tolist()
        assert e.row_indices().tolist() == t.row_indices().tolist()
    assert e.to_dense().tolist() == t.to_dense().tolist()


def test_vector_diagonal_scalar_offset_int_dtype_and_empty():
    for args in [([1.0, 2.0, 3.0], 1, (3, 3)), ([[1, 2]], [0], (3, 4)),
                 (np.ones((1, 0)), [0], (2, 2)), (np.ones((0, 3)), [], (2, 2))]:
        e, t = _spd(ember, *args), _spd(torch, *args)
        assert _coo_parts(e) == _coo_parts(t)
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]


def test_tridiagonal_laplacian_matmul():
    # the 1-d Laplacian, as PDE codes build it; float64 sums of three small integers are exact
    n = 6
    data = [[1.0] * n, [-2.0] * n, [1.0] * n]
    e = _spd(ember, data, [-1, 0, 1], (n, n))
    t = _spd(torch, data, [-1, 0, 1], (n, n))
    ve, vt = ember.arange(float(n), dtype=ember.float64) ** 2, torch.arange(float(n)) ** 2
    assert (e.to(ember.float64) @ ve).tolist() == (t.double() @ vt.double()).tolist()


def test_gradient_reaches_diagonals():
    # torch has no derivative for _spdiags; ember's values are a gather, so d(sum)/d(diag)
    # is 1 exactly where an entry was taken (worked by hand)
    d = ember.tensor(D34, requires_grad=True)
    out = ember.sparse.spdiags(d, ember.tensor([0, -1, 2]), (3, 5))
    out.to_dense().sum().backward()
    assert d.grad.tolist() == [[1, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1]]


@pytest.mark.parametrize("args", [
    (np.ones((2, 2, 2)), [0, 1], (2, 2), None),
    (np.ones((2, 2)), [[0, 1]], (2, 2), None),
    (np.ones((2, 2)), [0, 1], (2, 2, 2), None),
    (np.ones((2, 2)), [0, 1, 2], (2, 2), None),
    (np.ones((2, 2)), [0, 0], (2, 2), None),
    (np.ones((2, 2)), [0, 1], (2, 2), "strided"),
    ([[1, 2, 3]], [5], (3, 3), None),
    ([[1, 2, 3]], [-5], (3, 3), None),
])
def test_errors(args):
    same_message(lambda L: _spd(L, *args))


@pytest.mark.parametrize("off_dtype", ["int32", "float32"])
def test_offset_dtype_error(off_dtype):
    same_message(lambda L: _spd(L, np.ones((2, 2)), [0, 1], (2, 2), off_dtype=off_dtype))


def test_offsets_not_a_tensor():
    same_message(lambda L: L.sparse.spdiags(L.ones(2, 2), [0, 1], (2, 2)), TypeError)
