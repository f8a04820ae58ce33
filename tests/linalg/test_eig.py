"""ember.linalg.eig / eigvals against PyTorch.

Both call LAPACK's geev, but the order of the eigenvalues and the phase of each eigenvector
are not promised across LAPACK builds, so eigenvalues are compared after sorting and
eigenvectors through |V| and the residual A V - V diag(L). Gradients are taken of losses
that do not depend on those choices, on matrices with well-separated eigenvalues.
"""

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L

from helpers import check_op, rand_array, same_error

TL = torch.linalg


def sort_complex(w: np.ndarray) -> np.ndarray:
    return np.sort_complex(w.reshape(-1, w.shape[-1])).reshape(w.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)], ids=str)
def test_eig_values_and_vectors(shape, dtype):
    a = rand_array(shape, dtype)
    w, V = L.eig(ember.tensor(a))
    wt, Vt = TL.eig(torch.tensor(a))
    assert str(w.dtype).split(".")[1] == str(wt.dtype).split(".")[1]
    assert V.stride() == Vt.stride()
    rtol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(sort_complex(w.numpy()), sort_complex(wt.numpy()), rtol=rtol,
                               atol=rtol)
    A = ember.tensor(a).to(V.dtype)
    resid = (A @ V - V * w.unsqueeze(-2)).abs().max().item()
    assert resid < rtol * 10
    np.testing.assert_allclose(V.abs().pow(2).sum(-2).numpy(), 1, rtol=rtol)
    np.testing.assert_allclose(sort_complex(L.eigvals(ember.tensor(a)).numpy()),
                               sort_complex(wt.numpy()), rtol=rtol, atol=rtol)


def _invariant_loss(T):
    def loss(x):
        w, V = T.linalg.eig(x)
        weights = w.abs().unsqueeze(-2)
        return (w * w).real.sum() + (V.abs() ** 2 * weights).sum() + w.imag.abs().sum()
    return loss


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=str)
def test_eig_gradient(dtype):
    check_op(_invariant_loss(ember), _invariant_loss(torch), rand_array((2, 4, 4), dtype),
             rtol=1e-7, atol=1e-9)


def test_eigvals_gradient():
    a = rand_array((3, 3), np.float64, seed=2)
    check_op(lambda x: L.eigvals(x).abs().sum(), lambda x: TL.eigvals(x).abs().sum(), a)
    check_op(lambda x: L.eigvals(x).real.sum(), lambda x: TL.eigvals(x).real.sum(), a)


@pytest.mark.parametrize("call", [
    lambda T: T.linalg.eig(T.ones(2, 3)),
    lambda T: T.linalg.eig(T.ones(3)),
    lambda T: T.linalg.eigvals(T.ones(2, 2, dtype=T.int64)),
    lambda T: T.linalg.eig(T.ones(2, 2, dtype=T.bfloat16)),
], ids=["not-square", "1-d", "int", "bfloat16"])
def test_errors(call):
    same_error(call)


def test_loss_depending_on_the_eigenvector_phase_is_refused():
    a = np.array([[0.0, -2.0, 0.1], [1.0, 0.0, 0.3], [0.2, 0.5, 1.0]])

    def call(T):
        x = T.tensor(a, requires_grad=True)
        V = T.linalg.eig(x).eigenvectors
        (V.real.sum() + V.imag.sum()).backward()

    same_error(call)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")], ids=str)
def test_eig_refuses_non_finite_input(bad):
    # NOTE: torch's eigvals (no vectors) checks nothing and hands LAPACK the inf / nan (a
    # garbage result or a crash); ember's refuses it with eig's message
    fn = "eig"
    msgs = []
    for lib in (ember, torch):
        a = lib.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, bad], [0.0, 1.0]]])
        with pytest.raises(RuntimeError) as info:
            getattr(lib.linalg, fn)(a)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
