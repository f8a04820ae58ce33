"""mx.linalg against MLX 0.32.4.

Composed results (norms, cross, small determinants) and validation errors compare as reprs
(dtype and six significant digits) or as exception type and message. Factorisations run
LAPACK on both sides, but through different drivers (NumPy's vs MLX's own batching), so
their values compare with `assert_allclose` at rtol 1e-4 (float32 round-off of an O(1)
condition-number problem), with dtypes and shapes exact. The matrices are well conditioned
with distinct eigen/singular values, so the factors are unique up to sign; QR, SVD and
`eig` come out with MLX's signs, `eigh`'s eigenvectors (a different driver) are compared
after giving each column a positive largest entry.
"""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("a = mx.array([[4.0, 1.0, 0.5], [2.0, 3.0, 1.0], [0.5, 1.0, 5.0]]);"
         "s = a @ a.T;"
         "w = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]);"
         "b = mx.arange(24.0).reshape(2, 3, 4) - 10;"
         "v = mx.array([3.0, -4.0, 0.0, 1.0])")


def _run(expr: str, module):
    return outcome(expr, module, SETUP, show=None)


def _same(expr: str) -> None:
    (k1, v1), (k2, v2) = _run(expr, mx), _run(expr, mlx)
    assert (k1, repr(v1)) == (k2, repr(v2)), expr


COMPOSED = [
    "mx.linalg.norm(v)",
    "mx.linalg.norm(b)",
    "mx.linalg.norm(b, keepdims=True)",
    "mx.linalg.norm(v, 1)",
    "mx.linalg.norm(v, 0)",
    "mx.linalg.norm(v, 3)",
    "mx.linalg.norm(v, 0.5)",
    "mx.linalg.norm(v, float('inf'))",
    "mx.linalg.norm(v, -float('inf'))",
    "mx.linalg.norm(b, axis=1)",
    "mx.linalg.norm(b, axis=[0, 2])",
    "mx.linalg.norm(b, 1, axis=(1, 2))",
    "mx.linalg.norm(b, -1, axis=(2, 1))",
    "mx.linalg.norm(b, float('inf'), axis=(1, 2), keepdims=True)",
    "mx.linalg.norm(b, -float('inf'), axis=(2, 0))",
    "mx.linalg.norm(b, 'fro', axis=(0, 2))",
    "mx.linalg.norm(a, 'f')",
    "mx.linalg.norm(mx.array([1, 2, 3]))",
    "mx.linalg.norm(mx.array([1, -2, 3]), 1)",
    "mx.linalg.norm(mx.array([1, -2], mx.float16), 2)",
    "mx.linalg.norm(mx.array([1 + 1j, 2 - 1j]))",
    "mx.linalg.norm(b, axis=(0, 1, 2))",
    "mx.linalg.norm(v, 'fro')",
    "mx.linalg.norm(a, 'bad')",
    "mx.linalg.norm(a, 3)",
    "mx.linalg.cross(mx.array([1.0, 2, 3]), mx.array([4.0, 5, 6]))",
    "mx.linalg.cross(mx.array([1, 2]), mx.array([4.0, 5, 6]))",
    "mx.linalg.cross(mx.array([1.0, 2, 3]), mx.array([4, 5]))",
    "mx.linalg.cross(mx.array([1, 2]), mx.array([4, 5]))",
    "mx.linalg.cross(b[..., :3], mx.array([1.0, 0, 2]))",
    "mx.linalg.cross(mx.ones((3, 2)), mx.ones((3, 2)), axis=0)",
    "mx.linalg.cross(mx.ones(4), mx.ones(3))",
    "mx.linalg.det(a)",
    "mx.linalg.det(mx.array([[1, 2], [3, 4]]))",
    "mx.linalg.det(mx.ones((2, 1, 1)))",
    "mx.linalg.slogdet(a)",
    "mx.linalg.slogdet(mx.array([[0.0, 1.0], [1.0, 0.0]]))",
    "mx.linalg.det(mx.ones((2, 3)))",
    "mx.linalg.det(mx.array([[1j, 0], [0, 1]]))",
    "mx.linalg.solve_triangular(a, mx.array([1.0, 2.0, 3.0]))",
    "mx.linalg.solve_triangular(a, mx.eye(3), upper=True)",
    "mx.linalg.tri_inv(a)",
    "mx.linalg.tri_inv(a, upper=True)",
    "mx.linalg.cholesky_inv(mx.linalg.tri_inv(mx.tril(a)) * 0 + mx.tril(a))",
    "mx.linalg.cholesky_inv(mx.triu(a), upper=True)",
    "mx.linalg.lu(mx.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]]))",
    "mx.linalg.lu(w)",
    "mx.linalg.lu(w.T)",
    "mx.linalg.lu_factor(mx.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]]))",
    "mx.linalg.inv(a, stream=mx.cpu).dtype",
    "mx.linalg.inv(a, stream=mx.gpu)",
]

