"""The in-place evaluation of ops/registry.py against PyTorch: the shape refusal of an op
whose kernel runs before the result's shape is checked (masked_fill_ and its neighbours)."""

import pytest

from helpers import same_message, same_result


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).masked_fill_(L.ones(3, dtype=L.bool), 0.0),
    lambda L: L.ones(2, 3).masked_fill_(L.ones(3, 2, dtype=L.bool), 0.0),
    lambda L: L.ones(2).masked_fill_(L.ones(3, dtype=L.bool), L.tensor(0.0)),
], ids=["1d", "2d", "tensor_value"])
def test_operands_that_do_not_broadcast_fail_as_out_of_place(call):
    # NOTE: PyTorch computes the broadcast shape first: operands that do not broadcast at
    # all fail with "The size of tensor a ..."; ember used to report it as a result larger
    # than self ("output with shape [2] doesn't match the broadcast shape [3]").
    same_message(call)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).masked_fill_(L.ones(4, 2, dtype=L.bool), 0.0),
    lambda L: L.ones(2, 1).masked_fill_(L.ones(3, dtype=L.bool), 0.0),
], ids=["more_dims", "wider"])
def test_a_broadcast_larger_than_self_keeps_the_in_place_message(call):
    assert "doesn't match the broadcast shape" in same_message(call)


def test_mask_that_broadcasts_into_self_still_fills():
    same_result(lambda L: L.zeros(2, 3).masked_fill_(L.tensor([True, False, True]), 5.0))
