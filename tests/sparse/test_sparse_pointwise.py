"""Sparse COO methods on the values alone (ops/sparse_pointwise.py) against torch: the
zero-preserving functions on the coalesced values, their in-place forms (coalesced input
only), pow, norm, neg and zero_, with PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import same_message

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

# coordinate 2 appears twice: f(a) + f(b) is not f(a + b), so the order matters
IDX = [[2, 0, 2, 1]]
VAL = [[-1.0, 4.0], [2.0, -3.0], [3.0, 0.5], [0.0, -2.0]]


def _sparse(L, coalesce: bool = False, dtype=None):
    s = L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL, dtype=dtype or L.float32), (4, 2))
    return s.coalesce() if coalesce else s


def _entries(s):
    return s._indices().numpy(), s._values().numpy(), s.is_coalesced(), s.dtype


def _check(fn, coalesce=False, dtype=None, rtol=0.0):
    (ie, ve, ce, de), (it, vt, ct, dt) = [_entries(fn(_sparse(L, coalesce, dtype)))
                                          for L in (ember, torch)]
    np.testing.assert_array_equal(ie, it)
    # rtol: one transcendental each, NumPy's and torch's vector kernels may differ by an ulp
    np.testing.assert_allclose(ve, vt, rtol=rtol, atol=0, equal_nan=True)
    assert ce == ct and str(de).split(".")[-1] == str(dt).split(".")[-1]


EXACT = ["abs", "neg", "negative", "absolute", "sign", "sgn", "square", "floor", "ceil",
         "trunc", "round", "frac", "relu", "nan_to_num", "signbit", "isnan", "isinf",
         "isposinf", "isneginf"]
TRANSCENDENTAL = ["sqrt", "sin", "tan", "tanh", "asin", "atan", "sinh", "asinh", "atanh",
                  "erf", "erfinv", "expm1", "log1p", "rad2deg", "deg2rad"]


@pytest.mark.parametrize("name", EXACT + TRANSCENDENTAL)
def test_pointwise_acts_on_the_coalesced_values(name):
    _check(lambda s: getattr(s, name)(), rtol=0 if name in EXACT else 1e-6)


@pytest.mark.parametrize("name", ["abs", "sqrt", "sign", "tanh", "floor", "neg"])
def test_in_place_forms_need_a_coalesced_input(name):
    _check(lambda s: getattr(s, name + "_")(), coalesce=True, rtol=1e-6)
    if name == "neg":  # linear: any pattern, duplicates kept
        _check(lambda s: s.neg_())
    else:
        same_message(lambda L: getattr(_sparse(L), name + "_")())


def test_in_place_returns_self_and_bumps_the_version():
    s = _sparse(ember, coalesce=True)
    v = s._version
    assert s.abs_() is s and s._version > v
    assert s.zero_() is s and s._version > v + 1


@pytest.mark.parametrize("p", [2, 0.5, 3, -1, 2.0])
def test_pow_and_its_operator(p):
    _check(lambda s: s.pow(p), rtol=1e-6)
    _check(lambda s: s ** p, rtol=1e-6)


def test_pow_refusals():
    same_message(lambda L: _sparse(L).pow(0))
    for L in (ember, torch):  # (torch's message lists its dispatch keys)
        with pytest.raises(NotImplementedError, match="pow_.Scalar"):
            _sparse(L).pow_(2)


@pytest.mark.parametrize("p", [None, "fro", 1, 2, 3, 0, float("inf"), float("-inf"), -1])
def test_norm_reduces_over_the_coalesced_values(p):
    res = [(_sparse(L).norm() if p is None else _sparse(L).norm(p)) for L in (ember, torch)]
    assert res[0].layout is ember.strided and res[0].shape == ()
    # a float32 reduction: the additions' order may differ from torch's
    np.testing.assert_allclose(res[0].item(), res[1].item(), rtol=1e-6)


def test_norm_over_all_dims_only():
    np.testing.assert_allclose(_sparse(ember).norm(dim=(0, 1)).item(),
                               _sparse(torch).norm(dim=(0, 1)).item(), rtol=1e-6)
    same_message(lambda L: _sparse(L).norm(dim=0))
    same_message(lambda L: _sparse(L, dtype=L.int64).norm())


def test_zero_leaves_no_entries():
    res = []
    for L in (ember, torch):
        s = _sparse(L)
        s.zero_()
        res.append((tuple(s._indices().shape), tuple(s._values().shape), s.is_coalesced(),
                    s.to_dense().abs().sum().item()))
    assert res[0] == res[1] == ((1, 0), (0, 2), True, 0.0)


def test_zero_grad_without_set_to_none_zeroes_a_sparse_grad():
    res = []
    for L in (ember, torch):
        emb = L.nn.Embedding(5, 2, sparse=True)
        emb(L.tensor([1, 3])).sum().backward()
        L.optim.SGD(emb.parameters(), lr=0.1).zero_grad(set_to_none=False)
        g = emb.weight.grad
        res.append((g.layout is L.sparse_coo, g._nnz(), g.is_coalesced()))
    assert res[0] == res[1] == (True, 0, True)


def test_gradient_reaches_the_input_and_the_node_is_named_for_the_op():
    names, grads = [], []
    for L in (ember, torch):
        w = _sparse(L, coalesce=True).detach().requires_grad_()
        r = w.abs()
        names.append(type(r.grad_fn).__name__)
        L.sparse.sum(r * 2).backward()
        grads.append(w.grad.to_dense().numpy())
    assert names[0] == names[1] == "AbsBackward0"
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("name", ["abs", "sqrt", "neg", "negative", "square", "sin", "tanh",
                                  "relu", "pow", "expm1", "trunc"])
def test_function_forms_take_a_sparse_tensor(name):
    def call(s):
        L = ember if isinstance(s, ember.Tensor) else torch
        return getattr(L, name)(s, 2) if name == "pow" else getattr(L, name)(s)

    _check(call, rtol=1e-6)


def test_torch_norm_of_a_sparse_tensor_is_its_own_norm():
    import torch

    got = []
    for m in (ember, torch):
        s = m.sparse_coo_tensor(m.tensor([[0, 1, 1], [2, 0, 2]]), m.tensor([3., -4., 5.]), (2, 3))
        row = [float(m.norm(s)), float(m.norm(s, 1)), float(m.norm(s, p=3))]
        try:
            m.norm(s, dim=0)
        except RuntimeError as e:
            row.append(str(e))
        got.append(row)
    assert got[0][:3] == pytest.approx(got[1][:3], rel=1e-6) and got[0][3:] == got[1][3:]


def _complex_sparse(L, coalesce: bool = False):
    vals = L.tensor(VAL, dtype=L.float64)
    s = L.sparse_coo_tensor(L.tensor(IDX), L.complex(vals, vals.flip(1) - 0.5), (4, 2))
    return s.coalesce() if coalesce else s


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("form", ["method", "function", "conj_physical", "conj_physical method"])
def test_conj_conjugates_values_keeping_indices_and_coalesced_flag(form, coalesce):
    # PyTorch's sparse conj is physical (no conjugate bit) and does not coalesce
    call = {"method": lambda L, s: s.conj(), "function": lambda L, s: L.conj(s),
            "conj_physical": lambda L, s: L.conj_physical(s),
            "conj_physical method": lambda L, s: s.conj_physical()}[form]
    (ie, ve, ce, de), (it, vt, ct, dt) = [
        _entries(call(L, _complex_sparse(L, coalesce))) for L in (ember, torch)]
    np.testing.assert_array_equal(ie, it)
    np.testing.assert_array_equal(ve, vt)  # (an exact sign flip)
    assert ce == ct == coalesce and str(de).split(".")[-1] == str(dt).split(".")[-1]
    assert not call(ember, _complex_sparse(ember, coalesce)).is_conj()


def test_conj_of_a_real_sparse_tensor_is_itself_and_in_place_is_refused():
    s = _sparse(ember)
    assert s.conj() is s and ember.conj(s) is s and ember.conj_physical(s) is s
    assert same_message(lambda L: _complex_sparse(L).conj_physical_()) == \
        "unsupported tensor layout: Sparse"


def test_conj_of_a_sparse_hamiltonian_gives_the_adjoint_action():
    h = np.array([[1.0, 2 - 1j, 0], [2 + 1j, 0, 0.5j], [0, -0.5j, -1.0]])
    v = np.array([0.3 + 0.1j, -1.0, 0.5j])
    for L in (ember, torch):
        hs = L.tensor(h).to_sparse()
        out = (hs.conj().t() @ L.tensor(v)).numpy()
        np.testing.assert_allclose(out, h.conj().T @ v, rtol=1e-15, atol=1e-15)
