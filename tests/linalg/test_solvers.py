"""ember.linalg solvers against PyTorch: inv det slogdet solve solve_triangular pinv lstsq.

Inputs are well-conditioned (A A^T + n I, or a random matrix plus a multiple of I), so
float32 results agree with torch to ~1e-5; gradients are compared with torch and with
float64 finite differences, second derivatives through create_graph=True.
"""

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L

from helpers import assert_same, check_grads, check_op, rand_array, same_message

TL = torch.linalg
pytestmark = pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")


def spd(n=4, batch=(), dtype=np.float64, seed=0):
    """A symmetric (Hermitian) positive-definite matrix: A A^H + n I."""
    a = rand_array(batch + (n, n), dtype, seed=seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def wellcond(n=4, batch=(), dtype=np.float64, seed=0):
    """A non-symmetric matrix with a dominant diagonal (condition number ~ a few)."""
    return (rand_array(batch + (n, n), dtype, seed=seed) + 2 * n * np.eye(n)).astype(dtype)


F32 = {"rtol": 1e-5, "atol": 1e-5}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=str)
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)], ids=str)
def test_inv_det_slogdet(batch, dtype):
    a = wellcond(3, batch, dtype)
    tol = F32 if dtype == np.float32 else {}
    check_op(L.inv, TL.inv, a, **tol)
    check_op(L.det, TL.det, a, rtol=1e-4 if dtype == np.float32 else None)
    check_op(lambda x: tuple(L.slogdet(x)), lambda x: tuple(TL.slogdet(x)), a, **tol)


def test_det_of_negative_and_empty_matrices():
    check_op(L.det, TL.det, np.diag([-1.0, 2.0, 3.0]))
    check_op(lambda x: tuple(L.slogdet(x)), lambda x: tuple(TL.slogdet(x)), np.diag([-1.0, 2, 3]))
    check_op(L.det, TL.det, np.zeros((2, 0, 0)), grad=False)
    check_op(L.inv, TL.inv, np.zeros((0, 0)), grad=False)


