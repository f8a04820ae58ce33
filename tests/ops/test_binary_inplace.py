"""In-place binary ops (binary_inplace.py) against PyTorch: the order of their refusals on
integer and bool tensors."""

import pytest

from helpers import same_message, same_result


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([True, False]).pow_(-1),
    lambda L: L.tensor([3, 2], dtype=L.int8).pow_(-1),
    lambda L: L.tensor([3, 2], dtype=L.uint8).pow_(-2),
    lambda L: L.tensor([True]).pow_(L.tensor([-1])),
    lambda L: L.tensor([True]).pow_(2),
    lambda L: L.tensor([True]).pow_(2.0),
    lambda L: L.tensor([3], dtype=L.int16).pow_(1.5),
])
def test_pow_refusals_in_torch_order(call):
    # NOTE: PyTorch refuses a negative integer exponent before it checks that the result
    # (int64 for a bool tensor) can be written back into the tensor.
    same_message(call)


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([3, 2], dtype=L.int8).pow_(L.tensor(-1)),
    lambda L: L.tensor([3, 2, 7], dtype=L.int8).pow_(3),
    lambda L: L.tensor([3, 2, 7], dtype=L.uint8).pow_(L.tensor([1, 2, 3], dtype=L.uint8)),
])
def test_integer_pow_in_place_like_torch(call):
    # (an exponent tensor of -1 is no Python number: PyTorch's kernel gives 3 ** -1 == 0)
    same_result(call)
