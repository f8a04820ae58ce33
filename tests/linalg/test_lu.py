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

from helpers import assert_same, check_grads, check_op, rand_array, same_error

TL = torch.linalg
pytestmark = pytest.mark.filterwarnings("ignore:torch.lu is deprecated")
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