def test_det_gradient_of_a_singular_matrix_is_its_adjugate():
    # d det(A) / dA = adj(A)^T, worked by hand for this rank-2 matrix (cofactors row by row);
    # torch's answer here depends on whether its LU finds an exactly zero pivot (it varies
    # with the CPU's BLAS), so the hand-worked cofactors are the oracle.
    singular = ember.tensor([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=ember.float64,
                            requires_grad=True)
    L.det(singular).backward()
    cofactors = np.array([[4.0, 4, -4], [-2, -2, 2], [0, 0, 0]])
    np.testing.assert_allclose(singular.grad.numpy(), cofactors, atol=1e-12)
    # rank n-2 and below: every cofactor vanishes
    zero = ember.zeros(3, 3, dtype=ember.float64, requires_grad=True)
    L.det(zero).backward()
    assert (zero.grad.numpy() == 0).all()
    # a batch mixing a singular and a well-conditioned matrix keeps each one's gradient
    batch = ember.tensor(np.stack([singular.detach().numpy(), wellcond(3)]), requires_grad=True)
    L.det(batch).sum().backward()
    np.testing.assert_allclose(batch.grad.numpy()[0], cofactors, atol=1e-12)
    t = torch.tensor(wellcond(3), requires_grad=True)
    TL.det(t).backward()
    np.testing.assert_allclose(batch.grad.numpy()[1], t.grad.numpy(), rtol=1e-10)


def test_det_gradient_reads_no_data(monkeypatch):
    # The VJP is one formula for every matrix (no branch on det == 0): backward asks no
    # tensor for a Python truth value, and runs on meta, where there are no values at all.
    a = ember.tensor(wellcond(3), requires_grad=True)
    d = L.det(a)

    def refuse(self):
        raise AssertionError("a VJP read tensor data")

    monkeypatch.setattr(ember.Tensor, "__bool__", refuse)
    d.backward()
    monkeypatch.undo()
    t = torch.tensor(wellcond(3), requires_grad=True)
    TL.det(t).backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    m = ember.empty(2, 3, 3, dtype=ember.float64, device="meta", requires_grad=True)
    L.det(m).sum().backward()
    assert m.grad.device.type == "meta"
    assert m.grad.shape == (2, 3, 3) and m.grad.dtype == ember.float64


def test_slogdet_result_is_a_named_tuple():
    r = L.slogdet(ember.tensor(wellcond(3)))
    t = TL.slogdet(torch.tensor(wellcond(3)))
    assert_same(r.sign, t.sign)
    assert_same(r.logabsdet, t.logabsdet)


def test_inv_det_solve_finite_differences():
    a, b = wellcond(3), rand_array((3, 2), np.float64, seed=1)
    check_grads(L.inv, a)
    check_grads(L.det, a)
    check_grads(lambda x: L.slogdet(x).logabsdet, a)
    check_grads(L.solve, a, b)


SOLVE_CASES = {
    "matrix": ((3, 3), (3, 2)),
    "vector": ((3, 3), (3,)),
    "batched_vector": ((2, 3, 3), (2, 3)),
    "batched": ((2, 3, 3), (2, 3, 4)),
    "broadcast_a": ((3, 3), (2, 3, 4)),
    "broadcast_b": ((2, 1, 3, 3), (4, 3, 1)),
    "vector_vs_batch": ((2, 3, 3), (3,)),
}


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("case", SOLVE_CASES, ids=str)
def test_solve(case, left):
    sa, sb = SOLVE_CASES[case]
    if not left and len(sb) > 1 and sb != sa[:-1]:
        sb = sb[:-2] + (sb[-1], sb[-2])  # X A = B: B has n columns
    a = wellcond(sa[-1], sa[:-2])
    b = rand_array(sb, np.float64, seed=1)
    if not left and "vector" in case:  # B is then n x 1, which X A = B cannot produce
        with pytest.raises(RuntimeError) as t_info:
            TL.solve(torch.tensor(a), torch.tensor(b), left=False)
        with pytest.raises(RuntimeError, match="equation XA = B") as e_info:
            L.solve(ember.tensor(a), ember.tensor(b), left=False)
        assert str(e_info.value) == str(t_info.value)
        return
    check_op(lambda x, y: L.solve(x, y, left=left), lambda x, y: TL.solve(x, y, left=left), a, b)


def test_solve_float32_and_complex():
    check_op(L.solve, TL.solve, wellcond(4, (2,), np.float32), rand_array((2, 4, 3), seed=1),
             **F32)
    check_op(L.solve, TL.solve, wellcond(4, (), np.complex128),
             rand_array((4, 2), np.complex128, seed=1))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular(upper, left, unitriangular):
    a = wellcond(4, (2,))
    b = rand_array((2, 4, 3) if left else (2, 3, 4), np.float64, seed=1)

    def f(lib):
        return lambda x, y: lib.linalg.solve_triangular(x, y, upper=upper, left=left,
                                                        unitriangular=unitriangular)

    check_op(f(ember), f(torch), a, b)


def test_solve_triangular_zero_pivot_gives_inf_like_torch():
    a = np.triu(wellcond(3))
    a[1, 1] = 0
    b = rand_array((3, 2), np.float64, seed=1)
    e = L.solve_triangular(ember.tensor(a), ember.tensor(b), upper=True)
    t = TL.solve_triangular(torch.tensor(a), torch.tensor(b), upper=True)
    np.testing.assert_array_equal(np.isfinite(e.numpy()), np.isfinite(t.numpy()))


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4)], ids=str)
def test_pinv_full_rank(shape, hermitian):
    if hermitian and shape[-1] != shape[-2]:
        pytest.skip("hermitian needs square input")
    a = spd(4, shape[:-2]) if hermitian else rand_array(shape, np.float64)
    check_op(lambda x: L.pinv(x, hermitian=hermitian), lambda x: TL.pinv(x, hermitian=hermitian),
             a)


