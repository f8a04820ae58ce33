"""`x[..., idx]` with one 1-D integer index or bool mask is laid out as PyTorch's index
kernel lays it out (TensorIterator over the source with the indexed dim's stride 0, then
the index), so picking rows of a channels-last batch keeps it channels-last
(ops/index._take_layout)."""

import pytest
import torch

import ember


def _source(lib, form: str):
    base = lib.arange(2 * 5 * 4 * 3, dtype=lib.float32).reshape(5, 2, 4, 3)
    if form == "cl":
        return base.contiguous(memory_format=lib.channels_last)
    if form == "t2":  # a transposed matrix
        return lib.arange(30, dtype=lib.float32).reshape(6, 5).t()
    if form == "perm":  # dims stored in another order
        return base.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1)
    if form == "cl_slice":  # a channels-last view that is not dense
        return base.contiguous(memory_format=lib.channels_last)[:, :, 1:3]
    return base


KEYS = {
    "rows": lambda lib, x: x[lib.tensor([3, 0, 3, 1])],
    "one_row": lambda lib, x: x[lib.tensor([2])],
    "dim1": lambda lib, x: x[:, lib.tensor([1, 0, 1])],
    "dim2": lambda lib, x: x[:, :, lib.tensor([1, 0])],
    "last": lambda lib, x: x[..., lib.tensor([0, 0])],
    "mask0": lambda lib, x: x[lib.arange(x.shape[0]) % 2 == 0],
    "mask1": lambda lib, x: x[:, lib.arange(x.shape[1]) > 0],
}


@pytest.mark.parametrize("form", ["cl", "t2", "perm", "cl_slice", "c"])
@pytest.mark.parametrize("key", sorted(KEYS))
def test_index_result_layout_matches_torch(form, key):
    outs = []
    for lib in (torch, ember):
        x = _source(lib, form)
        if key in ("dim2", "last") and x.dim() < 3:
            pytest.skip("a key for 4-d sources")
        outs.append(KEYS[key](lib, x))
    t, e = outs
    assert e.shape == t.shape
    assert e.stride() == t.stride()
    assert e.tolist() == t.tolist()  # copies of small integers: exact


def test_pool_sample_gradient_flows_back_in_layout():
    pool = ember.zeros(4, 3, 2, 2).contiguous(memory_format=ember.channels_last)
    pool.requires_grad_(True)
    sample = pool[ember.tensor([2, 2, 0])]
    assert sample.is_contiguous(memory_format=ember.channels_last)
    (sample * ember.arange(3.0).reshape(3, 1, 1, 1)).sum().backward()
    # row 2 was picked twice (weights 0 and 1), row 0 once (weight 2)
    assert pool.grad[:, 0, 0, 0].tolist() == [2.0, 0.0, 1.0, 0.0]


def test_gather_result_is_row_major_whatever_the_index_layout():
    """Regression: gather (and take_along_dim, which runs it) laid its result out as the
    index (a transposed index gave a transposed result); torch allocates it row-major."""
    def calls(L):
        x = L.arange(12.0).reshape(3, 4)
        idx = L.tensor([[2, 1, 0], [0, 1, 3]]).t()
        return [x.gather(1, idx), L.take_along_dim(x, idx, 1),
                x.t().gather(0, L.zeros(3, 4, dtype=L.long).t())]

    for got, want in zip(calls(ember), calls(torch)):
        assert got.stride() == want.stride() and got.tolist() == want.tolist()
