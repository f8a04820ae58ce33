"""ember.linalg factorisations against PyTorch: cholesky qr svd svdvals eigh eigvalsh.

Factors that are unique (Cholesky, QR from Householder, singular values, eigenvalues) are
compared directly. Singular vectors and eigenvectors are unique only up to sign (phase), so
they are compared through quantities that do not depend on that choice: |U|, U Vh, V diag(f(L))
V^H, and by checking the factorisation reconstructs A. Gradients are taken of such invariant
losses, against torch and against float64 finite differences; inputs are well-conditioned
(A A^T + n I, distinct spectra).
"""

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L

from helpers import assert_same, check_grads, check_op, rand_array, same_message

TL = torch.linalg


def spd(n=4, batch=(), dtype=np.float64, seed=0):
    a = rand_array(batch + (n, n), dtype, seed=seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def sym(x):
    """Symmetrise an ember or torch tensor (so finite differences stay on symmetric inputs)."""
    return x + x.mT


# --- cholesky -------------------------------------------------------------------------------

@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=str)
@pytest.mark.parametrize("batch", [(), (2, 3)], ids=str)
def test_cholesky(batch, dtype, upper):
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {}
    check_op(lambda x: L.cholesky(x, upper=upper), lambda x: TL.cholesky(x, upper=upper),
             spd(4, batch, dtype), check_stride=True, **tol)


def test_cholesky_finite_differences_and_gradient_symmetry():
    a = spd(3)
    check_grads(lambda x: L.cholesky(sym(x) + 6 * ember.eye(3, dtype=ember.float64)), a)
    x = ember.tensor(a, requires_grad=True)
    (L.cholesky(x) * ember.tensor(rand_array((3, 3), np.float64, seed=1))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x.grad.numpy().T, atol=1e-12)


def test_cholesky_not_positive_definite():
    bad = np.eye(3)
    bad[1, 1] = -1
    for arr in (bad, np.stack([np.eye(3), bad])):
        with pytest.raises(torch.linalg.LinAlgError) as t_info:
            TL.cholesky(torch.tensor(arr))
        with pytest.raises(L.LinAlgError) as e_info:
            L.cholesky(ember.tensor(arr))
        assert str(e_info.value) == str(t_info.value)
        assert isinstance(e_info.value, RuntimeError)



@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=str)
def test_cholesky_upper_reads_the_upper_triangle(dtype):
    # LAPACK factors the triangle it is told to: a non-Hermitian input shows which one
    a = spd(3, (2,), dtype)
    a[..., 0, 1] += 0.5 + (0.25j if dtype == np.complex128 else 0)
    a[..., 2, 0] -= 0.75
    for upper in (False, True):
        e, t = L.cholesky(ember.tensor(a), upper=upper), TL.cholesky(torch.tensor(a), upper=upper)
        assert_same(e, t)
    if dtype == np.complex128:  # a real diagonal and zero triangle: +0j, as LAPACK writes them
        u = L.cholesky(ember.tensor(a), upper=True).numpy()
        assert not np.signbit(u.imag[..., [0, 1, 2], [0, 1, 2]]).any()
        assert not np.signbit(u.imag[..., 1, 0]).any()


def test_cholesky_nan_pivot_is_not_positive_definite():
    # LAPACK's potrf stops on a NaN pivot (OpenBLAS's, under NumPy, lets it through)
    for arr in ([[np.nan, 0.0], [0.0, 1.0]], [[1.0, np.nan], [np.nan, 1.0]],
                [[4.0, 0, 0], [0, 1, 0], [0, 0, np.nan]]):
        a = np.array(arr)
        assert "is not positive-definite" in same_message(
            lambda lib, a=a: lib.linalg.cholesky(lib.tensor(a)))
        e, t = L.cholesky_ex(ember.tensor(a)), TL.cholesky_ex(torch.tensor(a))
        assert_same(e.info, t.info)
        assert_same(e.L, t.L, equal_nan=True)