def test_pinv_rank_deficient_and_tolerances():
    u = rand_array((5, 2), np.float64)
    a = u @ rand_array((2, 4), np.float64, seed=1)  # rank 2
    check_op(L.pinv, TL.pinv, a, rtol=1e-6, atol=1e-8)
    check_op(lambda x: L.pinv(x, atol=0.5), lambda x: TL.pinv(x, atol=0.5), a, grad=False)
    check_op(lambda x: L.pinv(x, rtol=0.9), lambda x: TL.pinv(x, rtol=0.9), a, grad=False)
    check_op(ember.pinverse, torch.pinverse, a, grad=False)


def test_pinv_finite_differences():
    check_grads(L.pinv, rand_array((4, 3), np.float64))
    check_grads(L.pinv, rand_array((2, 3), np.float64))


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_matches_torch_tuple(driver):
    a, b = rand_array((6, 3), np.float64), rand_array((6, 2), np.float64, seed=1)
    e = L.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
    t = TL.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for name in ("solution", "residuals", "rank", "singular_values"):
        assert_same(getattr(e, name), getattr(t, name)), name


def test_lstsq_batched_vector_and_wide():
    check_op(lambda x, y: L.lstsq(x, y).solution, lambda x, y: TL.lstsq(x, y).solution,
             rand_array((2, 5, 3), np.float64), rand_array((2, 5, 4), np.float64, seed=1))
    check_op(lambda x, y: tuple(L.lstsq(x, y, driver="gelsd"))[:2],
             lambda x, y: tuple(TL.lstsq(x, y, driver="gelsd"))[:2],
             rand_array((5, 3), np.float64), rand_array((5,), np.float64, seed=1))
    check_op(lambda x, y: L.lstsq(x, y, driver="gelsd").solution,
             lambda x, y: TL.lstsq(x, y, driver="gelsd").solution,
             rand_array((3, 5), np.float64), rand_array((3, 2), np.float64, seed=1))


def test_lstsq_finite_differences():
    check_grads(lambda a, b: L.lstsq(a, b).solution, rand_array((5, 3), np.float64),
                rand_array((5, 2), np.float64, seed=1))


# --- errors -------------------------------------------------------------------------------

ERRORS = {
    "inv_int": lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.int64)),
    "inv_half": lambda m: m.linalg.inv(m.ones(3, 3).half()),
    "inv_rect": lambda m: m.linalg.inv(m.ones(3, 4)),
    "inv_1d": lambda m: m.linalg.inv(m.ones(3)),
    "inv_singular": lambda m: m.linalg.inv(m.zeros(3, 3)),
    "inv_singular_batch": lambda m: m.linalg.inv(m.tensor(np.stack([np.eye(3), np.ones((3, 3))]))),
    "det_rect": lambda m: m.linalg.det(m.ones(3, 4)),
    "det_int": lambda m: m.linalg.det(m.ones(3, 3, dtype=m.int64)),
    "solve_singular": lambda m: m.linalg.solve(m.zeros(3, 3), m.ones(3)),
    "solve_shape_vec": lambda m: m.linalg.solve(m.eye(3), m.ones(4)),
    "solve_shape": lambda m: m.linalg.solve(m.eye(3), m.ones(2, 3)),
    "solve_dtype": lambda m: m.linalg.solve(m.eye(3), m.ones(3, 3, dtype=m.float64)),
    "solve_tri_1d": lambda m: m.linalg.solve_triangular(m.eye(3), m.ones(3), upper=True),
    "lstsq_driver": lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(5, 2), driver="gel"),
    "lstsq_rows": lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(4, 2)),
    "lstsq_dims": lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(2, 2, 5, 2)),
}


@pytest.mark.parametrize("case", ERRORS, ids=str)
def test_errors_match_torch(case):
    with pytest.raises(Exception) as t_info:
        ERRORS[case](torch)
    with pytest.raises(Exception) as e_info:
        ERRORS[case](ember)
    assert isinstance(e_info.value, RuntimeError)
    if isinstance(t_info.value, torch.linalg.LinAlgError):
        assert isinstance(e_info.value, L.LinAlgError)
    else:
        assert type(e_info.value) is type(t_info.value)
    assert str(e_info.value) == str(t_info.value)


