"""The products of `_products` against MLX 0.32.4: reprs (dtype and six significant digits)
or exception type and message must be equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import grad_repr, outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("i = mx.array([0, 2]); o = mx.ones((64, 64)); b = mx.arange(8.0).reshape(2, 2, 2);"
         "mask = mx.array([[True, False], [True, True]]);"
         "a = mx.array([[1, -2, 3], [4, 5, -6]]);"
         "f = mx.array([1.5, -2.5, float('nan'), float('inf'), -float('inf')]);"
         "x = mx.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]])")


def _run(expr: str, module):
    return outcome(expr, module, SETUP)


CASES = [
    "mx.kron(a, mx.array([[1, 0], [0, 2]]))",
    "mx.kron(mx.array([1.0, 2]), mx.array([[1], [3]]))",
    "mx.kron(x, mx.array(2))",
    "mx.kron(mx.array([1, 2], mx.int8), mx.array([1.5]))",
    "mx.vecdot(a, a)",
    "mx.vecdot(a.astype(mx.float32), a, axis=0)",
    "mx.vecdot(mx.array([1 + 1j]), mx.array([1 + 1j]))",
    "mx.vecdot(x, mx.array([1.0, 2.0, 3.0]))",
    "mx.vecdot(x, mx.ones((1, 3)))",
    "mx.vecdot(x, x, axis=3)",
    "mx.vecdot(x, x, axis=-2)",
    "mx.convolve(mx.array([1.0, 2, 3]), mx.array([0, 1, 0.5]))",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, -1]), mode='same')",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, -1, 2, 0.5]), mode='same')",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, -1, 2]), mode='same')",
    "mx.convolve(mx.array([1.0, 2]), mx.array([1.0, -1, 3]), mode='valid')",
    "mx.convolve(mx.array([1.0, 2]), mx.array([1.0, -1, 3]))",
    "mx.convolve(mx.array([1, 2, 3]), mx.array([1, 1]))",
    "mx.gather_mm(mx.arange(12.0).reshape(3, 2, 2), mx.ones((2, 2)), i)",
    "mx.gather_mm(mx.arange(12.0).reshape(3, 2, 2), b, i, i // 2)",
    "mx.gather_mm(mx.ones((2, 3)), mx.arange(12.0).reshape(2, 3, 2), None, i.reshape(2, 1) // 2)",
    "mx.segmented_mm(mx.arange(8.0).reshape(2, 4), mx.arange(12.0).reshape(4, 3),"
    " mx.array([[0, 1], [1, 4], [2, 2]]))",
    "mx.block_masked_mm(o, o, 32, mx.array([[True, False], [False, True]]))[::32, ::32]",
    "mx.block_masked_mm(o, o, 32, None, mask, mask.T)[::32, ::32]",
    "mx.block_masked_mm(o[:40], o * 2, 32, None, mask)[::20, ::20]",
    "mx.hadamard_transform(mx.array([1.0, 2, 3, 4]))",
    "mx.hadamard_transform(mx.array([[1, 2], [3, 4]]), scale=1.0)",
    "mx.hadamard_transform(mx.arange(16.0).reshape(2, 8))",
    "mx.hadamard_transform(mx.arange(8.0).astype(mx.float16))",
    "mx.hadamard_transform(mx.ones(3))",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


@pytest.mark.parametrize(("fn", "arg"), [
    ("lambda x: mx.kron(x, mx.array([[1.0, 2.0], [3.0, 4.0]])).sum()", "mx.array([0.5, -1.0])"),
    ("lambda x: (mx.hadamard_transform(x) ** 2 * mx.arange(4.0)).sum()",
     "mx.array([0.5, -1.0, 2.0, 3.0])"),
    ("lambda x: (mx.convolve(x, mx.array([1.0, -2.0])) ** 2).sum()", "mx.array([0.5, -1.0, 2.0])"),
])
def test_grads_match_mlx(fn, arg):
    assert grad_repr(fn, arg, mx) == grad_repr(fn, arg, mlx)


# -- hadamard_transform: n = m * 2^k, bit for bit ------------------------------------------

import numpy as np  # noqa: E402


@pytest.mark.parametrize("m", [12, 20, 28])
def test_hadamard_base_matrices_are_mlx_s(m):
    """The transform of the identity: each column is the image of one basis vector."""
    ours = np.array(mx.hadamard_transform(mx.eye(m), scale=1.0))
    theirs = np.array(mlx.hadamard_transform(mlx.eye(m), scale=1.0))
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("m", [1, 12, 20, 28])
def test_hadamard_bit_for_bit(m, dtype):
    """MLX's CPU order of operations: butterflies in the input's dtype from the lowest bit,
    the +-sums over the m blocks in float32; values are equal to the last bit."""
    rng = np.random.default_rng(m)
    for k in range(8):
        n = m << k
        if n == 1:
            continue
        x = rng.standard_normal((3, n)) * rng.choice([1e-3, 1.0, 1e3], (3, 1))
        for scale in (None, 0.3, 1.0):
            ours = mx.hadamard_transform(mx.array(x).astype(getattr(mx, dtype)), scale=scale)
            theirs = mlx.hadamard_transform(mlx.array(x).astype(getattr(mlx, dtype)), scale=scale)
            assert repr(ours.dtype) == repr(theirs.dtype) and ours.shape == theirs.shape
            np.testing.assert_array_equal(np.array(ours.astype(mx.float32)),
                                          np.array(theirs.astype(mlx.float32)), err_msg=f"{n}")


@pytest.mark.parametrize("expr", [
    "mx.hadamard_transform(mx.array([3]))", "mx.hadamard_transform(mx.array(3))",
    "mx.hadamard_transform(mx.array([3]), scale=2.0)",
    "mx.hadamard_transform(mx.array([1 + 2j, 3]))",
    "mx.hadamard_transform(mx.array([1 + 2j]), scale=2.0)",
    "mx.hadamard_transform(mx.array([1.0], mx.float64), scale=3.0)",
    "mx.hadamard_transform(mx.array([True, False] * 6))",
    "mx.hadamard_transform(mx.arange(24, dtype=mx.int8).reshape(1, 24))",
    "mx.hadamard_transform(mx.array([1, 2, 3, 4], mx.uint32))",
    "mx.hadamard_transform(mx.array([0.0, -0.0, float('nan'), float('inf')] * 6))",
    "mx.hadamard_transform(mx.array([-0.0] * 20), scale=1.0)",
    "mx.hadamard_transform(mx.arange(96.0).reshape(4, 24).T.reshape(2, 2, 24))",
    "mx.hadamard_transform(mx.arange(56.0).reshape(2, 28)[:, ::1] * 0.5, scale=0.25)",
    "mx.hadamard_transform(mx.ones((2, 1), mx.float16), scale=0.1)",
    "mx.hadamard_transform(mx.array([1.0, 2.0], mx.float64))",
    "mx.hadamard_transform(mx.ones(40, mx.float64))",
    "mx.hadamard_transform(mx.zeros((0, 24)))", "mx.hadamard_transform(mx.zeros((4, 0)))",
    "mx.hadamard_transform(mx.ones(6))", "mx.hadamard_transform(mx.ones(44))",
])
def test_hadamard_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


def test_hadamard_refuses_sizes_mlx_miscomputes():
    """n = 36 = 12 * 3: MLX runs its power-of-two butterflies on blocks of 3 (numbers of no
    meaning, out-of-bounds reads for other n); ember raises MLX's own error for such n."""
    with pytest.raises(ValueError, match=r"n = m\*2\^k where m in \(1, 12, 20, 28\)"):
        mx.hadamard_transform(mx.ones(36))
    mlx.eval(mlx.hadamard_transform(mlx.ones(36)))  # (no error there)