def _not_pd_cases():
    four = np.array([[4.0, 2, 1, 0.5], [2, 5, 1, 1], [1, 1, 0.2, 1], [0.5, 1, 1, 3]])
    out = {"order 3 of 4": four, "first": -np.eye(3), "zero pivot": np.diag([0.0, 1.0]),
           "last": four + np.diag([0, 0, 9, -6.0])}
    rng = np.random.default_rng(0)
    big = rng.standard_normal((70, 70))
    big = big @ big.T
    big[40, 40] = -50.0  # fails inside LAPACK's first 64-wide block
    out["70x70"] = big
    big2 = big.copy()
    big2[40, 40] = 75.0
    big2[66, 66] = -50.0  # fails in the second block
    out["70x70 late"] = big2
    return out


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("name", list(_not_pd_cases()))
def test_cholesky_ex_returns_lapacks_partial_factor(name, upper):
    # what potrf leaves when it stops: the factored columns, the failing pivot's value
    # (not rooted), the rest of the triangle as read; PyTorch returns it as L
    a = _not_pd_cases()[name]
    e, t = L.cholesky_ex(ember.tensor(a), upper=upper), TL.cholesky_ex(torch.tensor(a),
                                                                        upper=upper)
    assert_same(e.info, t.info)
    # the factored columns are solves rounded in another order than LAPACK's blocked ones
    assert_same(e.L, t.L, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=str)
def test_cholesky_ex_partial_factor_batched_and_complex(dtype):
    bad = np.array([[4.0, 2 - 1j], [1 + 3j, -5.0]]) if dtype == np.complex128 else \
        np.array([[4.0, 2.0], [2.0, -5.0]])
    a = np.stack([bad, spd(2, dtype=dtype)]).astype(dtype)
    for upper in (False, True):
        e, t = L.cholesky_ex(ember.tensor(a), upper=upper), TL.cholesky_ex(torch.tensor(a),
                                                                            upper=upper)
        assert_same(e.info, t.info)
        assert_same(e.L, t.L)
    v = ember.func.vmap(L.cholesky_ex)(ember.tensor(a))
    assert_same(v.info, TL.cholesky_ex(torch.tensor(a)).info)
    for shape in ((2, 0, 0), (0, 2, 2)):  # empty: nothing fails
        e, t = L.cholesky_ex(ember.zeros(shape)), TL.cholesky_ex(torch.zeros(shape))
        assert_same(e.L, t.L)
        assert_same(e.info, t.info)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_failed_factor_has_torchs_node_and_gradient(upper):
    # PyTorch differentiates the partial factor with the usual formula: so does ember
    a = np.array([[4.0, 2.0, 0.5], [2.0, -5.0, 1.0], [0.5, 1.0, 3.0]])
    w = rand_array((3, 3), np.float64, seed=3)
    xe = ember.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    le, lt = L.cholesky_ex(xe, upper=upper).L, TL.cholesky_ex(xt, upper=upper).L
    assert type(le.grad_fn).__name__ == type(lt.grad_fn).__name__ == "LinalgCholeskyExBackward0"
    (le * ember.tensor(w)).sum().backward()
    (lt * torch.tensor(w)).sum().backward()
    assert_same(xe.grad, xt.grad)
    with pytest.raises(L.LinAlgError, match="linalg.cholesky_ex: The factorization"):
        L.cholesky_ex(ember.tensor(a), check_errors=True)


# --- qr -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)], ids=str)
def test_qr_values(shape, mode):
    a = rand_array(shape, np.float64)
    check_op(lambda x: tuple(L.qr(x, mode)), lambda x: tuple(TL.qr(x, mode)), a, grad=False,
             check_stride=True)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 3, 4)], ids=str)
def test_qr_grads(shape):
    check_op(lambda x: tuple(L.qr(x)), lambda x: tuple(TL.qr(x)), rand_array(shape, np.float64))
    check_grads(lambda x: L.qr(x).Q.sin().sum() + L.qr(x).R.cos().sum(),
                rand_array(shape, np.float64))


def test_qr_float32_and_complex():
    check_op(lambda x: tuple(L.qr(x)), lambda x: tuple(TL.qr(x)), rand_array((5, 3)),
             rtol=1e-4, atol=1e-5)
    check_op(lambda x: tuple(L.qr(x)), lambda x: tuple(TL.qr(x)),
             rand_array((4, 3), np.complex128))


