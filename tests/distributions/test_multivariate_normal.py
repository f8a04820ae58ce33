"""MultivariateNormal against torch.distributions.MultivariateNormal for each of the three
parameterisations, with batch broadcasting between loc and the matrix, and gradients with
respect to loc and the matrix (covariance inputs symmetrised so both sides see the same
function)."""

import numpy as np
import pytest

from helpers import check_dist, rand_array

N = 3
LOC = rand_array((2, N), np.float64)
A = rand_array((N, N), np.float64, seed=1)
SPD = A @ A.T + N * np.eye(N)
TRIL = np.tril(A) + 3 * np.eye(N)
VALUE = rand_array((4, 2, N), np.float64, seed=2)
ATTRS = ["mean", "variance", "entropy", "covariance_matrix", "scale_tril",
         "precision_matrix", ("log_prob", VALUE), ("rsample", (5,))]


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_parameterisations(kind):
    def make(D, loc, m):
        m = (m + m.mT) / 2 if kind != "scale_tril" else m.tril()
        return D.MultivariateNormal(loc, **{kind: m})

    check_dist(make, ATTRS, LOC, TRIL if kind == "scale_tril" else SPD, rtol=1e-8, atol=1e-10)


def test_batched_matrix_and_shapes():
    import ember

    m = np.stack([SPD, 2 * SPD])
    d = ember.distributions.MultivariateNormal(ember.tensor(LOC[0]), ember.tensor(m))
    assert d.batch_shape == (2,) and d.event_shape == (N,)
    assert d.sample((4,)).shape == (4, 2, N)
    check_dist(lambda D, loc, c: D.MultivariateNormal(loc, (c + c.mT) / 2),
               [("log_prob", VALUE), "entropy"], LOC[0], m)


@pytest.mark.parametrize("kind", ["covariance_matrix", "scale_tril"])
def test_precision_matrix_comes_from_cholesky_inverse_of_the_factor(kind):
    # torch forms the precision as cholesky_inverse(scale_tril): the same node chain, and
    # values within float64 rounding of torch's (LAPACK's potri vs ember's composition).
    import torch

    import ember

    m = SPD if kind == "covariance_matrix" else TRIL
    chains, values = [], []
    for lib in (ember, torch):
        mat = lib.tensor(m, requires_grad=True)
        p = lib.distributions.MultivariateNormal(lib.zeros(N, dtype=lib.float64),
                                                 **{kind: mat}).precision_matrix
        chains.append((type(p.grad_fn).__name__,
                       type(p.grad_fn.next_functions[0][0]).__name__))
        (g,) = lib.autograd.grad((p * lib.tensor(TRIL)).sum(), mat)
        values.append((p.detach().numpy(), g.numpy()))
    assert chains[0] == chains[1] == ("ExpandBackward0", "CholeskyInverseBackward0")
    for got, want in zip(*values):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
