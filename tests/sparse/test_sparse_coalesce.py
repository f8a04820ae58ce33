"""coalesce() against torch: duplicates are added one after another in the order PyTorch's
unstable sort of the flat coordinates leaves them, so a sum of many float32 duplicates has
torch's last bits (sequential scalar adds: exact comparisons, no vector path involved)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")


@pytest.mark.parametrize("nnz,rows,dense", [(3000, 40, ()), (3000, 40, (3,)), (12, 3, ()),
                                            (500, 7, (2,)), (40000, 30, ())])
def test_coalesce_sums_duplicates_in_torch_order(nnz, rows, dense):
    rng = np.random.default_rng(nnz + rows)
    idx = np.stack([rng.integers(0, rows, nnz), rng.integers(0, 3, nnz)])
    vals = rng.standard_normal((nnz,) + dense).astype(np.float32)
    e = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (rows, 3) + dense)
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (rows, 3) + dense)
    ec, tc = e.coalesce(), t.coalesce()
    assert ec._indices().tolist() == tc._indices().tolist()
    assert np.array_equal(ec._values().numpy(), tc._values().numpy())


def test_sparse_embedding_gradient_coalesced_as_torch():
    def grad(L):
        L.manual_seed(0)
        e = L.nn.Embedding(5, 4, sparse=True)
        ids = L.tensor(np.random.default_rng(1).integers(0, 5, 400))
        (e(ids) * L.linspace(-1, 1, 400)[:, None]).sum().backward()
        return e.weight.grad.coalesce()._values().numpy()

    assert np.array_equal(grad(ember), grad(torch))