ERRORS = [
    "mx.linalg.inv(mx.array([[1, 2], [3, 4]]))",
    "mx.linalg.inv(mx.array([1.0, 2]))",
    "mx.linalg.inv(w)",
    "mx.linalg.tri_inv(w)",
    "mx.linalg.qr(mx.array([1.0]))",
    "mx.linalg.qr(mx.ones((2, 2), mx.float16))",
    "mx.linalg.svd(mx.array([1.0]))",
    "mx.linalg.svd(mx.ones((2, 2), mx.int32))",
    "mx.linalg.cholesky(w)",
    "mx.linalg.cholesky(mx.array([1.0]))",
    "mx.linalg.cholesky_inv(w)",
    "mx.linalg.pinv(mx.array([1.0]))",
    "mx.linalg.eig(w)",
    "mx.linalg.eigh(mx.ones((2, 2), mx.int32))",
    "mx.linalg.eigvalsh(mx.array([1.0]))",
    "mx.linalg.lu(mx.array([1.0]))",
    "mx.linalg.lu_factor(mx.ones((2, 2), mx.int32))",
    "mx.linalg.solve(v, v)",
    "mx.linalg.solve(a, mx.array(1.0))",
    "mx.linalg.solve(w, v)",
    "mx.linalg.solve(a, v)",
    "mx.linalg.solve(mx.ones((2, 2), mx.int32), mx.ones(2, mx.int32))",
    "mx.linalg.solve_triangular(a, v)",
]

# results from LAPACK on both sides: (expression, rtol)
FACTORED = [
    "mx.linalg.inv(a)",
    "mx.linalg.inv(mx.stack([a, s]))",
    "mx.linalg.inv(a.astype(mx.float64))",
    "mx.linalg.qr(a)",
    "mx.linalg.qr(w)",
    "mx.linalg.qr(w.T)",
    "mx.linalg.svd(a)",
    "mx.linalg.svd(w)",
    "mx.linalg.svd(w.T, compute_uv=False)",
    "mx.linalg.svd(mx.array([[1 + 1j, 2], [0, 1j]]), compute_uv=False)",
    "mx.linalg.cholesky(s)",
    "mx.linalg.cholesky(s, upper=True)",
    "mx.linalg.cholesky(a)",  # not symmetric: each reads its own triangle
    "mx.linalg.cholesky(a, upper=True)",
    # not positive-definite: LAPACK's partial factor, NaN pivots included (MLX checks no info)
    "mx.linalg.cholesky(mx.array([[1.0, 2.0], [2.0, 1.0]]))",
    "mx.linalg.cholesky(mx.array([[4.0, 2, 1], [2, -5, 1], [1, 1, 3]]), upper=True)",
    "mx.linalg.cholesky(mx.array([[float('nan'), 0.0], [0.0, 1.0]]))",
    "mx.linalg.cholesky(mx.stack([s, -s]))",
    # reference LAPACK's recursive potrf2: the trailing block keeps its Schur update
    "mx.linalg.cholesky(mx.array([[4.0, 2, 1, 0.5], [2, 5, 1, 1], [1, 1, 0.2, 1], "
    "[0.5, 1, 1, 3]]))",
    "mx.linalg.cholesky(mx.eye(5) * 4 + 0.5 - mx.diag(mx.array([0.0, 9, 0, 0, 0])))",
    # 64-column blocks: a pivot failing in the first block and in the second
    "mx.linalg.cholesky((lambda g: g @ g.T + 70 * mx.eye(70) - mx.diag((mx.arange(70) == 40)"
    "* 150.0))(((mx.arange(4900) ** 2 * 3 + mx.arange(4900) * 7) % 13 - 6.0).reshape(70, 70)"
    " / 4))",
    "mx.linalg.cholesky((lambda g: g @ g.T + 70 * mx.eye(70) - mx.diag((mx.arange(70) == 66)"
    "* 150.0))(((mx.arange(4900) ** 2 * 3 + mx.arange(4900) * 7) % 13 - 6.0).reshape(70, 70)"
    " / 4), upper=True)",
    "mx.linalg.cholesky_inv(mx.linalg.cholesky(s))",
    "mx.linalg.pinv(a)",
    "mx.linalg.pinv(w)",
    "mx.linalg.pinv(mx.zeros((0, 3)))",
    "mx.linalg.eigh(s)",
    "mx.linalg.eigh(s, UPLO='U')",
    "mx.linalg.eigvalsh(s)",
    "mx.linalg.eig(mx.array([[4.0, 1.0], [2.0, 3.0]]))",
    "mx.linalg.eigvals(mx.array([[4.0, 1.0], [2.0, 3.0]]))",
    "mx.linalg.solve(a, mx.array([1.0, 2.0, 3.0]))",
    "mx.linalg.solve(a, mx.eye(3))",
    "mx.linalg.solve(mx.stack([a, s]), mx.ones((2, 3, 2)))",
    "mx.linalg.det(s @ s)",
    "mx.linalg.det(mx.eye(4) * 2 + 0.5)",
    "mx.linalg.slogdet(-mx.eye(5) * 3 + 0.25)",
]


