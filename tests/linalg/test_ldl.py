"""linalg.ldl_factor / ldl_factor_ex / ldl_solve against torch 2.13 (MKL's sytrf/sytrs)."""

import numpy as np
import pytest
import torch

import ember


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


def _matrices(seed, n, complex_=False, batch=()):
    g = torch.Generator().manual_seed(seed)
    dtype = torch.complex128 if complex_ else torch.float64
    A = torch.randn(batch + (n, n), dtype=dtype, generator=g)
    if seed % 3 == 0:  # small diagonals force 2x2 pivots and interchanges
        A = A - torch.diag_embed(A.diagonal(0, -2, -1) * 0.99)
    return A


CASES = [(seed, n) for seed in range(12) for n in (1, 2, 3, 5, 8)] + [(0, 70)]


@pytest.mark.parametrize("seed,n", CASES)
@pytest.mark.parametrize("kind", ["real", "complex", "hermitian"])
def test_factor_pivots_and_values(seed, n, kind):
    A = _matrices(seed, n, kind != "real")
    herm = kind == "hermitian"
    t = torch.linalg.ldl_factor_ex(A, hermitian=herm)
    e = ember.linalg.ldl_factor_ex(E(A), hermitian=herm)
    # the pivots are LAPACK's decisions: equal; the factors agree to rounding (MKL's blocked
    # updates sum in another order): 1e-12 of the largest entry
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    assert e.pivots.dtype == ember.int32 and e.info.dtype == ember.int32
    assert int(e.info) == int(t.info)
    scale = max(1.0, float(t.LD.abs().max()))
    np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy(), rtol=0, atol=1e-12 * scale)
    assert repr(e).startswith("ember.return_types.linalg_ldl_factor_ex(")


@pytest.mark.parametrize("kind", ["real", "complex", "hermitian"])
def test_solve_batched(kind):
    A = _matrices(4, 5, kind != "real", batch=(3,))
    herm = kind == "hermitian"
    g = torch.Generator().manual_seed(9)
    B = torch.randn(3, 5, 2, dtype=A.dtype, generator=g)
    LD, piv = torch.linalg.ldl_factor(A, hermitian=herm)
    t = torch.linalg.ldl_solve(LD, piv, B, hermitian=herm)
    eLD, epiv = ember.linalg.ldl_factor(E(A), hermitian=herm)
    e = ember.linalg.ldl_solve(eLD, epiv, E(B), hermitian=herm)
    # NOTE: well-conditioned 5x5 systems, different summation order: 1e-12 relative
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
    e_from_torch = ember.linalg.ldl_solve(E(LD[0]), E(piv[0]), E(B[0]), hermitian=herm)
    np.testing.assert_allclose(e_from_torch.numpy(), t[0].numpy(), rtol=1e-12, atol=1e-12)


def test_singular_and_no_derivative():
    t = torch.linalg.ldl_factor_ex(torch.zeros(2, 2))
    e = ember.linalg.ldl_factor_ex(ember.zeros(2, 2))
    assert int(e.info) == int(t.info) == 1
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    with pytest.raises(RuntimeError) as want:
        torch.linalg.ldl_factor(torch.zeros(2, 2))
    with pytest.raises(RuntimeError) as got:
        ember.linalg.ldl_factor(ember.zeros(2, 2))
    assert str(got.value) == str(want.value)
    A = ember.randn(3, 3, requires_grad=True)
    LD = ember.linalg.ldl_factor(A).LD
    assert type(LD.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex"):
        LD.sum().backward()


def test_errors():
    cases = [((torch.randn(3, 3).half(),), {}), ((torch.randn(3),), {}),
             ((torch.randn(3, 3).long(),), {}), ((torch.randn(2, 3),), {})]
    for args, kw in cases:
        with pytest.raises(Exception) as want:
            torch.linalg.ldl_factor(*args, **kw)
        with pytest.raises(type(want.value)) as got:
            ember.linalg.ldl_factor(*(E(a) for a in args), **kw)
        assert str(got.value) == str(want.value)
    LD, p = torch.linalg.ldl_factor(torch.randn(3, 3))
    for args in [(LD, p, torch.randn(3)), (LD, p, torch.randn(3, 1).double()),
                 (LD[:2], p, torch.randn(3, 1)), (LD, p, torch.randn(2, 1))]:
        with pytest.raises(Exception) as want:
            torch.linalg.ldl_solve(*args)
        with pytest.raises(type(want.value)) as got:
            ember.linalg.ldl_solve(*(E(a) for a in args))
        assert str(got.value) == str(want.value)
