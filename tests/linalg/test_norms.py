"""ember.linalg norms and rank against PyTorch: vector_norm, matrix_norm (every ord), norm's
dispatch between the two, matrix_rank (tolerances, hermitian), errors and meta tensors."""

import math

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L

from helpers import assert_same, check_grads, check_op, rand_array, same_message

TL = torch.linalg
INF = math.inf


@pytest.mark.parametrize("ord", [2, 1, 0, INF, -INF, 3, 0.5, -1], ids=str)
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)],
                         ids=str)
def test_vector_norm(ord, dim, keepdim):
    check_op(lambda x: L.vector_norm(x, ord, dim, keepdim),
             lambda x: TL.vector_norm(x, ord, dim, keepdim), rand_array((2, 3, 4)))


def test_vector_norm_dtypes():
    check_op(lambda x: L.vector_norm(x), lambda x: TL.vector_norm(x),
             rand_array((3, 4), np.complex64))
    check_op(lambda x: L.vector_norm(x, dtype=ember.float64),
             lambda x: TL.vector_norm(x, dtype=torch.float64), rand_array((3, 4)))
    check_op(lambda x: L.vector_norm(x, 2, -1), lambda x: TL.vector_norm(x, 2, -1),
             rand_array((3, 4), np.float16), grad=False)


def test_vector_norm_of_zero_vector_has_zero_gradient():
    check_op(lambda x: L.vector_norm(x), lambda x: TL.vector_norm(x), np.zeros((3,), np.float32))


def test_two_norm_gradient_is_g_times_x_over_the_norm_as_torchs():
    """PyTorch's ord-2 derivative is g * (x / n), x / n set to +0.0 where the norm is 0: a
    zero row's elements, -0.0 among them, take g's sign; elsewhere the bits of that order
    (worked here from ember's own norms in NumPy; torch's norms may differ in the last bit,
    a vectorised sum of squares)."""
    x0 = rand_array((6, 33), np.float32)
    x0[0] = 0.0
    x0[0, 3] = -0.0
    g0 = rand_array((6,), np.float32, seed=1)
    g0[0] = -1.0
    res = {}
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        n = lib.linalg.vector_norm(x, dim=1)
        n.backward(lib.tensor(g0))
        res[lib.__name__] = x.grad.numpy(), n.detach().numpy()
    got, n = res["ember"]
    with np.errstate(invalid="ignore"):
        want = g0[:, None] * np.where(n[:, None] == 0, np.float32(0), x0 / n[:, None])
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(res["torch"][0][0]))
    assert np.signbit(got[0]).all()
    np.testing.assert_allclose(got, res["torch"][0], rtol=2e-6)  # (the norms' last bits)


MATRIX_ORDS = ["fro", "nuc", 2, -2, 1, -1, INF, -INF]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm(ord, keepdim):
    a = rand_array((2, 4, 3), np.float64)
    check_op(lambda x: L.matrix_norm(x, ord, keepdim=keepdim),
             lambda x: TL.matrix_norm(x, ord, keepdim=keepdim), a)
    check_op(lambda x: L.matrix_norm(x, ord, dim=(2, 0), keepdim=keepdim),
             lambda x: TL.matrix_norm(x, ord, dim=(2, 0), keepdim=keepdim), a)


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm_float32_and_finite_differences(ord):
    check_op(lambda x: L.matrix_norm(x, ord), lambda x: TL.matrix_norm(x, ord),
             rand_array((3, 3)), rtol=1e-5, atol=1e-6)
    check_grads(lambda x: L.matrix_norm(x, ord), rand_array((3, 4), np.float64))


NORM_CALLS = {
    "default_flattens": lambda m, x: m.linalg.norm(x),
    "ord_vector": lambda m, x: m.linalg.norm(x[0, 0], 3),
    "ord_matrix": lambda m, x: m.linalg.norm(x[0], "nuc"),
    "ord_matrix_inf": lambda m, x: m.linalg.norm(x[0], INF),
    "dim_int": lambda m, x: m.linalg.norm(x, dim=1),
    "dim_pair": lambda m, x: m.linalg.norm(x, 2, dim=(0, 2), keepdim=True),
    "dim_one_tuple": lambda m, x: m.linalg.norm(x, 1, dim=(-1,)),
    "dtype": lambda m, x: m.linalg.norm(x, dtype=m.float64),
}