# --- second order and meta ----------------------------------------------------------------

SECOND = {
    "inv": (lambda m: lambda a: m.linalg.inv(a), [wellcond(3)]),
    "det": (lambda m: lambda a: m.linalg.det(a), [wellcond(3)]),
    "slogdet": (lambda m: lambda a: m.linalg.slogdet(a)[1], [wellcond(3)]),
    "solve": (lambda m: lambda a, b: m.linalg.solve(a, b), [wellcond(3), rand_array((3, 2))]),
    "solve_triangular": (lambda m: lambda a, b: m.linalg.solve_triangular(a, b, upper=False),
                         [wellcond(3), rand_array((3, 2))]),
    "pinv": (lambda m: lambda a: m.linalg.pinv(a), [rand_array((4, 3), np.float64)]),
}


@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_derivatives_match_torch(case):
    make, arrays = SECOND[case]
    arrays = [np.asarray(a, np.float64) for a in arrays]
    rng = np.random.default_rng(4)
    xe = [ember.tensor(a, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_t = make(torch)(*xt)
    v = rng.standard_normal(tuple(out_t.shape))
    gt = torch.autograd.grad((out_t * torch.tensor(v)).sum(), xt, create_graph=True)
    ge = ember.autograd.grad((make(ember)(*xe) * ember.tensor(v)).sum(), xe, create_graph=True)
    ggt = torch.autograd.grad(sum((g ** 2).sum() for g in gt), xt)
    gge = ember.autograd.grad(sum((g ** 2).sum() for g in ge), xe)
    for a, b in zip(list(ge) + list(gge), list(gt) + list(ggt)):
        assert_same(a, b, 1e-8, 1e-10)


META = {
    "inv": lambda m, A, R, B: m.linalg.inv(A),
    "det": lambda m, A, R, B: m.linalg.det(A),
    "slogdet": lambda m, A, R, B: tuple(m.linalg.slogdet(A)),
    "solve": lambda m, A, R, B: m.linalg.solve(A, B),
    "solve_vec": lambda m, A, R, B: m.linalg.solve(A, B[..., 0]),
    "solve_right": lambda m, A, R, B: m.linalg.solve(A, B.mT, left=False),
    "solve_triangular": lambda m, A, R, B: m.linalg.solve_triangular(A, B, upper=True),
    "pinv": lambda m, A, R, B: m.linalg.pinv(R),
}


@pytest.mark.parametrize("case", META, ids=str)
def test_meta_shapes_dtypes_strides(case):
    def run(m):
        kw = {"device": "meta", "dtype": m.float64}
        return META[case](m, m.empty(2, 4, 4, **kw), m.empty(2, 5, 3, **kw),
                          m.empty(2, 4, 2, **kw))

    e, t = run(ember), run(torch)
    e = e if isinstance(e, tuple) else (e,)
    t = t if isinstance(t, tuple) else (t,)
    for x, y in zip(e, t):
        assert x.device.type == "meta"
        assert_same(x, y, check_stride=True)


def test_cpu_results_have_torch_strides():
    a, b = wellcond(4, (2,)), rand_array((2, 4, 2), np.float64, seed=1)
    check_op(L.inv, TL.inv, a, check_stride=True, grad=False)
    check_op(L.solve, TL.solve, a, b, check_stride=True, grad=False)
    check_op(lambda x, y: L.solve(x, y[..., 0]), lambda x, y: TL.solve(x, y[..., 0]), a, b,
             check_stride=True, grad=False)


# --- *_ex variants ----------------------------------------------------------------------------

def test_inv_ex_and_solve_ex_info_codes():
    a = np.stack([wellcond(3), np.zeros((3, 3)), np.diag([1.0, 0.0, 2.0])])
    b = rand_array((3, 3), np.float64, seed=1)
    e, t = L.inv_ex(ember.tensor(a)), TL.inv_ex(torch.tensor(a))
    assert_same(e.info, t.info)
    assert_same(e.inverse[0], t.inverse[0])
    e, t = L.solve_ex(ember.tensor(a), ember.tensor(b)), TL.solve_ex(torch.tensor(a),
                                                                      torch.tensor(b))
    assert_same(e.info, t.info)
    assert_same(e.result[0], t.result[0])
    with pytest.raises(L.LinAlgError):
        L.inv_ex(ember.tensor(a), check_errors=True)


def test_ex_variants_are_differentiable_when_they_succeed():
    check_op(lambda x: tuple(L.inv_ex(x)), lambda x: tuple(TL.inv_ex(x)), wellcond(3, (2,)))
    check_op(lambda x: tuple(L.cholesky_ex(x)), lambda x: tuple(TL.cholesky_ex(x)),
             wellcond(3) @ wellcond(3).T)


def test_cholesky_ex_info_codes():
    bad = np.eye(3)
    bad[2, 2] = -1
    a = np.stack([np.eye(3) * 2, bad, -np.eye(3)])
    e, t = L.cholesky_ex(ember.tensor(a)), TL.cholesky_ex(torch.tensor(a))
    assert_same(e.info, t.info)
    assert_same(e.L[0], t.L[0])


# --- cholesky_solve and triangular_solve (torch.*, legacy) ---------------------------------

@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=str)
@pytest.mark.parametrize("b_shape, batch", [((4, 3), ()), ((2, 4, 2), ()), ((4, 1), (3,)),
                                            ((2, 1, 4, 2), (3,))], ids=str)
def test_cholesky_solve_matches_torch_with_gradients(b_shape, batch, dtype, upper):
    # torch's potrs is two triangular solves, as ember's: BLAS rounding, assert_same's tolerance
    a = spd(4, batch, dtype)
    fac_e = L.cholesky(ember.tensor(a), upper=upper).detach().numpy()
    check_op(lambda b, f: ember.cholesky_solve(b, f, upper),
             lambda b, f: torch.cholesky_solve(b, f, upper), rand_array(b_shape, dtype, seed=1),
             fac_e)
    b = rand_array(b_shape, dtype, seed=1)
    x = ember.cholesky_solve(ember.tensor(b), ember.tensor(fac_e), upper)
    assert_same(ember.tensor(a) @ x, torch.tensor(b).expand(tuple(x.shape)))  # A X = B


def test_cholesky_solve_gradient_fills_both_triangles_like_torch():
    # potrs reads one triangle, but torch's gradient for the factor is that of (L L^H)^-1 B
    # with L full: finite differences agree with it only for B and the read triangle
    f = L.cholesky(ember.tensor(spd(3))).detach()
    check_grads(lambda b: ember.cholesky_solve(b, f), rand_array((3, 2), np.float64))
    fe = f.clone().requires_grad_()
    ft = torch.tensor(f.numpy()).requires_grad_()
    b = rand_array((3, 2), np.float64, seed=4)
    ember.cholesky_solve(ember.tensor(b), fe).sum().backward()
    torch.cholesky_solve(torch.tensor(b), ft).sum().backward()
    assert_same(fe.grad, ft.grad)
    assert np.triu(fe.grad.numpy(), 1).any()
    b = ember.tensor(rand_array((3, 2), np.float64))
    assert np.array_equal(b.cholesky_solve(f).numpy(), ember.cholesky_solve(b, f).numpy())


@pytest.mark.parametrize("unitriangular", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("upper", [True, False])
def test_triangular_solve_matches_torch(upper, transpose, unitriangular):
    a = wellcond(4, (2,))
    b = rand_array((3, 1, 4, 2), np.float64, seed=1)  # (batches broadcast: (3, 2))
    kw = dict(upper=upper, transpose=transpose, unitriangular=unitriangular)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        got = ember.triangular_solve(ember.tensor(b), ember.tensor(a), **kw)
    want = torch.triangular_solve(torch.tensor(b), torch.tensor(a), **kw)
    assert type(got).__name__ == "triangular_solve"
    assert_same(got.solution, want.solution)
    assert_same(got.cloned_coefficient, want.cloned_coefficient)  # (broadcast over the batch)
    check_op(lambda x, y: ember.triangular_solve(x, y, **kw).solution,
             lambda x, y: torch.triangular_solve(x, y, **kw).solution, b, a)


@pytest.mark.parametrize("call", [
    lambda m, b, a: m.cholesky_solve(b[0, 0], a),
    lambda m, b, a: m.cholesky_solve(b, a[0, 0]),
    lambda m, b, a: m.cholesky_solve(b.float(), a),
    lambda m, b, a: m.cholesky_solve(b, a[:, :3]),
    lambda m, b, a: m.cholesky_solve(b[:, :3], a),
    lambda m, b, a: m.triangular_solve(b[0, 0], a),
    lambda m, b, a: m.triangular_solve(b, a[0, 0]),
    lambda m, b, a: m.triangular_solve(b, a.float()),
    lambda m, b, a: m.triangular_solve(b[:, :2], a),
], ids=range(9))
def test_legacy_solve_errors_as_torch(call):
    a, b = ember.tensor(wellcond(4, (2,))), ember.tensor(rand_array((2, 4, 2), np.float64))
    same_message(lambda m: call(m, *(x if m is ember else torch.tensor(x.numpy())
                                     for x in (b, a))))


def test_legacy_solves_refuse_integers_and_half_as_torch():
    for name in ("cholesky_solve", "triangular_solve"):
        for d in ("int64", "float16"):
            same_message(lambda m, name=name, d=d: getattr(m, name)(
                m.ones(3, 2, dtype=getattr(m, d)), m.ones(3, 3, dtype=getattr(m, d))),
                NotImplementedError)


# singular matrices whose LU has a zero pivot: PyTorch's det is det(P) * prod(diag U) and its
# slogdet sign det(P) * prod(sgn(diag U)), so a zero keeps the sign of the other factors
# (NumPy's sign * exp(logdet) always gives +0)
SINGULAR = [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]],
            [[-1.0, 2.0], [-2.0, 4.0]], [[2.0, 1.0], [4.0, 2.0]],
            [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, -1.0]]]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("transpose", [False, True])
