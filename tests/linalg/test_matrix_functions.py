"""linalg.matrix_exp and linalg.householder_product against torch: values, gradients."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_ulp, check_grads, check_op, rand_array, same_error, same_message


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


# One matrix per Taylor degree of PyTorch's matrix_exp (1, 2, 4, 8, 12, 18, 18 with two
# squarings), as the 1-norm of a rotation generator times `scale`, in float32 and float64.
_DEGREE_SCALES = [1e-8, 3e-4, 0.03, 0.4, 1.2, 2.5, 10.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", _DEGREE_SCALES)
def test_matrix_exp_follows_torchs_taylor_polynomials(scale, dtype):
    # PyTorch's float32 bounds admit errors of ~1e-5 (exp of a 10-radian rotation is 150
    # float32 ulps from the exact one): an exact-to-rounding exponential does not print the
    # same digits, the same polynomials do
    a = (np.array([[0.3, -1.0, 0.2], [1.0, 0.1, -0.4], [-0.2, 0.4, -0.1]]) * scale / 1.6)
    a = a.astype(dtype)
    got = ember.linalg.matrix_exp(ember.tensor(a))
    want = torch.linalg.matrix_exp(torch.tensor(a))
    # (a Pade approximant lands 5-13 float32 ulps away at 0.4, 1.2 and 10, and ~1e4
    # float64 ulps at 0.03, measured in ulps of the largest entry)
    assert_ulp(got, want, 8 if scale == 10.0 else 4,
               "the polynomials are sums of BLAS products (their last bits are the CPU's), "
               "and two squarings double any difference twice",
               scale=np.abs(want.numpy()).max())


def test_matrix_exp_batch_of_mixed_norms_keeps_its_order():
    # each matrix takes its own degree (and squarings); the results come back in batch order
    base = rand_array((4, 3, 3), np.float64, seed=5)
    a = base * np.array([1e-3, 5.0, 0.2, 40.0])[:, None, None]
    got = ember.linalg.matrix_exp(ember.tensor(a).reshape(2, 2, 3, 3))
    want = torch.linalg.matrix_exp(torch.tensor(a).reshape(2, 2, 3, 3))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=0)
    for i in range(4):  # the batch computes each matrix as it would alone
        alone = ember.linalg.matrix_exp(ember.tensor(a[i]))
        np.testing.assert_array_equal(got.reshape(4, 3, 3)[i].numpy(), alone.numpy())


def test_matrix_exp_checks_aliases_and_low_precision():
    assert "2 dimensions" in same_message(lambda L: L.linalg.matrix_exp(L.ones(3)))
    same_message(lambda L: L.linalg.matrix_exp(L.ones(2, 2, dtype=L.int64)))
    a = rand_array((2, 3, 3), np.float32, seed=7)
    for call in (lambda L, x: L.matrix_exp(x), lambda L, x: x.matrix_exp()):
        np.testing.assert_array_equal(call(ember, ember.tensor(a)).numpy(),
                                      ember.linalg.matrix_exp(ember.tensor(a)).numpy())
        assert torch.equal(call(torch, torch.tensor(a)), torch.linalg.matrix_exp(torch.tensor(a)))
    # NOTE: PyTorch's CPU matrix_exp of float16 returns inf (its kernel reads float64
    # coefficients as half); ember computes in float32 and rounds once
    half = ember.linalg.matrix_exp(ember.tensor(a).half())
    assert half.dtype == ember.float16
    np.testing.assert_array_equal(
        half.numpy(), ember.linalg.matrix_exp(ember.tensor(a).half().float()).half().numpy())



@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=str)
@pytest.mark.parametrize("scale", [1e-3, 0.2, 1.0, 5.0])
def test_matrix_exp_gradient_is_torchs_frechet_rule(scale, dtype):
    # PyTorch's VJP is exp([[A^H, G], [0, A^H]])'s top-right block, the polynomial picked
    # for that block's norm (differentiating the polynomial picked for A is off by ~1e-4)
    a = (rand_array((2, 3, 3), dtype, seed=11) * scale).astype(dtype)
    big = float(np.exp(2 * np.abs(a).sum(-2).max()))  # gradients grow like exp(2|A|)
    tol = dict(rtol=1e-4, atol=1e-5 * big) if dtype == np.float32 else \
        dict(rtol=1e-10, atol=1e-12 * big)
    check_op(ember.linalg.matrix_exp, torch.linalg.matrix_exp, a, grad_rtol=tol["rtol"],
             grad_atol=tol["atol"], **tol)


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (2, 2), (3, 2, 2)], ids=str)
def test_matrix_exp_node_is_torchs_and_not_a_view(shape):
    a = ember.arange(float(np.prod(shape))).reshape(shape).mul(0.1).requires_grad_()
    t = torch.arange(float(np.prod(shape))).reshape(shape).mul(0.1).requires_grad_()
    for fn in (lambda L, x: L.linalg.matrix_exp(x), lambda L, x: L.matrix_exp(x),
               lambda L, x: x.matrix_exp()):
        e, w = fn(ember, a), fn(torch, t)
        assert type(e.grad_fn).__name__ == type(w.grad_fn).__name__ == "LinalgMatrixExpBackward0"
        assert e._is_view() == w._is_view() is False
        assert e.stride() == w.stride()


def test_matrix_exp_double_backward_and_forward_mode_match_torch():
    a = rand_array((3, 3), np.float64, seed=12)
    v = rand_array((3, 3), np.float64, seed=13)
    outs = []
    for L in (ember, torch):
        x = L.tensor(a, requires_grad=True)
        (g,) = L.autograd.grad((L.linalg.matrix_exp(x) ** 2).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad((g * L.tensor(v)).sum(), x)
        _, tangent = L.func.jvp(L.linalg.matrix_exp, (L.tensor(a),), (L.tensor(v),))
        outs.append((g.detach().numpy(), gg.numpy(), tangent.numpy()))
    for e, t in zip(*outs):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)
    check_grads(ember.linalg.matrix_exp, a, rtol=1e-6)
    batched = ember.func.vmap(ember.linalg.matrix_exp)(ember.tensor(np.stack([a, 0.1 * v])))
    np.testing.assert_allclose(batched.numpy(), torch.linalg.matrix_exp(
        torch.tensor(np.stack([a, 0.1 * v]))).numpy(), rtol=1e-12, atol=1e-14)

def test_orgqr_is_householder_product():
    a = rand_array((5, 3), np.float64, seed=3)
    tau = rand_array((2,), np.float64, 0.5, 1.5, seed=4)
    check_op(lambda x, t: ember.orgqr(x, t), lambda x, t: torch.orgqr(x, t), a, tau)
    check_op(lambda x, t: x.orgqr(t), lambda x, t: x.orgqr(t), a, tau)
    same_error(lambda L: L.linalg.householder_product(L.eye(3, dtype=L.float16),
                                                      L.ones(2, dtype=L.float16)))


@pytest.mark.parametrize("call", [
    lambda m, A, t: m.linalg.householder_product(A, t.float()),
    lambda m, A, t: m.linalg.householder_product(A.float(), t),
    lambda m, A, t: m.linalg.householder_product(A, t.int()),
    lambda m, A, t: m.linalg.householder_product(A.long(), t),
    lambda m, A, t: m.linalg.householder_product(A, m.ones(2, 2, dtype=m.float64)),
    lambda m, A, t: m.linalg.householder_product(A.expand(2, 3, 3), t),
    lambda m, A, t: m.linalg.householder_product(A.expand(2, 3, 3),
                                                 m.ones(3, 2, dtype=m.float64)),
])
def test_householder_product_checks_tau(call):
    a, tau = rand_array((3, 3), np.float64), rand_array((2,), np.float64)
    same_message(lambda m: call(m, m.tensor(a), m.tensor(tau)))


def test_householder_product_batched_tau_matches():
    a, tau = rand_array((2, 4, 3), np.float64), rand_array((2, 2), np.float64)
    check_op(lambda A, t: ember.linalg.householder_product(A, t),
             lambda A, t: torch.linalg.householder_product(A, t), a, tau)


def test_householder_product_names_its_node_as_torch():
    a, tau = rand_array((4, 3), np.float64), rand_array((2,), np.float64)
    for fn in ("linalg.householder_product", "orgqr"):
        got = []
        for m in (ember, torch):
            f = m.linalg.householder_product if fn.startswith("linalg") else m.orgqr
            got.append(type(f(m.tensor(a, requires_grad=True), m.tensor(tau)).grad_fn).__name__)
        assert got[0] == got[1]
