"""ember.utils.dlpack / ember.to_dlpack against torch's: legacy capsules that share memory,
both ways, writable on arrival."""

import numpy as np
import pytest
import torch
from tests.helpers import same_message

import ember


def test_to_dlpack_is_torch_utils_to_dlpack():
    assert ember.to_dlpack is ember.utils.dlpack.to_dlpack
    assert ember.utils.dlpack.from_dlpack is ember.from_dlpack


@pytest.mark.parametrize("make", [
    lambda L: L.arange(6.0).reshape(2, 3), lambda L: L.arange(6.0).reshape(2, 3).t(),
    lambda L: L.arange(8.0)[1::2], lambda L: L.tensor(3.0),
    lambda L: L.arange(4).to(L.bfloat16), lambda L: L.arange(4, dtype=L.int32),
])
def test_capsules_share_memory_and_stay_writable(make):
    # torch -> ember: a legacy capsule NumPy would import read-only
    t = make(torch)
    e = ember.from_dlpack(torch.to_dlpack(t))
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    e.add_(1)
    assert np.array_equal(e.float().numpy(), t.float().numpy())
    # ember -> torch and ember -> ember
    src = make(ember)
    back = torch.from_dlpack(ember.to_dlpack(src))
    back.add_(1)
    assert np.array_equal(src.float().numpy(), back.float().numpy())
    again = ember.from_dlpack(ember.to_dlpack(src))
    again.mul_(2)
    assert np.array_equal(src.float().numpy(), again.float().numpy())


def test_to_dlpack_exports_a_tensor_that_requires_grad():
    # unlike __dlpack__, the legacy function exports the memory of a tensor in a graph
    for L in (ember, torch):
        x = L.ones(2, requires_grad=True)
        assert L.from_dlpack(L.to_dlpack(x)).tolist() == [1.0, 1.0]


def test_empty_tensor_and_bad_argument():
    e = ember.from_dlpack(torch.to_dlpack(torch.zeros(0, 3)))
    assert tuple(e.shape) == (0, 3)
    assert same_message(lambda L: L.to_dlpack([1]), TypeError).startswith(
        "_to_dlpack(): argument 'data' (position 1) must be Tensor")
