"""Forward-mode (jvp) and vmap (batch) rules of the linear-algebra, fft and sparse primitives:
every primitive of the area is reached by a public call below, its tangent checked against
finite differences and its batch rule against a loop (tests/rule_checks.py), in float64 on
well-conditioned inputs (distinct eigenvalues and singular values, A = M M^T + n I where a
factorisation needs it)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tests.rule_checks import check_batch, check_jvp, primitive_calls

import ember
from ember._core import BY_LOOP, MISSING, batch_rules, bind, jvp_rule, jvp_rules, primitives
from ember._core.primitive import kernels
from ember.fft import fft_p
from ember.linalg.decompositions import cholesky_p, eigh_p, qr_p, svd_p
from ember.linalg.eig import eig_p
from ember.linalg.least_squares import pinv_p
from ember.linalg.lu import lu_factor_p, lu_permutation_p
from ember.linalg.solvers import det_p, inv_p, slogdet_p, solve_p
from ember.ops.linalg_ops import cross_p, diag_embed_p, trace_p, triangle_p
from ember.ops.sparse_matmul import sparse_mm_p
from ember.ops.sparse_ops import convert_p, gather_p, sparse_coo_p, values_p
from ember.ops.sparse_tensor import SparseTensor, make_sparse

L = ember.linalg
F = ember.fft

DENSE = [inv_p, det_p, slogdet_p, solve_p, pinv_p, cholesky_p, qr_p, svd_p, eigh_p, eig_p,
         lu_factor_p, lu_permutation_p, triangle_p, diag_embed_p, trace_p, cross_p, fft_p]
SPARSE = [sparse_coo_p, values_p, convert_p, gather_p, sparse_mm_p]
AREA = DENSE + SPARSE

_rng = np.random.default_rng(1234)


def t(*shape, dtype=ember.float64):
    return ember.tensor(_rng.standard_normal(shape)).to(dtype)


def well(n, *batch):
    """Diagonally dominant: far from singular."""
    return ember.tensor(_rng.standard_normal(batch + (n, n)) + 3 * n * np.eye(n))


def spd(n, *batch):
    m = _rng.standard_normal(batch + (n, n))
    return ember.tensor(m @ np.swapaxes(m, -1, -2) + n * np.eye(n))


def hpd(n):
    """Hermitian positive-definite, complex."""
    m = _rng.standard_normal((n, n)) + 1j * _rng.standard_normal((n, n))
    return ember.tensor(m @ m.conj().T + n * np.eye(n))


def spread(n, *batch, symmetric=True):
    """Eigenvalues 1..n (distinct), in a random basis; not symmetric unless asked."""
    q = _rng.standard_normal(batch + (n, n))
    if symmetric:
        q = np.linalg.qr(q)[0]
        return ember.tensor(q @ np.diag(np.arange(1.0, n + 1)) @ np.swapaxes(q, -1, -2))
    return ember.tensor(q @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(q))


def rotation_like():
    """A real matrix with a complex pair of eigenvalues (1 +- 2i) and a real one (3)."""
    return ember.tensor([[1.0, -2.0, 0.3], [2.0, 1.0, 0.1], [0.2, 0.4, 3.0]], dtype=ember.float64)


def _lu_pivots():
    A = ember.tensor([[0.1, 2.0, 1.0], [3.0, 0.5, 0.2], [1.0, 1.0, 4.0]])
    return L.lu_factor(A).pivots


# (id, call, args, primitives checked by check_jvp, by check_batch)
CALLS = [
    ("inv", L.inv, lambda: (well(3),), 1, 1),
    ("inv batched", L.inv, lambda: (well(3, 2),), 1, 1),
    ("det", L.det, lambda: (well(3, 2),), 1, 1),
    ("slogdet", L.slogdet, lambda: (well(3),), 1, 1),
    ("slogdet complex", L.slogdet, lambda: (well(3).to(ember.complex128),), 1, 1),
    ("solve", L.solve, lambda: (well(3), t(3, 2)), 1, 1),
    ("solve vector", L.solve, lambda: (well(3, 2), t(2, 3)), 1, 1),
    ("solve broadcast", L.solve, lambda: (well(3), t(4, 3, 2)), 1, 1),
    ("solve_triangular upper", lambda a, b: L.solve_triangular(a, b, upper=True),
     lambda: (well(3), t(3, 2)), 1, 1),
    ("solve_triangular unit lower",
     lambda a, b: L.solve_triangular(a, b, upper=False, unitriangular=True),
     lambda: (well(3, 2), t(3, 2)), 1, 1),
    ("pinv", L.pinv, lambda: (t(4, 3),), 1, 1),
    ("pinv wide", L.pinv, lambda: (t(2, 3, 5),), 1, 1),
    ("pinv hermitian", lambda a: L.pinv(a, hermitian=True), lambda: (spd(3),), 1, 1),
    ("lstsq", lambda a, b: L.lstsq(a, b).solution, lambda: (t(5, 3), t(5, 2)), 1, 1),
    ("lstsq vector", lambda a, b: L.lstsq(a, b).solution, lambda: (t(5, 3), t(5)), 1, 1),
    ("cholesky", L.cholesky, lambda: (spd(3),), 1, 1),
    ("cholesky upper", lambda a: L.cholesky(a, upper=True), lambda: (spd(3, 2),), 1, 1),
    ("qr tall", L.qr, lambda: (t(4, 3),), 1, 1),
    ("qr wide", L.qr, lambda: (t(3, 5),), 1, 1),
    ("qr complete square", lambda a: L.qr(a, "complete"), lambda: (t(3, 3),), 1, 1),
    ("svd tall", lambda a: L.svd(a, full_matrices=False), lambda: (t(4, 3),), 1, 1),
    ("svd wide", lambda a: L.svd(a, full_matrices=False), lambda: (t(3, 5),), 1, 1),
    ("svd full square", L.svd, lambda: (t(2, 3, 3),), 1, 1),
    ("svdvals", L.svdvals, lambda: (t(4, 3),), 1, 1),
    ("eigh", L.eigh, lambda: (spread(4),), 1, 1),
    ("eigh upper", lambda a: L.eigh(a, "U"), lambda: (spread(4),), 1, 1),
    ("eigvalsh", L.eigvalsh, lambda: (spread(3),), 1, 1),
    ("eig real spectrum", L.eig, lambda: (spread(3, symmetric=False),), 1, 1),
    ("eig complex pair", L.eig, lambda: (rotation_like(),), 1, 1),
    ("eig complex input", L.eig, lambda: (t(3, 3, dtype=ember.complex128),), 1, 1),
    ("eigvals", L.eigvals, lambda: (rotation_like(),), 1, 1),
    ("lu_factor square", L.lu_factor, lambda: (t(3, 3),), 1, 1),
    ("lu_factor wide", L.lu_factor, lambda: (t(2, 3, 5),), 1, 1),
    ("lu_factor tall", L.lu_factor, lambda: (t(5, 3),), 1, 1),
    ("lu_permutation", lambda p: bind(lu_permutation_p, p, m=3, dtype=ember.float64),
     lambda: (_lu_pivots(),), 0, 1),
    # complex inputs, where the result is unique (no free phase)
    ("cholesky complex", L.cholesky, lambda: (hpd(3),), 1, 1),
    ("qr complex wide", L.qr, lambda: (t(3, 4, dtype=ember.complex128),), 1, 1),
    ("solve complex", L.solve, lambda: (hpd(3), t(3, 2, dtype=ember.complex128)), 1, 1),
    ("pinv hermitian complex", lambda a: L.pinv(a, hermitian=True), lambda: (hpd(3),), 1, 1),
    ("eigvalsh complex", L.eigvalsh, lambda: (hpd(3),), 1, 1),
    ("svdvals complex", L.svdvals, lambda: (t(4, 3, dtype=ember.complex128),), 1, 1),
    ("lu_factor complex", L.lu_factor, lambda: (t(3, 3, dtype=ember.complex128),), 1, 1),
    ("tril", lambda x: ember.tril(x, 1), lambda: (t(3, 4),), 1, 1),
    ("triu", lambda x: ember.triu(x, -1), lambda: (t(2, 3, 4),), 1, 1),
    ("diag_embed", lambda v: ember.diag_embed(v, 1, 0, 2), lambda: (t(2, 3),), 1, 1),
    ("trace", ember.trace, lambda: (t(3, 4),), 1, 1),
    ("cross", L.cross, lambda: (t(2, 3), t(2, 3)), 1, 1),
    ("cross broadcast", lambda a, b: ember.cross(a, b, dim=0), lambda: (t(3, 4), t(3, 1)), 1, 1),
    ("fft", F.fft, lambda: (t(4, 5, dtype=ember.complex128),), 1, 1),
    ("ifft2 ortho", lambda x: F.ifft2(x, norm="ortho"), lambda: (t(4, 6, dtype=ember.complex128),),
     1, 1),
    ("fftn forward", lambda x: F.fftn(x, dim=(0, 2), norm="forward"),
     lambda: (t(3, 2, 4, dtype=ember.complex128),), 1, 1),
    ("rfft", F.rfft, lambda: (t(3, 7),), 1, 1),
    ("rfft2", F.rfft2, lambda: (t(4, 6),), 1, 1),
    ("irfft", F.irfft, lambda: (t(3, 5, dtype=ember.complex128),), 1, 1),
    ("irfftn odd", lambda x: F.irfftn(x, s=(4, 7)), lambda: (t(4, 4, dtype=ember.complex128),),
     1, 1),
]


@pytest.mark.parametrize("name, call, make, n_jvp, n_batch", CALLS, ids=[c[0] for c in CALLS])
def test_jvp_rules_match_finite_differences(name, call, make, n_jvp, n_batch):
    assert check_jvp(call, *make(), rtol=1e-5, atol=1e-7) == n_jvp


@pytest.mark.parametrize("name, call, make, n_jvp, n_batch", CALLS, ids=[c[0] for c in CALLS])
def test_batch_rules_match_a_loop(name, call, make, n_jvp, n_batch):
    assert check_batch(call, *make()) == n_batch


def test_every_dense_primitive_and_param_is_reached_by_the_calls():
    seen = set()
    for _, call, make, _, _ in CALLS:
        for prim, _, params in primitive_calls(call, *make()):
            seen.add(prim)
            if prim is fft_p:
                seen.add(("fft", params["kind"]))
            if prim is solve_p:
                seen.add(("solve", params.get("upper") is not None))
            if prim is pinv_p:
                seen.add(("pinv", "vec" in params))
    assert set(DENSE) <= seen
    assert {("fft", k) for k in ("c2c", "r2c", "c2r")} <= seen
    assert {("solve", False), ("solve", True), ("pinv", False), ("pinv", True)} <= seen


MODULES = {"ember.linalg.solvers", "ember.linalg.least_squares", "ember.linalg.decompositions",
           "ember.linalg.eig", "ember.linalg.lu", "ember.ops.linalg_ops", "ember.fft",
           "ember.ops.sparse_ops", "ember.ops.sparse_matmul"}


def test_the_area_has_its_primitives_and_every_rule_entry():
    # every primitive whose kernel lives in this area's modules is listed here (so a new
    # one cannot go without rules unnoticed), and there are 22 of them
    defined = {p for p in primitives if getattr(kernels["cpu"].get(p), "__module__", None)
               in MODULES}
    assert defined == set(AREA)
    assert len(AREA) == 22
    for p in AREA:
        assert jvp_rules.get(p, MISSING) is not MISSING, f"{p.name} has no jvp entry"
        assert batch_rules.get(p, MISSING) is not MISSING, f"{p.name} has no batch entry"
    assert jvp_rules[lu_permutation_p] is None  # integer pivots in, a constant out
    for p in SPARSE:  # a COO tensor has no batch axis
        assert batch_rules[p] is BY_LOOP
    for p in DENSE:
        assert batch_rules[p] is not BY_LOOP


def test_qr_without_q_has_no_forward_derivative_as_in_pytorch():
    A = t(4, 3)
    (prim, args, params), = primitive_calls(lambda a: L.qr(a, "r"), A)
    with pytest.raises(RuntimeError, match="depends on Q"):
        jvp_rule(prim, params)(args, (t(4, 3),), bind(prim, *args, **params), **params)


# --- node names of the merged primitives -----------------------------------------------------

def _node(lib, fn, *arrays):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    return type((out[0] if isinstance(out, tuple) else out).grad_fn).__name__


NAMED = [
    ("fft", lambda lib, x: lib.fft.fft(x), [np.ones((4,), np.complex128)]),
    ("rfft", lambda lib, x: lib.fft.rfft(x), [np.ones(4)]),
    ("irfft", lambda lib, x: lib.fft.irfft(x), [np.ones(3, np.complex128)]),
    ("solve", lambda lib, a, b: lib.linalg.solve(a, b), [np.eye(2) * 2, np.ones((2, 1))]),
    ("solve_triangular", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
     [np.eye(2) * 2, np.ones((2, 1))]),
    ("pinv", lambda lib, a: lib.linalg.pinv(a), [np.eye(2) * 2]),
    ("lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
     [np.eye(2) * 2, np.ones((2, 1))]),
    ("tril", lambda lib, x: lib.tril(x), [np.ones((2, 2))]),
    ("triu", lambda lib, x: lib.triu(x), [np.ones((2, 2))]),
    ("to_dense", lambda lib, v: lib.sparse_coo_tensor([[0, 1]], v, (3,)).to_dense(),
     [np.ones(2)]),
    ("coalesce", lambda lib, v: lib.sparse_coo_tensor([[1, 0]], v, (3,)).coalesce(),
     [np.ones(2)]),
    ("to_sparse", lambda lib, x: x.to_sparse(), [np.ones((2, 2))]),
]


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")
@pytest.mark.parametrize("name, fn, arrays", NAMED, ids=[n[0] for n in NAMED])
def test_merged_primitives_keep_pytorchs_node_names(name, fn, arrays):
    assert _node(ember, fn, *arrays) == _node(torch, fn, *arrays)


# --- sparse: tangents of sparse operands ------------------------------------------------------

def _sparse_like(s: SparseTensor, values: np.ndarray) -> SparseTensor:
    return make_sparse(s._sp_indices, ember.tensor(values), s._shape, s._sp_coalesced)


def _dense(x) -> np.ndarray:
    if x.__class__ is SparseTensor:
        x = bind(convert_p, x, layout="strided")
    return x.numpy()


def _check_sparse_jvp(fn, *args, eps=1e-6) -> set:
    """check_jvp for calls with sparse operands (a sparse tangent shares its primal's pattern;
    results compared densified). Primitives outside this area (the indices' detach) are
    left to their own tests. Returns the primitives checked."""
    rng = np.random.default_rng(7)
    checked = set()
    for prim, pargs, params in primitive_calls(fn, *args):
        if prim not in SPARSE:
            continue
        tangents, plus, minus = [], [], []
        for a in pargs:
            if isinstance(a, ember.Tensor) and a.dtype.is_floating_point:
                if a.__class__ is SparseTensor:
                    v = a._sp_values.numpy()
                    d = rng.standard_normal(v.shape)
                    tangents.append(_sparse_like(a, d))
                    plus.append(_sparse_like(a, v + eps * d))
                    minus.append(_sparse_like(a, v - eps * d))
                else:
                    d = ember.tensor(rng.standard_normal(a.shape))
                    tangents.append(d)
                    plus.append(a + eps * d)
                    minus.append(a - eps * d)
            else:
                tangents.append(None)
                plus.append(a)
                minus.append(a)
        with ember.no_grad():
            out = bind(prim, *pargs, **params)
            got = jvp_rule(prim, params)(tuple(pargs), tuple(tangents), out, **params)
            fd = (_dense(bind(prim, *plus, **params)) - _dense(bind(prim, *minus, **params))) \
                / (2 * eps)
        np.testing.assert_allclose(_dense(got), fd, rtol=1e-6, atol=1e-8, err_msg=prim.name)
        checked.add(prim)
    return checked


IDX = [[0, 1, 1, 2], [2, 0, 2, 1]]


def test_sparse_jvp_rules_match_finite_differences():
    idx = ember.tensor(IDX)
    v, d, x = t(4), t(3, 2), t(2, 3)  # x: no zero entry, so a stable pattern
    done = set()
    done |= _check_sparse_jvp(lambda v: ember.sparse_coo_tensor(idx, v, (3, 3)).to_dense(), v)
    done |= _check_sparse_jvp(
        lambda v, d: ember.sparse.mm(ember.sparse_coo_tensor(idx, v, (3, 3)), d), v, d)
    done |= _check_sparse_jvp(lambda v, d: ember.sparse_coo_tensor(idx, v, (3, 3)) @ d, v, d)
    done |= _check_sparse_jvp(lambda x: x.to_sparse().values(), x)
    dup = ember.tensor([[1, 0, 1]])
    done |= _check_sparse_jvp(lambda v: ember.sparse_coo_tensor(dup, v, (2,)).coalesce(), t(3))
    done |= _check_sparse_jvp(lambda x: bind(gather_p, x, idx), t(3, 3))
    s = lambda v: ember.sparse_coo_tensor(idx, v, (3, 3))  # noqa: E731
    done |= _check_sparse_jvp(lambda v, x: x @ s(v).t(), v, x)  # (t: convert, transposed)
    done |= _check_sparse_jvp(lambda v, w: ember.sparse.mm(s(v), s(w)).to_dense(), v, t(4))
    done |= _check_sparse_jvp(lambda v, w: (s(v) @ s(w)).to_dense(), v, t(4))
    done |= _check_sparse_jvp(lambda v, d, c: ember.addmm(c, s(v), d, beta=0.5, alpha=2),
                              v, d, t(3, 2))
    done |= _check_sparse_jvp(lambda v, d, c: ember.sparse.addmm(c, s(v), d), v, d, t(2))
    done |= _check_sparse_jvp(lambda v, y: ember.mv(s(v), y), v, t(3))
    done |= _check_sparse_jvp(lambda v, d: ember.hspmm(s(v), d).to_dense(), v, d)
    assert done == set(SPARSE)


def test_a_sparse_gradient_on_its_own_pattern_keeps_its_values():
    # the pattern test lives in gather_coo's kernel: duplicates stay apart, not summed
    idx = ember.tensor([[0, 0, 2]])
    g = make_sparse(idx, ember.tensor([1.0, 2.0, 3.0]), (3,), False)
    np.testing.assert_array_equal(bind(gather_p, g, idx).numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(bind(gather_p, g, ember.tensor([[2, 0]])).numpy(), [3.0, 3.0])