def test_det_and_slogdet_keep_the_sign_of_a_zero_determinant(transpose, dtype):
    for m in SINGULAR:
        out = []
        for lib in (ember, torch):
            a = lib.tensor(m, dtype=getattr(lib, dtype))
            a = a.mT if transpose else a  # (a row-major real A is factored as A^T)
            out.append((lib.linalg.det(a), lib.linalg.slogdet(a).sign))
        for e, t in zip(out[0], out[1]):
            # exact: zero is zero, its sign is the point
            assert_same(e, t)
            assert np.signbit(e.numpy().real) == np.signbit(t.numpy().real), m
            assert np.signbit(e.numpy().imag) == np.signbit(t.numpy().imag), m


def test_det_sign_of_zero_in_a_batch():
    a = np.array([SINGULAR[0], [[1.0, 0.0], [0.0, 2.0]], SINGULAR[1]])
    for fn in (lambda lib, x: lib.linalg.det(x), lambda lib, x: lib.linalg.slogdet(x).sign):
        e, t = fn(ember, ember.tensor(a)).numpy(), fn(torch, torch.tensor(a)).numpy()
        np.testing.assert_array_equal(e, t)
        np.testing.assert_array_equal(np.signbit(e), np.signbit(t))


# Batches that do not broadcast: PyTorch's broadcast message, B's (or the tolerance's) size
# named first, lstsq's A's; never NumPy's ValueError from inside a kernel.
_BATCH_CLASH = {
    "solve": lambda L, A, B: L.linalg.solve(A, B),
    "solve left=False": lambda L, A, B: L.linalg.solve(A, B.mT, left=False),
    "solve_ex": lambda L, A, B: L.linalg.solve_ex(A, B),
    "solve_triangular": lambda L, A, B: L.linalg.solve_triangular(A, B, upper=True),
    "solve_triangular right": lambda L, A, B: L.linalg.solve_triangular(A, B.mT, upper=False,
                                                                          left=False),
    "triangular_solve": lambda L, A, B: L.triangular_solve(B, A),
    "cholesky_solve": lambda L, A, B: L.cholesky_solve(B, A),
    "lu_solve": lambda L, A, B: L.linalg.lu_solve(*L.linalg.lu_factor(A), B),
    "ldl_solve": lambda L, A, B: L.linalg.ldl_solve(*L.linalg.ldl_factor(A), B),
    "lstsq": lambda L, A, B: L.linalg.lstsq(A, B),
    "pinv atol": lambda L, A, B: L.linalg.pinv(A, atol=B[..., 0, 0]),
    "matrix_rank atol": lambda L, A, B: L.linalg.matrix_rank(A, atol=B[..., 0, 0]),
}