@pytest.mark.parametrize("n", [8, 12, 24, 20, 40, 28, 56])
def test_hadamard_gradient(n):
    """MLX's VJP is the transform itself: right where the matrix is symmetric (2^k, m = 12),
    the untransposed matrix for m = 20, 28. Ember's is the transpose's transform."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n)).astype(np.float32)
    w = rng.standard_normal((2, n)).astype(np.float32)
    ours = np.array(mx.grad(lambda v: (mx.hadamard_transform(v) * mx.array(w)).sum())(mx.array(x)))
    theirs = np.array(mlx.grad(lambda v: (mlx.hadamard_transform(v) * mlx.array(w)).sum())(
        mlx.array(x)))
    h = np.array(mlx.hadamard_transform(mlx.eye(n), scale=1.0)).T / np.sqrt(n)  # y = h @ x
    np.testing.assert_allclose(ours, w @ h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(theirs, w @ h.T, rtol=1e-5, atol=1e-5)
    if (h == h.T).all():
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    tangent = mx.jvp(mx.hadamard_transform, [mx.array(x)], [mx.array(w)])[1][0]
    expected = mlx.jvp(mlx.hadamard_transform, [mlx.array(x)], [mlx.array(w)])[1][0]
    np.testing.assert_array_equal(np.array(tangent), np.array(expected))


# -- einsum_path: the path and the report, exactly ----------------------------------------

EINSUM_SETUP = "o = mx.ones"


@pytest.mark.parametrize("expr", [
    "mx.einsum_path('ij,jk,kl->il', o((2, 3)), o((3, 4)), o((4, 5)))",
    "mx.einsum_path('ij,jk,kl', o((2, 3)), o((3, 4)), o((4, 5)))",
    "mx.einsum_path('ij,jk,kl,lm->im', o((10, 20)), o((20, 5)), o((5, 30)), o((30, 2)))",
    "mx.einsum_path('ab,bc,cd,de,ef', o((3, 4)), o((4, 5)), o((5, 6)), o((6, 7)), o((7, 8)))",
    "mx.einsum_path('a,b,c', o(2), o(3), o(4))", "mx.einsum_path('i,i,i', o(3), o(1), o(3))",
    "mx.einsum_path('ij->ji', o((2, 3)))", "mx.einsum_path('ij->ik', o((2, 3)))",
    "mx.einsum_path('ij->', o((2, 3)))", "mx.einsum_path('ii', o((3, 3)))",
    "mx.einsum_path('i j , j k -> i k', o((2, 3)), o((3, 4)))",
    "mx.einsum_path('Ab,bC', o((2, 3)), o((3, 4)))",
    "mx.einsum_path('ij,jk', o((2, 1)), o((4, 5)))",
    "mx.einsum_path('...ij,...jk->...ik', o((5, 2, 3)), o((3, 4)))",
    "mx.einsum_path('...->...', o((2, 3)))", "mx.einsum_path('i,...', o(2), o((2, 3)))",
    "mx.einsum_path('ij->i...', o((2, 3)))", "mx.einsum_path('', o(()))",
    "mx.einsum_path('->', o(()))", "mx.einsum_path(',', o(()), o(()))",
    "mx.einsum_path(',ij', o(()), o((2, 3)))", "mx.einsum_path('ij,', o((2, 3)), o(()))",
    "mx.einsum_path('ij,jk,kl->il', o((0, 3)), o((3, 4)), o((4, 5)))",
    "mx.einsum_path('i', mx.array([1, 2], mx.int32))",
    # errors
    "mx.einsum_path('ij', o(3))", "mx.einsum_path('ij,jk', o((2, 3)))",
    "mx.einsum_path('ij,', o((2, 3)))", "mx.einsum_path('', o(()), o(()))",
    "mx.einsum_path('i1', o((2, 2)))", "mx.einsum_path('i-j', o((2, 2)))",
    "mx.einsum_path('ij->j->i', o((2, 3)))", "mx.einsum_path('ij..', o((2, 3)))",
    "mx.einsum_path('......i', o(2))", "mx.einsum_path('...i...', o((2, 2)))",
    "mx.einsum_path('ii', o((2, 3)))", "mx.einsum_path('ij,jk', o((2, 3)), o((4, 5)))",
    "mx.einsum_path('ij->ii', o((2, 2)))", "mx.einsum_path('...ij', o(2))",
    "mx.einsum_path('ij')", "mx.einsum_path('ij,jk', [[1.0, 2.0]], o((2, 3)))",
    "mx.einsum_path('abcdefghijklmnopqrstuvwxyz,ABCDEFGHIJKLMNOPQRSTUVWXYZ', o((1,) * 26),"
    " o((1,) * 26))",
])
def test_einsum_path_same_as_mlx(expr):
    assert outcome(expr, mx, EINSUM_SETUP) == outcome(expr, mlx, EINSUM_SETUP), expr


def test_einsum_path_random_contractions():
    """Greedy paths over random contractions of 3-9 operands: sizes from 1 to 30 (so the
    memory and cost limits cut candidates), implicit and explicit outputs."""
    import random

    rng = random.Random(7)
    letters = "abcdefghijAB"
    for _ in range(400):
        size = {c: rng.choice([1, 2, 3, 5, 8, 13, 30]) for c in letters}
        terms = ["".join(rng.sample(letters, rng.randint(1, 4)))
                 for _ in range(rng.randint(3, 9))]
        subscripts = ",".join(terms)
        if rng.random() < 0.7:
            used = sorted(set("".join(terms)))
            subscripts += "->" + "".join(rng.sample(used, rng.randint(0, min(4, len(used)))))
        shapes = [tuple(size[c] for c in t) for t in terms]
        ours = mx.einsum_path(subscripts, *[mx.ones(s) for s in shapes])
        theirs = mlx.einsum_path(subscripts, *[mlx.ones(s) for s in shapes])
        assert ours == theirs, subscripts
