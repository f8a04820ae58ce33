"""ember.linalg.tensorinv / tensorsolve against PyTorch: shapes, values (through LAPACK's
getrf/getri/getrs: assert_same's float64 tolerance), gradients and errors."""

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L

from helpers import assert_same, check_grads, check_op, rand_array, same_message

TL = torch.linalg


def _square_ish(shape, ind, seed=0):
    """A random tensor whose matrix reading (first `ind` dims by the rest) is well
    conditioned: that matrix plus n times the identity."""
    a = rand_array(shape, np.float64, seed=seed)
    n = int(np.prod(shape[:ind]))
    return (a.reshape(n, -1) + n * np.eye(n)).reshape(shape)


@pytest.mark.parametrize("shape, ind", [((4, 6, 8, 3), 2), ((6, 2, 3), 1), ((2, 3, 6), 2),
                                        ((5, 5), 1)], ids=str)
def test_tensorinv_matches_torch(shape, ind):
    a = _square_ish(shape, ind)
    check_op(lambda x: L.tensorinv(x, ind=ind), lambda x: TL.tensorinv(x, ind=ind), a)
    x = L.tensorinv(ember.tensor(a), ind=ind)
    eye = ember.tensordot(x, ember.tensor(a), ind)
    n = int(np.prod(shape[ind:]))
    assert_same(eye.reshape(n, n), torch.eye(n, dtype=torch.float64))


@pytest.mark.parametrize("a_shape, b_shape, dims", [
    ((6, 4, 2, 3, 4), (6, 4), None), ((2, 6, 3, 4, 4), (6, 4), (0, 2)),
    ((3, 3), (3,), None), ((2, 3, 6), (6,), (0, 1)),
], ids=str)
def test_tensorsolve_matches_torch(a_shape, b_shape, dims):
    a = rand_array(a_shape, np.float64)
    moved = a if dims is None else np.moveaxis(a, dims, range(a.ndim - len(dims), a.ndim))
    m = int(np.prod(b_shape))
    flat = moved.reshape(m, -1) + m * np.eye(m)  # (well conditioned once read as a matrix)
    moved = flat.reshape(moved.shape)
    a = moved if dims is None else np.moveaxis(moved, range(a.ndim - len(dims), a.ndim), dims)
    check_op(lambda x, y: L.tensorsolve(x, y, dims=dims),
             lambda x, y: TL.tensorsolve(x, y, dims=dims), a, rand_array(b_shape, np.float64))


def test_tensor_solvers_finite_differences():
    check_grads(lambda x: L.tensorinv(x, ind=1), _square_ish((4, 2, 2), 1))
    check_grads(lambda x, y: L.tensorsolve(x, y), _square_ish((2, 3, 6), 2),
                rand_array((2, 3), np.float64))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=0),
    lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=1),
    lambda m: m.linalg.tensorsolve(m.ones(6, 4, 2, 3, 5), m.ones(6, 4)),
    lambda m: m.linalg.tensorsolve(m.ones(6, 4, 2, 3, 4), m.ones(6, 5)),
    lambda m: m.linalg.tensorinv(m.zeros(2, 2), ind=1),
], ids=range(5))
def test_tensor_solvers_errors_as_torch(call):
    same_message(call, Exception)