@pytest.mark.parametrize("name", list(_BATCH_CLASH))
@pytest.mark.parametrize("batches", [((3,), (4,)), ((2, 3), (2, 4)), ((3, 1), (2, 4))],
                         ids=str)
def test_batches_that_do_not_broadcast(name, batches):
    a = wellcond(2, batches[0])
    b = rand_array(batches[1] + (2, 1), np.float64, seed=1)
    msg = same_message(lambda lib: _BATCH_CLASH[name](lib, lib.tensor(a), lib.tensor(b)))
    assert "must match the size of tensor b" in msg


_SINGULAR_EX = [np.ones((2, 2)), np.ones((3, 3)), [[1.0, 2.0], [2.0, 4.0]], np.zeros((2, 2)),
                [[0.0, 1.0], [0.0, 1.0]], [[1.0, 2, 3], [2, 4, 6], [1, 1, 1]]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
@pytest.mark.parametrize("k", range(len(_SINGULAR_EX)))
def test_ex_variants_run_on_through_a_zero_pivot(k, dtype):
    # getrf + getrs divide by the zero pivot (inf, -inf, nan) rather than stop: PyTorch
    # returns that, not nan throughout; exact, as it is the same few operations
    a = np.asarray(_SINGULAR_EX[k], dtype)
    n = a.shape[-1]
    for fn in (lambda L, x: L.linalg.inv_ex(x),
               lambda L, x: L.linalg.solve_ex(x, L.arange(1.0, n + 1, dtype=x.dtype)),
               lambda L, x: L.linalg.solve_ex(x[None].expand(2, n, n),
                                              L.ones(2, n, 1, dtype=x.dtype))):
        e, t = fn(ember, ember.tensor(a)), fn(torch, torch.tensor(a))
        assert_same(e.info, t.info)
        np.testing.assert_array_equal(e[0].numpy(), t[0].numpy())


def test_inv_ex_keeps_good_matrices_and_their_gradients():
    a = np.stack([wellcond(2), np.ones((2, 2))])
    e = L.inv_ex(ember.tensor(a, requires_grad=True))
    t = TL.inv_ex(torch.tensor(a, requires_grad=True))
    assert_same(e.info, t.info)
    assert_same(e.inverse[0], t.inverse[0])
    np.testing.assert_array_equal(e.inverse[1].detach().numpy(), t.inverse[1].detach().numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.logdet(m.ones(3)), lambda m: m.logdet(m.ones(2, 3)),
    lambda m: m.logdet(m.ones(3, dtype=m.int64)), lambda m: m.logdet(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.logdet(m.ones(2, 2).half()),
    lambda m: m.linalg.lstsq(m.ones(3, dtype=m.int64), m.ones(3)),
    lambda m: m.linalg.lstsq(m.ones(3), m.ones(3, 2)),
    lambda m: m.linalg.lstsq(m.ones(3, 2), m.tensor(1.0)),
    lambda m: m.linalg.lstsq(m.ones(3, 2, dtype=m.int64), m.tensor(1)),
])
def test_rank_errors_in_torchs_words(call):
    # logdet and lstsq check the rank first, under their own names
    same_message(call)


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
def test_left_false_solves_name_one_node_as_torch():
    a = rand_array((3, 3), np.float64) + 3 * np.eye(3)
    b = rand_array((2, 3), np.float64, seed=1)

    def names(m):
        A = m.tensor(a, requires_grad=True)
        B = m.tensor(b)
        outs = [m.linalg.solve(A, B, left=False), m.linalg.solve_ex(A, B, left=False)[0],
                m.linalg.solve_triangular(A, B, upper=True, left=False),
                *m.triangular_solve(B.mT, A)]
        return [type(t.grad_fn).__name__ for t in outs]

    assert names(ember) == names(torch)
    check_op(lambda A, B: L.solve(A, B, left=False), lambda A, B: TL.solve(A, B, left=False),
             a, b)


@pytest.mark.parametrize("driver", ["gelsd", "gelss", "gels"])
def test_lstsq_residuals_differentiate_under_torchs_node(driver):
    a, b = rand_array((5, 2), np.float64), rand_array((5, 1), np.float64, seed=1)
    check_op(lambda A, B: L.lstsq(A, B, driver=driver).residuals,
             lambda A, B: TL.lstsq(A, B, driver=driver).residuals, a, b)
    names = [type(m.linalg.lstsq(m.tensor(a, requires_grad=True), m.tensor(b),
                                 driver=driver).residuals.grad_fn).__name__
             for m in (ember, torch)]
    assert names[0] == names[1]


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lstsq_empty_residuals_belong_to_the_node_like_torchs(driver, dtype):
    # gelsy (and a square A) gives no residuals: torch's empty tensor still comes out of
    # LinalgLstsqBackward0 (requires_grad, real dtype), so print(r) shows its grad_fn
    a, b = rand_array((2, 4, 3), dtype), rand_array((2, 4, 2), dtype, seed=1)
    if driver == "gelsd":
        a = a[:, :3]
        b = b[:, :3]
    got = []
    for m in (ember, torch):
        r = m.linalg.lstsq(m.tensor(a, requires_grad=True), m.tensor(b), driver=driver)
        assert tuple(r.residuals.shape) == (0,)
        got.append((r.residuals.requires_grad, type(r.residuals.grad_fn).__name__,
                    str(r.residuals.dtype).split(".")[-1],
                    repr(r.residuals).replace("ember.", "torch.")))
    assert got[0] == got[1]
    r = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver).residuals
    assert not r.requires_grad and r.grad_fn is None