@pytest.mark.parametrize("expr", COMPOSED + ERRORS)
def test_same_as_mlx(expr):
    _same(expr)


@pytest.mark.parametrize("expr", FACTORED)
def test_factorisations_close_to_mlx(expr):
    (k1, ours), (k2, theirs) = _run(expr, mx), _run(expr, mlx)
    assert k1 == k2 == "ok", (ours, theirs)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert (o.shape, repr(o.dtype)) == (t.shape, repr(t.dtype)), expr
        o, t = np.array(o), np.array(t)
        if "eigh" in expr and o.ndim == 2:
            o, t = _signed(o), _signed(t)
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-5, err_msg=expr)


def _signed(vectors: np.ndarray) -> np.ndarray:
    """Eigenvector columns scaled by the sign of their largest entry."""
    top = np.take_along_axis(vectors, np.abs(vectors).argmax(0)[None], 0)
    return vectors * np.sign(top)


GRADS = [
    ("lambda x: mx.linalg.norm(x)", "mx.array([[1.0, -2.0], [3.0, 0.5]])"),
    ("lambda x: mx.linalg.norm(x, 1, axis=(0, 1))", "mx.array([[1.0, -2.0], [3.0, 0.5]])"),
    ("lambda x: mx.linalg.norm(x, 3, axis=-1).sum()", "mx.array([[1.0, -2.0], [3.0, 0.5]])"),
    ("lambda x: mx.linalg.det(x)", "mx.array([[1.0, 2.0, 0.5], [3.0, 4.0, 1.0], [0, 1, 2]])"),
    ("lambda x: mx.linalg.cross(x, mx.array([1.0, 2.0, 3.0])).sum()",
     "mx.array([0.5, -1.0, 2.0])"),
]


@pytest.mark.parametrize(("fn", "arg"), GRADS)
def test_grads_match_mlx(fn, arg):
    got = [repr(m.grad(eval(fn, {"mx": m}))(eval(arg, {"mx": m}))) for m in (mx, mlx)]
    assert got[0] == got[1]


def test_factorisations_differentiate_beyond_mlx():
    # MLX 0.32.4 has no VJP for Inverse; ember's inv has one: d sum(inv(A)) = -A^-T 1 1^T A^-T
    a = mx.array([[4.0, 1.0], [2.0, 3.0]])
    g = mx.grad(lambda x: mx.linalg.inv(x).sum())(a)
    ai = np.linalg.inv(np.array(a, dtype=np.float64))
    np.testing.assert_allclose(np.array(g), -(ai.T @ np.ones((2, 2)) @ ai.T), rtol=1e-5)