@pytest.mark.parametrize("call", NORM_CALLS, ids=str)
def test_norm_dispatch(call):
    check_op(lambda x: NORM_CALLS[call](ember, x), lambda x: NORM_CALLS[call](torch, x),
             rand_array((2, 3, 4)))


ERRORS = {
    "vector_int": lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.int64)),
    "vector_inf_empty": lambda m: m.linalg.vector_norm(m.zeros(0), INF),
    "matrix_1d": lambda m: m.linalg.matrix_norm(m.ones(3)),
    "matrix_ord": lambda m: m.linalg.matrix_norm(m.ones(3, 3), 3),
    "matrix_dim": lambda m: m.linalg.matrix_norm(m.ones(3, 3), dim=(0,)),
    "norm_str_one_dim": lambda m: m.linalg.norm(m.ones(3, 3), "fro", dim=0),
    "norm_3d_ord": lambda m: m.linalg.norm(m.ones(3, 3, 3), 2),
    "norm_dims": lambda m: m.linalg.norm(m.ones(3, 3, 3), dim=(0, 1, 2)),
    "rank_int": lambda m: m.linalg.matrix_rank(m.ones(3, 3, dtype=m.int64)),
}


@pytest.mark.parametrize("case", ERRORS, ids=str)
def test_errors_match_torch(case):
    with pytest.raises(Exception) as t_info:
        ERRORS[case](torch)
    with pytest.raises(Exception) as e_info:
        ERRORS[case](ember)
    assert type(e_info.value) is type(t_info.value)
    assert str(e_info.value) == str(t_info.value)


def test_matrix_rank():
    full = rand_array((2, 5, 3), np.float64)
    low = rand_array((5, 2), np.float64) @ rand_array((2, 4), np.float64, seed=1)
    for a in (full, low, np.zeros((3, 3)), np.zeros((2, 0, 3))):
        check_op(L.matrix_rank, TL.matrix_rank, a, grad=False)
    check_op(lambda x: L.matrix_rank(x, atol=1.0), lambda x: TL.matrix_rank(x, atol=1.0), full,
             grad=False)
    check_op(lambda x: L.matrix_rank(x, rtol=0.5), lambda x: TL.matrix_rank(x, rtol=0.5), full,
             grad=False)
    sym = low @ low.T
    check_op(lambda x: L.matrix_rank(x, hermitian=True),
             lambda x: TL.matrix_rank(x, hermitian=True), sym, grad=False)


META = {
    "vector_norm": lambda m, x: m.linalg.vector_norm(x, 3, dim=(0, 2)),
    "matrix_fro": lambda m, x: m.linalg.matrix_norm(x, keepdim=True),
    "matrix_nuc": lambda m, x: m.linalg.matrix_norm(x, "nuc"),
    "matrix_inf": lambda m, x: m.linalg.matrix_norm(x, INF),
    "matrix_rank": lambda m, x: m.linalg.matrix_rank(x),
}


@pytest.mark.parametrize("case", META, ids=str)
def test_meta(case):
    e = META[case](ember, ember.empty(2, 3, 4, device="meta"))
    t = META[case](torch, torch.empty(2, 3, 4, device="meta"))
    assert e.device.type == "meta"
    assert_same(e, t)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, INF, -INF], ids=str)
def test_cond(p):
    a = rand_array((2, 3, 3), np.float64) + 2 * np.eye(3)
    spectral = p in (None, 2, -2)
    # NOTE: torch 2.13's own backward fails for the norm-based p (an in-place op in its cond).
    check_op(lambda x: L.cond(x, p), lambda x: TL.cond(x, p), a, grad=spectral)
    if not spectral:
        check_grads(lambda x: L.cond(x, p), a[0])


def test_cond_rectangular_spectral():
    check_op(L.cond, TL.cond, rand_array((4, 3), np.float64))


@pytest.mark.parametrize("p", ["fro", 1, -1, INF, -INF], ids=str)
def test_cond_singular_is_inf(p):
    # a batch with an exactly singular matrix (LU finds a zero pivot) and a zero matrix
    # (0 * inf): both inf, as PyTorch, next to a regular one; exact small-integer values
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 0.0], [0.0, 4.0]]])
    e, t = L.cond(ember.tensor(a), p), TL.cond(torch.tensor(a), p)
    assert e.tolist() == t.tolist()
    assert math.isinf(e[0].item()) and math.isinf(e[1].item())


