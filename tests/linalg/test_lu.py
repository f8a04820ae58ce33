"""ember.linalg.lu / lu_factor / lu_factor_ex, torch.lu and torch.lu_unpack against PyTorch.

LU with partial pivoting is unique once the pivot rule is fixed (the first entry of largest
magnitude, as LAPACK's getrf), so P, L, U, the packed LU and the pivots are compared directly,
for square, wide, tall and batched inputs; gradients flow through L and U (and the packed
LU) into one VJP, compared with torch's and with finite differences.
"""

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L

from helpers import assert_same, check_grads, check_op, rand_array, same_error, same_message

TL = torch.linalg
pytestmark = [pytest.mark.filterwarnings("ignore:torch.lu is deprecated"),
              pytest.mark.filterwarnings("ignore:torch.lu_solve is deprecated")]
SHAPES = [(4, 4), (3, 5), (5, 3), (2, 4, 4), (2, 1, 5, 3)]


def tol(dtype):
    return {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu(shape, dtype):
    a = rand_array(shape, dtype)
    check_op(lambda x: tuple(L.lu(x)), lambda x: tuple(TL.lu(x)), a, **tol(dtype))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_factor_and_unpack(shape):
    a = rand_array(shape, np.float64, seed=3)
    check_op(lambda x: tuple(L.lu_factor(x)), lambda x: tuple(TL.lu_factor(x)), a,
             check_stride=True)
    check_op(lambda x: tuple(ember.lu_unpack(*L.lu_factor(x))),
             lambda x: tuple(torch.lu_unpack(*TL.lu_factor(x))), a)
    check_op(lambda x: tuple(ember.lu(x)), lambda x: tuple(torch.lu(x)), a)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)], ids=str)
def test_finite_differences(shape):
    w = rand_array(shape, np.float64, seed=5)

    def f(x):
        P, Lo, U = L.lu(x)
        return (Lo @ U * ember.tensor(w)) + Lo.sum() + U.sum()

    check_grads(f, rand_array(shape, np.float64, seed=4))


def test_singular_input():
    a = np.zeros((2, 3, 3))
    a[1] = np.eye(3)
    a[0, 0, 0] = 1
    for call in (lambda T: T.linalg.lu_factor(T.tensor(a)),
                 lambda T: T.linalg.lu_factor(T.ones(2, 3)),
                 lambda T: T.linalg.lu_factor_ex(T.tensor(a), check_errors=True),
                 lambda T: T.linalg.lu_factor(T.tensor(a), pivot=False)):
        same_error(call)
    with pytest.raises(RuntimeError) as t_info:
        TL.lu_factor(torch.tensor(a))
    with pytest.raises(RuntimeError) as e_info:
        L.lu_factor(ember.tensor(a))
    assert str(e_info.value) == str(t_info.value)
    assert_same(L.lu_factor_ex(ember.tensor(a)).info, TL.lu_factor_ex(torch.tensor(a)).info)
    assert_same(tuple(L.lu(ember.tensor(a))), tuple(TL.lu(torch.tensor(a))))
    assert_same(tuple(ember.lu(ember.tensor(a), get_infos=True)),
                tuple(torch.lu(torch.tensor(a), get_infos=True)))


@pytest.mark.parametrize("call", [
    lambda T: T.linalg.lu(T.ones(3)),
    lambda T: T.linalg.lu_factor(T.ones(3, 3, dtype=T.int64)),
    lambda T: T.linalg.lu(T.ones(3, 3), pivot=False),
], ids=["1-d", "int", "no-pivot"])
def test_errors(call):
    same_error(call)


def test_meta_shapes():
    for shape in [(3, 4), (2, 5, 3)]:
        e = L.lu(ember.empty(*shape, device="meta"))
        t = TL.lu(torch.empty(*shape, device="meta"))
        assert [x.shape for x in e] == [x.shape for x in t]
        assert L.lu_factor(ember.empty(*shape, device="meta")).pivots.shape == \
            TL.lu_factor(torch.empty(*shape, device="meta")).pivots.shape


def _well_conditioned(shape, dtype, seed=0):
    """A random square batch plus n on the diagonal: its solves stay accurate to ~1e-13."""
    a = rand_array(shape, dtype, seed=seed)
    return a + shape[-1] * np.eye(shape[-1], dtype=dtype)


@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=str)
@pytest.mark.parametrize("a_shape, b_shape", [((4, 4), (4, 3)), ((2, 4, 4), (4, 2)),
                                              ((3, 3), (2, 3, 3)), ((2, 1, 3, 3), (5, 3, 3))],
                         ids=str)