def test_qr_errors():
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        L.qr(ember.ones(3, 4), mode="x")
    x = ember.tensor(rand_array((5, 3), np.float64), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        L.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        L.qr(x, mode="r").R.sum().backward()


# --- svd ------------------------------------------------------------------------------------

SVD_SHAPES = [(5, 3), (3, 5), (4, 4), (2, 5, 3)]


def _svd_invariants(lib, full_matrices=False):
    """Quantities that do not depend on the signs / phases of singular vectors (nor on the
    basis full_matrices=True picks for the complement, which is arbitrary)."""
    def f(x):
        U, S, Vh = lib.linalg.svd(x, full_matrices=full_matrices)
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        return U @ Vh, S, U.abs(), Vh.abs()

    return f


@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
def test_svd_invariants_and_grads(shape, full_matrices):
    check_op(_svd_invariants(ember, full_matrices), _svd_invariants(torch, full_matrices),
             rand_array(shape, np.float64))


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
def test_svd_reconstructs_and_is_orthonormal(shape):
    a = rand_array(shape, np.float32)
    U, S, Vh = L.svd(ember.tensor(a), full_matrices=False)
    np.testing.assert_allclose((U * S.unsqueeze(-2) @ Vh).numpy(), a, rtol=1e-5, atol=1e-5)
    k = S.shape[-1]
    np.testing.assert_allclose((U.mT @ U).numpy(), np.broadcast_to(np.eye(k), U.shape[:-2] +
                                                                   (k, k)), atol=1e-5)
    assert_same(S, TL.svdvals(torch.tensor(a)))


def test_svd_complex_phase_invariant_grads():
    def f(lib):
        def g(x):
            U, S, Vh = lib.linalg.svd(x, full_matrices=False)
            return U @ Vh, S

        return g

    check_op(f(ember), f(torch), rand_array((4, 3), np.complex128))


def test_svd_finite_differences():
    check_grads(lambda x: _svd_invariants(ember)(x)[0] + _svd_invariants(ember)(x)[2],
                rand_array((4, 3), np.float64))
    check_grads(lambda x: _svd_invariants(ember)(x)[3], rand_array((3, 4), np.float64))


def test_svdvals():
    check_op(L.svdvals, TL.svdvals, rand_array((2, 5, 3), np.float64))
    check_op(L.svdvals, TL.svdvals, rand_array((3, 4)), rtol=1e-5, atol=1e-6)
    x = ember.tensor(rand_array((4, 3)))
    assert_same(L.svdvals(x), TL.svdvals(torch.tensor(x.numpy())))
    assert type(L.svdvals(x.requires_grad_()).grad_fn).__name__ == "LinalgSvdBackward0"


def test_svd_of_empty_matrices():
    for shape in [(0, 3), (3, 0), (2, 0, 0)]:
        a = np.zeros(shape)
        e, t = L.svd(ember.tensor(a)), TL.svd(torch.tensor(a))
        for x, y in zip(e, t):
            assert tuple(x.shape) == tuple(y.shape)


# --- eigh -----------------------------------------------------------------------------------

def _eigh_invariants(lib, uplo="L"):
    def f(x):
        w, v = lib.linalg.eigh(x, UPLO=uplo)
        return w, v.abs(), (v * w.unsqueeze(-2).exp()) @ v.mH

    return f


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("batch", [(), (2,)], ids=str)
def test_eigh_invariants_and_grads(batch, uplo):
    check_op(_eigh_invariants(ember, uplo), _eigh_invariants(torch, uplo), spd(4, batch))


def test_eigh_reads_one_triangle():
    a = spd(3)
    noisy = a.copy()
    noisy[0, 2] += 5.0  # upper triangle only: UPLO='L' ignores it
    w = L.eigvalsh(ember.tensor(noisy))
    assert_same(w, TL.eigvalsh(torch.tensor(a)))


def test_eigh_float32_and_complex():
    check_op(_eigh_invariants(ember), _eigh_invariants(torch), spd(4, (), np.float32),
             rtol=1e-4, atol=1e-5)
    check_op(lambda x: L.eigh(x)[0], lambda x: TL.eigh(x)[0], spd(3, (), np.complex128))
    check_op(lambda x: _eigh_invariants(ember)(x)[2], lambda x: _eigh_invariants(torch)(x)[2],
             spd(3, (), np.complex128))


def test_eigh_finite_differences_symmetric_inputs():
    check_grads(lambda x: _eigh_invariants(ember)(sym(x))[2], rand_array((3, 3), np.float64))
    check_grads(lambda x: L.eigvalsh(sym(x)), rand_array((3, 3), np.float64))


def test_eigvalsh_and_uplo_error():
    check_op(L.eigvalsh, TL.eigvalsh, spd(4, (2,)))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        L.eigh(ember.eye(3), UPLO="X")
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        L.eigh(ember.ones(4, 3))


# --- second order and meta --------------------------------------------------------------------

SECOND = {
    "cholesky": (lambda m: lambda a: m.linalg.cholesky(sym(a) + 8 * m.eye(3, dtype=m.float64)),
                 (3, 3)),
    "qr": (lambda m: lambda a: m.linalg.qr(a).R, (4, 3)),
    "eigvalsh": (lambda m: lambda a: m.linalg.eigvalsh(sym(a)), (3, 3)),
    "eigh_vectors": (lambda m: lambda a: m.linalg.eigh(sym(a))[1].abs(), (3, 3)),
    "svdvals": (lambda m: lambda a: m.linalg.svdvals(a), (4, 3)),
    "svd_uv": (lambda m: lambda a: (lambda u, s, vh: u @ vh)(*m.linalg.svd(a, False)), (4, 3)),
}


@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_derivatives_match_torch(case):
    make, shape = SECOND[case]
    a = rand_array(shape, np.float64)
    rng = np.random.default_rng(2)
    xe = ember.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    out_t = make(torch)(xt)
    v = rng.standard_normal(tuple(out_t.shape))
    (gt,) = torch.autograd.grad((out_t * torch.tensor(v)).sum(), xt, create_graph=True)
    (ge,) = ember.autograd.grad((make(ember)(xe) * ember.tensor(v)).sum(), xe, create_graph=True)
    (ggt,) = torch.autograd.grad((gt ** 2).sum(), xt)
    (gge,) = ember.autograd.grad((ge ** 2).sum(), xe)
    assert_same(ge, gt, 1e-8, 1e-10)
    assert_same(gge, ggt, 1e-7, 1e-9)


META = {
    "cholesky": lambda m, A, R: m.linalg.cholesky(A),
    "cholesky_upper": lambda m, A, R: m.linalg.cholesky(A, upper=True),
    "qr": lambda m, A, R: tuple(m.linalg.qr(R)),
    "qr_complete": lambda m, A, R: tuple(m.linalg.qr(R, mode="complete")),
    "qr_wide": lambda m, A, R: tuple(m.linalg.qr(R.mT)),
    "qr_r": lambda m, A, R: tuple(m.linalg.qr(R, mode="r")),
    "svd": lambda m, A, R: tuple(m.linalg.svd(R)),
    "svd_reduced": lambda m, A, R: tuple(m.linalg.svd(R, full_matrices=False)),
    "svdvals": lambda m, A, R: m.linalg.svdvals(R),
    "eigh": lambda m, A, R: tuple(m.linalg.eigh(A)),
    "eigvalsh": lambda m, A, R: m.linalg.eigvalsh(A),
}


@pytest.mark.parametrize("case", META, ids=str)
def test_meta_shapes_dtypes_strides(case):
    def run(m):
        kw = {"device": "meta", "dtype": m.complex64}
        return META[case](m, m.empty(2, 4, 4, **kw), m.empty(2, 5, 3, **kw))

    e, t = run(ember), run(torch)
    e = e if isinstance(e, tuple) else (e,)
    t = t if isinstance(t, tuple) else (t,)
    for x, y in zip(e, t):
        assert x.device.type == "meta"
        assert_same(x, y, check_stride=True)


def test_low_precision_and_integer_inputs_rejected():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
            lib.linalg.svd(lib.ones(3, 3, dtype=lib.int64))
        with pytest.raises(RuntimeError, match="Low precision dtypes not supported"):
            lib.linalg.inv(lib.eye(3).half())
        with pytest.raises(RuntimeError):
            lib.linalg.cholesky(lib.eye(3).half())


def _hermitian(lib):
    a = lib.tensor(np.array([[1.0, 2 - 1j, 0.5j], [2 + 1j, -0.5, 1.0], [-0.5j, 1.0, 2.0]]))
    return a.requires_grad_(True)


PHASE_LOSSES = {
    # (name, loss, ill-defined: depends on the free phase e^{i phi} of each vector)
    "eigh vectors real part": (lambda m, a: m.linalg.eigh(a)[1].real.sum(), True),
    "svd U real part": (lambda m, a: m.linalg.svd(a)[0].real.sum(), True),
    "svd Vh imaginary part": (lambda m, a: m.linalg.svd(a)[2].imag.sum(), True),
    "eigh vectors moduli": (lambda m, a: m.linalg.eigh(a)[1].abs().sum(), False),
    "eigh projector": (lambda m, a: (m.linalg.eigh(a)[1][:, :1] @ m.linalg.eigh(a)[1][:, :1].mH)
                       .real.sum(), False),
    "svd U Vh": (lambda m, a: (m.linalg.svd(a)[0] @ m.linalg.svd(a)[2]).real.sum(), False),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a).pow(3).sum(), False),
    "svdvals": (lambda m, a: m.linalg.svdvals(a).sum(), False),
}