@pytest.mark.parametrize("a", [[[2.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]],
                               [[2.0, 0.0], [0.0, 4.0]], [[1.0, 2.0], [3.0, -4.0]]], ids=str)
def test_cond_nuc_is_taken_from_the_singular_values(a):
    # torch: sum(s) * sum(1 / s), so an exactly singular matrix gives inf and a zero one nan
    # (0 * inf), not the inverse's inf the other orders give
    e, t = L.cond(ember.tensor(a), "nuc"), TL.cond(torch.tensor(a), "nuc")
    assert_same(e, t, rtol=1e-6)  # (one SVD, float32: a few ulps)


def test_cond_nuc_gradient():
    check_op(lambda x: L.cond(x, "nuc"), lambda x: TL.cond(x, "nuc"),
             rand_array((2, 3, 3), np.float64))


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, INF, -INF], ids=str)
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)], ids=str)
def test_cond_of_an_empty_matrix_is_zero(shape, p):
    for d in ("float32", "complex64", "float16", "int64"):
        e = L.cond(ember.zeros(shape, dtype=getattr(ember, d)), p)
        t = TL.cond(torch.zeros(shape, dtype=getattr(torch, d)), p)
        assert_same(e, t)


def test_cond_of_an_empty_matrix_checks_order_and_shape_first():
    same_message(lambda lib: lib.linalg.cond(lib.zeros(0, 0), 3))
    same_message(lambda lib: lib.linalg.cond(lib.zeros(0, 3), "fro"))
    for p in ("fro", "abc", 1):
        same_message(lambda lib, p=p: lib.linalg.cond(lib.zeros(0, dtype=lib.int64), p))


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0), (2, 0, 3), (0, 2, 2)], ids=str)
def test_matrix_norm_of_empty_matrices(shape, ord):
    # torch: a positive order's norm of an empty matrix is 0; a negative one's (a minimum
    # over nothing) raises, as amin does
    try:
        t = TL.matrix_norm(torch.zeros(shape), ord)
    except IndexError:
        same_message(lambda lib: lib.linalg.matrix_norm(lib.zeros(shape), ord), IndexError)
        return
    assert_same(L.matrix_norm(ember.zeros(shape), ord), t)
    assert_same(L.norm(ember.zeros(shape), ord, dim=(-2, -1), keepdim=True),
                TL.norm(torch.zeros(shape), ord, dim=(-2, -1), keepdim=True))


@pytest.mark.parametrize("ord", ["fro", None, [2]], ids=str)
def test_vector_norm_order_must_be_a_number(ord):
    same_message(lambda lib: lib.linalg.vector_norm(lib.ones(3), ord=ord), TypeError)


@pytest.mark.parametrize("ord", [None, [1]], ids=str)
def test_matrix_norm_order_type_error(ord):
    msgs = [str(pytest.raises(TypeError, lib.linalg.matrix_norm, lib.ones(2, 2), ord=ord).value)
            for lib in (ember, torch)]
    assert msgs[0].splitlines()[0] == msgs[1].splitlines()[0]


def test_matrix_norm_takes_a_0d_tensor_order():
    assert_same(L.matrix_norm(ember.eye(2) * 3, ember.tensor(1.0)),
                TL.matrix_norm(torch.eye(2) * 3, torch.tensor(1.0)))


D3 = np.diag([10.0, 1.0, 1e-3])


@pytest.mark.parametrize("call", [
    lambda lib, A: lib.linalg.matrix_rank(A, 0.01),
    lambda lib, A: lib.linalg.matrix_rank(A, 0.01, True),
    lambda lib, A: lib.linalg.matrix_rank(A, 2),
    lambda lib, A: lib.linalg.matrix_rank(A, tol=0.5, hermitian=True),
    lambda lib, A: lib.linalg.matrix_rank(A, lib.tensor([1e-2, 2.0], dtype=lib.float64)),
    lambda lib, A: lib.linalg.pinv(A, 0.01),
    lambda lib, A: lib.linalg.pinv(A, 0.01, True),
    lambda lib, A: lib.linalg.pinv(A, True),
    lambda lib, A: lib.linalg.pinv(A, rcond=0.5, hermitian=True),
    lambda lib, A: lib.linalg.pinv(A, rcond=lib.tensor([1e-2, 0.5], dtype=lib.float64)
                                   .view(2, 1, 1)),
])
def test_legacy_tolerance_overloads(call):
    # torch's older overloads: matrix_rank(A, tol, hermitian) with an absolute tol, and
    # pinv(A, rcond, hermitian) with a relative rcond
    assert_same(call(ember, ember.tensor(D3)), call(torch, torch.tensor(D3)))


