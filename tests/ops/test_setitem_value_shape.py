"""The shape check of a value written through `x[key] = value`, against torch's words.

PyTorch drops every leading size-1 dim of the value before it broadcasts it to the indexed
result, so a value of shape (1, 4, 2) may fill a (4, 2) slot, and a mismatch is reported
with the value's shape without those dims (`Tensor sizes: [4, 2]`). `index_put_` takes the
value as it is: a leading size-1 dim it does not broadcast away is an error there.
"""

import pytest
import torch

import ember

from helpers import assert_same

# (target shape, key builder (lib -> key), value shape)
CASES = [
    ((1, 4, 2), lambda L: (slice(None), slice(2, 6)), (1, 4, 2)),  # a KV cache overflow
    ((1, 4, 2), lambda L: (slice(None), L.tensor([0, 1])), (1, 3, 2)),
    ((1, 4, 2), lambda L: (slice(None), L.tensor([0, 1])), (1, 1, 3, 2)),
    ((3, 4), lambda L: slice(0, 2), (1, 1, 3, 4)),
    ((3, 4), lambda L: slice(0, 2), (1, 1, 2, 5)),
    ((3, 4), lambda L: slice(0, 2), (2, 1, 2, 4)),
    ((3, 4), lambda L: 0, (1, 1, 3)),
    ((3, 4), lambda L: L.tensor([True, False, True]), (1, 3, 4)),
    ((3, 4), lambda L: Ellipsis, (1, 3, 5)),
    ((2, 3), lambda L: (Ellipsis, 1), (1, 1, 4)),
]
FITS = [  # leading ones dropped, the rest broadcasts
    ((3, 4), lambda L: 0, (1, 1, 4)),
    ((3, 4), lambda L: slice(0, 2), (1, 1, 2, 4)),
    ((1, 4, 2), lambda L: (slice(None), slice(1, 3)), (1, 1, 2, 2)),
    ((3, 4), lambda L: L.tensor([0, 2]), (1, 2, 1)),
]


def _write(lib, shape, key, vshape):
    x = lib.zeros(shape)
    x[key(lib)] = lib.arange(float(torch.Size(vshape).numel())).reshape(vshape)
    return x


@pytest.mark.parametrize("shape,key,vshape", CASES)
def test_a_value_that_does_not_fit_is_reported_without_its_leading_ones(shape, key, vshape):
    with pytest.raises(RuntimeError) as expected:
        _write(torch, shape, key, vshape)
    with pytest.raises(RuntimeError) as got:
        _write(ember, shape, key, vshape)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("shape,key,vshape", FITS)
def test_a_value_with_extra_leading_ones_is_written(shape, key, vshape):
    # (exact: a copy)
    assert_same(_write(ember, shape, key, vshape), _write(torch, shape, key, vshape),
                rtol=0, atol=0)


PUT_VALUES = [(1, 3, 4), (1, 2, 5), (1, 1, 2, 4), (1, 4), (2, 4), (1, 5)]


@pytest.mark.parametrize("vshape", PUT_VALUES)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_keeps_the_values_leading_ones(vshape, accumulate):
    def put(lib):
        x, rows = lib.zeros(3, 4), lib.tensor([0, 1])
        return x.index_put_((rows,), lib.ones(vshape), accumulate=accumulate)

    try:
        want = put(torch)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as got:
            put(ember)
        assert str(got.value) == str(exc)
        return
    assert_same(put(ember), want, rtol=0, atol=0)  # (exact: ones written or added)