@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
def test_lstsq_under_vmap_and_nested_vmap_matches_torch(driver):
    # rank and singular values are worked on the whole batch's values, as torch's batched
    # LAPACK call sees them (they used to read a BatchedTensor's storage and fail)
    a, b = rand_array((2, 5, 4, 3), np.float64), rand_array((2, 5, 4, 2), np.float64, seed=1)
    got = []
    for m in (ember, torch):
        def f(x, y, m=m):
            return tuple(m.linalg.lstsq(x, y, driver=driver))

        one = m.func.vmap(f)(m.tensor(a[0]), m.tensor(b[0]))
        two = m.func.vmap(m.func.vmap(f))(m.tensor(a), m.tensor(b))
        moved = m.func.vmap(f, in_dims=(2, None))(m.tensor(a[0]).permute(1, 2, 0),
                                                 m.tensor(b[0, 0]))
        got.append([[tuple(t.shape) for t in r] + [r[2].tolist()] for r in (one, two, moved)]
                   + [[t.numpy() for t in r] for r in (one, two, moved)])
    assert got[0][:3] == got[1][:3]
    for ours, theirs in zip(got[0][3:], got[1][3:]):
        for o, t in zip(ours, theirs):
            # LAPACK's SVD/QR in another order: a few float64 ulps
            np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)
