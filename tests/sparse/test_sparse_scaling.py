"""A sparse tensor scaled by a scalar, in place and not (mul_, div, div_), against torch:
the values bit for bit (one correctly rounded op each), the pattern kept, the version
bumped; and SGD's sparse momentum buffer, which is scaled in place every step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

IDX = [[0, 1, 1, 2], [2, 0, 2, 0]]
VAL = [1.0, 0.1, 0.7, 3.3]


def _sparse(L, coalesce: bool):
    s = L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL), (3, 3))
    return s.coalesce() if coalesce else s


@pytest.mark.parametrize("op", [
    lambda s: s / 3,            # a true division, not a product with 1/3
    lambda s: s.div(0.7),
    lambda s: s.div_(3.0),
    lambda s: s.mul_(0.9),
    lambda s: s.__imul__(3),
])
@pytest.mark.parametrize("coalesce", [False, True])
def test_scalar_scaling_matches_torch_bits(op, coalesce):
    t, e = op(_sparse(torch, coalesce)), op(_sparse(ember, coalesce))
    assert e.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_array_equal(e._values().numpy(), t._values().numpy())


def test_in_place_scaling_returns_self_and_bumps_the_version():
    s = _sparse(ember, True)
    before = s._version
    assert s.mul_(2.0) is s and s._version == before + 1


def test_sgd_momentum_on_sparse_gradients():
    rows = []
    for L in (torch, ember):
        table = L.nn.Embedding(6, 3, sparse=True)
        with L.no_grad():
            table.weight.copy_(L.arange(18.0).reshape(6, 3) / 7)
        opt = L.optim.SGD(table.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        for ids in ([1, 2, 1], [2, 4], [1]):
            opt.zero_grad()
            table(L.tensor(ids)).pow(2).sum().backward()
            opt.step()
        assert opt.state[table.weight]["momentum_buffer"].is_sparse
        rows.append(table.weight.detach().numpy())
    # (elementwise float32 steps: the same ops in the same order, but the buffer's
    # duplicate rows are summed in another order than torch's coalesce: a tolerance)
    np.testing.assert_allclose(rows[1], rows[0], rtol=1e-6)
