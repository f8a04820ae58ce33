"""torch.empty_permuted against torch 2.13: shape, strides, dtype, leafness, errors."""

import pytest
import torch

import ember


@pytest.mark.parametrize("size,order", [((2, 3, 5, 7), (0, 2, 3, 1)), ((2, 3), (1, 0)),
                                        ((4,), (0,)), ((), ()), ((2, 0, 3), (2, 0, 1)),
                                        ([3, 1, 2], [1, 2, 0])])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_layout(size, order, dtype):
    t = torch.empty_permuted(size, order, dtype=getattr(torch, dtype))
    e = ember.empty_permuted(size, order, dtype=getattr(ember, dtype))
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    assert str(e.dtype).split(".")[1] == dtype
    assert e._base is None and e.is_leaf


def test_requires_grad():
    e = ember.empty_permuted((2, 3), (1, 0), requires_grad=True)
    assert e.requires_grad and e.is_leaf and e.grad_fn is None


@pytest.mark.parametrize("args", [((2, 3), (0,)), ((2, 3), (0, 0)), ((2, 3), (0, 2)),
                                  ((2, 3), (0, -1)), ((2, -1), (0, 1)), (2, (0,))])
def test_errors(args):
    with pytest.raises(Exception) as want:
        torch.empty_permuted(*args)
    with pytest.raises(type(want.value)) as got:
        ember.empty_permuted(*args)
    assert str(got.value) == str(want.value)
