"""linalg.matrix_exp and linalg.householder_product against torch: values, gradients."""

import numpy as np
import pytest
import torch

import ember

from helpers import check_grads, check_op, rand_array, same_error


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1e-3, 0.2, 1.0, 3.0, 8.0])
def test_matrix_exp_matches_torch(scale, dtype):
    a = (rand_array((2, 4, 4), dtype, seed=int(scale * 10)) * scale).astype(dtype)
    # values grow like exp(|A|): compare relative to that size
    big = float(np.exp(np.abs(a).sum(-2).max()))
    tol = dict(rtol=1e-4, atol=1e-5 * big) if dtype == np.float32 else \
        dict(rtol=1e-10, atol=1e-12 * big)
    check_op(ember.linalg.matrix_exp, torch.linalg.matrix_exp, a, **tol)


def test_matrix_exp_known_values_and_grad():
    # exp of a rotation generator is the rotation
    t = 0.7
    got = ember.linalg.matrix_exp(ember.tensor([[0.0, -t], [t, 0.0]], dtype=ember.float64))
    want = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-14, atol=1e-15)
    check_grads(ember.linalg.matrix_exp, rand_array((3, 3), np.float64, seed=2), rtol=1e-6)
    same_error(lambda L: L.linalg.matrix_exp(L.zeros(2, 3)))


@pytest.mark.parametrize("shape, k", [((5, 3), 3), ((4, 4), 2), ((2, 6, 4), 4)])
def test_householder_product_matches_torch(shape, k):
    a = rand_array(shape, np.float64, seed=3)
    tau = rand_array(shape[:-2] + (k,), np.float64, 0.5, 1.5, seed=4)
    check_op(ember.linalg.householder_product, torch.linalg.householder_product, a, tau)
    same_error(lambda L: L.linalg.householder_product(L.zeros(3, 4), L.zeros(2)))
