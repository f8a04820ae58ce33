"""torch.mode's index among tied values, exactly as PyTorch's CPU kernel reports it: the
last of the mode's run after libstdc++'s std::sort (unstable past 16 elements), with NaNs
that never equal one another and break the sort's ordering."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _data(shape, kind, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, size=shape)
    if kind == "int":
        return a
    a = a.astype(np.float32) - 2
    if kind == "nan":
        a[rng.random(shape) < 0.2] = np.nan
    if kind == "signed zero":
        a[a == 0] = np.where(rng.random(int((a == 0).sum())) < 0.5, -0.0, 0.0)
    return a


@pytest.mark.parametrize("kind", ["int", "float", "nan", "signed zero"])
@pytest.mark.parametrize("shape, dim", [((6, 40), 1), ((33, 5), 0), ((3, 7), -1)])
def test_mode_values_and_indices_match_torch(kind, shape, dim):
    a = _data(shape, kind, seed=sum(shape) + len(kind))
    got = ember.mode(ember.tensor(a), dim)
    want = torch.mode(torch.tensor(a), dim)
    assert_same(got.values, want.values)
    assert_same(got.indices, want.indices)
    # (a signed zero is told apart by its sign: compare the bits too)
    assert np.array_equal(np.signbit(got.values.numpy()), np.signbit(want.values.numpy()))


def test_mode_on_small_rows_with_nan():
    nan = float("nan")
    for row in ([nan, nan, 1.0], [nan, 1.0], [3.0, nan, 3.0, 1.0, 1.0], [nan, 2.0, nan, 2.0],
                [float("inf"), nan, float("inf")]):
        got, want = ember.mode(ember.tensor(row)), torch.mode(torch.tensor(row))
        assert_same(got.values, want.values)
        assert got.indices.item() == want.indices.item(), row