@pytest.mark.parametrize("call", [
    lambda lib, A: lib.linalg.matrix_rank(A, None),
    lambda lib, A: lib.linalg.matrix_rank(A, 0.5, rtol=0.1),
    lambda lib, A: lib.linalg.matrix_rank(A, tol=None, atol=0.5),
    lambda lib, A: lib.linalg.matrix_rank(A, tol=0.5, rtol=0.1),
    lambda lib, A: lib.linalg.matrix_rank(A, "a"),
    lambda lib, A: lib.linalg.matrix_rank([[1.0]]),
    lambda lib, A: lib.linalg.pinv(A, None),
    lambda lib, A: lib.linalg.pinv(A, 1, rtol=0.1),
    lambda lib, A: lib.linalg.pinv(A, 0.1, 1),
    lambda lib, A: lib.linalg.matrix_rank(A, 1, 0.5),
    lambda lib, A: lib.linalg.pinv(A, rcond=1e-2, rtol=0.1),
    lambda lib, A: lib.linalg.pinv(A, rcond=None),
    lambda lib, A: lib.linalg.pinv([[1.0]]),
])
def test_legacy_tolerance_overload_errors(call):
    msgs = [str(pytest.raises(TypeError, call, lib, lib.tensor(D3)).value) for lib in
            (ember, torch)]
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("kw", [{}, {"hermitian": True}, {"atol": 1.0}], ids=str)
def test_matrix_rank_of_a_vector(kw):
    same_message(lambda lib: lib.linalg.matrix_rank(lib.ones(3), **kw))
    same_message(lambda lib: lib.linalg.matrix_rank(lib.ones(3, dtype=lib.int64), **kw))
    same_message(lambda lib: lib.linalg.matrix_rank(lib.ones(2, 3), hermitian=True))


@pytest.mark.parametrize("p,shape", [(1, (2, 3)), (1.0, (2, 3)), (INF, (2, 3)), (-INF, (3, 2)),
                                     ("fro", (2, 3)), ("nuc", (2, 3)), (3, (2, 2)),
                                     ("abc", (2, 2)), (None, (3,)), (1, (3,)), ("nuc", (3,))],
                         ids=str)
def test_cond_errors(p, shape):
    same_message(lambda lib: lib.linalg.cond(lib.ones(*shape), p))


def test_cond_rank_checked_before_dtype():
    for p in (None, 1, "nuc"):
        same_message(lambda lib, p=p: lib.linalg.cond(lib.ones(3, dtype=lib.int64), p))


@pytest.mark.parametrize("call", [
    lambda m, A, o: m.linalg.cond(A, out=o), lambda m, A, o: m.linalg.cond(A, "nuc", out=o),
    lambda m, A, o: m.linalg.matrix_norm(A, 2, out=o),
    lambda m, A, o: m.linalg.matrix_norm(A, "fro", out=o),
    lambda m, A, o: m.linalg.matrix_norm(A, 1, out=o),
    lambda m, A, o: m.linalg.norm(A, "nuc", out=o), lambda m, A, o: m.linalg.norm(A, out=o),
])
def test_composite_out_with_grad_is_a_recorded_copy(call):
    # torch composes these of other ops: out= copies the result into `out` (CopyBackwards),
    # where a primitive's out= refuses a result that needs grad
    a = rand_array((3, 3), np.float64) + 3 * np.eye(3)
    got = []
    for m in (ember, torch):
        A, o = m.tensor(a, requires_grad=True), m.empty((), dtype=m.float64)
        r = call(m, A, o)
        assert r is o
        (g,) = m.autograd.grad(o, A)
        got.append((type(o.grad_fn).__name__, o.detach().numpy(), g.numpy()))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-9, atol=1e-12)  # (SVD grads)
