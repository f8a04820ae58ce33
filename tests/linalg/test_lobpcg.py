"""lobpcg against torch 2.13: eigenvalues (within the iteration's tolerance), eigenvector
residuals, generalized and batched problems, eigenvalue gradients, argument checks."""

import numpy as np
import pytest
import torch

import ember

# NOTE: LOBPCG stops once each residual is below sqrt(eps) relative to ||A||; eigenvalues are
# then accurate to about that squared, but the float32 iterates of two implementations stop
# at different points: compare eigenvalues at 1e-4 (float32) / 1e-9 (float64) relative.
RTOL = {torch.float32: 1e-4, torch.float64: 1e-9}


def _spd(m, dtype, seed=0, batch=()):
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(*batch, m, m, dtype=torch.float64, generator=g))
    w = torch.linspace(1.0, float(m), m, dtype=torch.float64)
    return ((q * w) @ q.mT).to(dtype)


def _e(t):
    return None if t is None else ember.from_numpy(t.detach().numpy().copy())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("method", ["basic", "ortho"])
def test_eigenvalues_match_torch(dtype, largest, method):
    A = _spd(30, dtype)
    torch.manual_seed(0)
    E, _ = torch.lobpcg(A, k=3, largest=largest, method=method)
    eE, eX = ember.lobpcg(_e(A), k=3, largest=largest, method=method)
    assert eE.dtype == getattr(ember, str(dtype)[6:]) and tuple(eX.shape) == (30, 3)
    np.testing.assert_allclose(eE.numpy(), E.numpy(), rtol=RTOL[dtype])
    # eigenvectors: A X = X E, X orthonormal
    a, x, e = (np.asarray(t, np.float64) for t in (A.numpy(), eX.numpy(), eE.numpy()))
    assert np.abs(a @ x - x * e).max() < (1e-2 if dtype == torch.float32 else 1e-6)
    np.testing.assert_allclose(x.T @ x, np.eye(3), atol=1e-4 if dtype == torch.float32 else 1e-9)


def test_generalized_given_x_preconditioned_and_batched():
    A = _spd(24, torch.float64, 1)
    B = _spd(24, torch.float64, 2)
    X0 = torch.randn(24, 2, dtype=torch.float64)
    iK = torch.eye(24, dtype=torch.float64) * 0.5
    for kw in (dict(B=B), dict(X=X0), dict(iK=iK, k=2), dict(B=B, X=X0, largest=False)):
        E, _ = torch.lobpcg(A, **kw)
        eE, _ = ember.lobpcg(_e(A), **{k: _e(v) if isinstance(v, torch.Tensor) else v
                                       for k, v in kw.items()})
        np.testing.assert_allclose(eE.numpy(), E.numpy(), rtol=1e-9)
    Ab = _spd(15, torch.float64, 3, batch=(2,))
    E, X = torch.lobpcg(Ab, k=2)
    eE, eX = ember.lobpcg(_e(Ab), k=2)
    assert tuple(eX.shape) == tuple(X.shape) == (2, 15, 2)
    np.testing.assert_allclose(eE.numpy(), E.numpy(), rtol=1e-9)


@pytest.mark.parametrize("largest", [True, False])
def test_eigenvalue_gradients_match_torch(largest):
    A = _spd(18, torch.float64, 4)
    ta = A.clone().requires_grad_()
    ea = _e(A).requires_grad_()
    E, _ = torch.lobpcg(ta, k=2, largest=largest)
    eE, _ = ember.lobpcg(ea, k=2, largest=largest)
    w = torch.tensor([1.0, -2.0], dtype=torch.float64)
    (E * w).sum().backward()
    (eE * _e(w)).sum().backward()
    # (the gradient is X diag(w) X^T: eigenvectors both sides stopped at a residual of about
    # sqrt(eps) * ||A||, so they agree to about 1e-7)
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), atol=1e-6)


def test_eigenvectors_carry_no_gradient():
    # NOTE: torch differentiates X too (LOBPCGAutogradFunctionBackward); ember only E
    ea = _e(_spd(12, torch.float64, 5)).requires_grad_()
    E, X = ember.lobpcg(ea, k=1)
    assert E.grad_fn.name() == "LOBPCGAutogradFunctionBackward" and not X.requires_grad


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.lobpcg(L.ones(3, 4)), AssertionError),
    (lambda L: L.lobpcg(L.eye(6), B=L.eye(5)), AssertionError),
    (lambda L: L.lobpcg(L.eye(8), k=3), ValueError),
    (lambda L: L.lobpcg(L.eye(9), X=L.ones(9, 4)), ValueError),
])
def test_refusals_match_torch(call, kind):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(kind) as exc:
            call(lib)
        msgs.append(str(exc.value).replace("torch.", "").replace("ember.", ""))
    assert msgs[0] == msgs[1]