def test_lu_solve_matches_torch_with_gradients(a_shape, b_shape, dtype, left, adjoint):
    # values through LAPACK (torch's getrs) and ember's two triangular solves: BLAS-level
    # rounding, so assert_same's float64 tolerance; the gradient reaches LU through the
    # triangles the solves read, as torch's formula does
    a = _well_conditioned(a_shape, dtype)
    b = rand_array(b_shape, dtype, seed=1)
    if not left:
        b = np.swapaxes(b, -1, -2).copy()
    lu_e, piv_e = L.lu_factor(ember.tensor(a))
    lu_t, piv_t = TL.lu_factor(torch.tensor(a))
    check_op(lambda lu, bb: L.lu_solve(lu, piv_e, bb, left=left, adjoint=adjoint),
             lambda lu, bb: TL.lu_solve(lu, piv_t, bb, left=left, adjoint=adjoint),
             lu_e.numpy(), b)


def test_lu_solve_finite_differences_and_legacy_forms():
    a = _well_conditioned((3, 3), np.float64)
    lu, piv = L.lu_factor(ember.tensor(a))
    # (C order: numeric_grad perturbs its arrays through reshape(-1), a copy for LAPACK's
    # column-major LU)
    check_grads(lambda m, bb: L.lu_solve(m, piv, bb, adjoint=True), np.ascontiguousarray(lu),
                rand_array((3, 2), np.float64, seed=2))
    b = rand_array((3, 2), np.float64, seed=3)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        got = ember.lu_solve(ember.tensor(b), lu, piv)
    assert_same(got, torch.linalg.lu_solve(*TL.lu_factor(torch.tensor(a)), torch.tensor(b)))
    assert np.array_equal(ember.tensor(b).lu_solve(lu, piv).numpy(), got.numpy())


@pytest.mark.parametrize("call", [
    lambda m, lu, piv, b: m.linalg.lu_solve(lu, piv.long(), b),
    lambda m, lu, piv, b: m.linalg.lu_solve(lu, piv, b[0]),
    lambda m, lu, piv, b: m.linalg.lu_solve(lu, piv, b[:2]),
    lambda m, lu, piv, b: m.linalg.lu_solve(lu, piv, b, left=False),
    lambda m, lu, piv, b: m.linalg.lu_solve(lu, piv[:2], b),
    lambda m, lu, piv, b: m.linalg.lu_solve(lu, piv, b.float()),
    lambda m, lu, piv, b: m.linalg.lu_solve(lu[:, :2], piv, b),
])
def test_lu_solve_errors_as_torch(call):
    a, b = _well_conditioned((3, 3), np.float64), rand_array((3, 2), np.float64)
    same_message(lambda m: call(m, *m.linalg.lu_factor(m.tensor(a)), m.tensor(b)))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (0, 3, 3)], ids=str)
def test_lu_of_empty_matrices(shape):
    a = np.zeros(shape)
    assert_same(L.lu_factor(ember.tensor(a)), TL.lu_factor(torch.tensor(a)))
    assert_same(L.lu_factor_ex(ember.tensor(a)), TL.lu_factor_ex(torch.tensor(a)))
    assert_same(L.lu(ember.tensor(a)), TL.lu(torch.tensor(a)))


@pytest.mark.parametrize("pivots", [[4, 4, 4], [0, 1, 2], [-1, 2, 3]], ids=str)
def test_lu_unpack_refuses_pivots_out_of_range(pivots):
    a = _well_conditioned((3, 3), np.float64)
    same_message(lambda m: m.lu_unpack(m.linalg.lu_factor(m.tensor(a))[0],
                                       m.tensor(pivots, dtype=m.int32)))


def test_lu_unpack_wants_int32_pivots_only_to_unpack_them():
    a = _well_conditioned((3, 3), np.float64)
    same_message(lambda m: m.lu_unpack(*(lambda lu, p: (lu, p.long()))(
        *m.linalg.lu_factor(m.tensor(a)))))
    got = ember.lu_unpack(*(lambda lu, p: (lu, p.long()))(*L.lu_factor(ember.tensor(a))),
                          unpack_pivots=False)
    want = torch.lu_unpack(*(lambda lu, p: (lu, p.long()))(*TL.lu_factor(torch.tensor(a))),
                           unpack_pivots=False)
    assert_same(got, want)


def test_composites_name_their_node_as_torch():
    a = _well_conditioned((3, 3), np.float64)
    b = rand_array((3, 2), np.float64, seed=1)

    def names(m):
        A = m.tensor(a, requires_grad=True)
        B = m.tensor(b)
        LU, piv = m.linalg.lu_factor(A)
        return ([type(t.grad_fn).__name__ for t in m.linalg.lu(A)[1:]]
                + [type(t.grad_fn).__name__ for t in m.lu_unpack(LU, piv)[1:]]
                + [type(m.linalg.lu_solve(LU, piv, B, **kw).grad_fn).__name__
                   for kw in ({}, {"adjoint": True})]
                + [type(m.linalg.lu_solve(LU, piv, B.mT, left=False).grad_fn).__name__])

    assert names(ember) == names(torch)