@pytest.mark.parametrize("name", list(PHASE_LOSSES))
def test_complex_vector_phase_dependence_is_refused_as_torch(name):
    loss, ill_defined = PHASE_LOSSES[name]
    outcomes = []
    for lib in (ember, torch):
        a = _hermitian(lib)
        try:
            outcomes.append(lib.autograd.grad(loss(lib, a), a)[0].detach().resolve_conj().numpy())
        except RuntimeError as e:
            outcomes.append(str(e))
    if ill_defined:
        assert isinstance(outcomes[1], str) and outcomes[0] == outcomes[1]
        assert "specified up to multiplication by e^{i phi}" in outcomes[0]
    else:
        # (a few float64 products and a LAPACK decomposition: agree to many digits)
        np.testing.assert_allclose(outcomes[0], outcomes[1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", ["svdvals", "svd_S", "svd_S_wide", "eigvalsh", "eigh_L"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_value_only_gradients_are_finite_at_repeated_or_zero_values(case, dtype):
    """A loss of the singular / eigen values alone has the gradient U diag(g) Vh (V diag(g)
    V^H), finite when values repeat or are zero, as PyTorch's backward, which skips the
    1 / (s_i^2 - s_j^2) terms when the vectors get no gradient. Identity inputs and rank-0
    inputs: exact in both, so compared bit for bit."""
    shape = (2, 3) if case == "svd_S_wide" else (3, 3)
    base = np.zeros(shape, dtype) if case == "svd_S_wide" else np.eye(3, dtype=dtype)
    w = np.array([1.0, 2.0, 3.0])[: min(shape)]

    def loss(mod, x):
        la = mod.linalg
        if case == "svdvals":
            v = la.svdvals(x)
        elif case.startswith("svd_S"):
            v = la.svd(x, full_matrices=True)[1]
        elif case == "eigvalsh":
            v = la.eigvalsh(x)
        else:
            v = la.eigh(x)[0]
        return (v * mod.tensor(w, dtype=v.dtype)).sum()

    xe = ember.tensor(base, requires_grad=True)
    xt = torch.tensor(base, requires_grad=True)
    loss(ember, xe).backward()
    loss(torch, xt).backward()
    assert np.isfinite(xe.grad.numpy()).all()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("uplo", ["l", "u"])
def test_eigh_takes_uplo_in_either_case(uplo):
    a = rand_array((3, 3), np.float64)
    assert_same(L.eigvalsh(ember.tensor(a), uplo), TL.eigvalsh(torch.tensor(a), uplo))
    w, v = L.eigh(ember.tensor(a), UPLO=uplo)
    tw, tv = TL.eigh(torch.tensor(a), UPLO=uplo)
    assert_same(w, tw)
    assert_same(v.abs(), tv.abs())  # (eigenvectors up to sign)


@pytest.mark.parametrize("uplo", ["lower", "LL", ""])
def test_eigh_refuses_other_uplo(uplo):
    same_message(lambda m: m.linalg.eigh(m.eye(2), UPLO=uplo))
    same_message(lambda m: m.linalg.eigvalsh(m.eye(2), UPLO=uplo))
