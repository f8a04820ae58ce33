"""A Python int beyond int64 next to a tensor, against torch: PyTorch reads it as a uint64
Scalar (which wraps into int64 next to an integer tensor, and stays a number next to a
float one) and refuses ints outside [-2**63, 2**64) with its own OverflowError words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

BIG = [2 ** 63, 2 ** 64 - 1, 2 ** 63 + 12345]
OPS = {
    "add": lambda x, k: x + k,
    "rsub": lambda x, k: k - x,
    "mul": lambda x, k: x * k,
    "floordiv": lambda x, k: x // k,
    "remainder": lambda x, k: x % k,
    "lt": lambda x, k: x < k,
    "eq": lambda x, k: x == k,
    "and": lambda x, k: x & k,
    "add_": lambda x, k: x.clone().add_(k),
    "mul_": lambda x, k: x.clone().mul_(k),
}


@pytest.mark.parametrize("k", BIG)
@pytest.mark.parametrize("op", OPS, ids=list(OPS))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_uint64_scalar_wraps_next_to_integer_tensors(op, k, dtype):
    v = np.array([1, -1, 7, 0]).astype(dtype)
    try:
        want = OPS[op](torch.tensor(v), k)
    except RuntimeError as t:  # (2**63 wraps to 0 in 32 and 8 bits: a division by zero)
        with pytest.raises(RuntimeError, match=str(t)):
            OPS[op](ember.tensor(v), k)
        return
    got = OPS[op](ember.tensor(v), k)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # (integers: exact)


@pytest.mark.parametrize("op", ["add", "mul", "lt"])
def test_uint64_scalar_is_a_number_next_to_float_tensors(op):
    v = np.array([1.5, -2.0], np.float32)
    want = OPS[op](torch.tensor(v), 2 ** 64 - 1)
    got = OPS[op](ember.tensor(v), 2 ** 64 - 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # (one rounded op each)


@pytest.mark.parametrize("k", [2 ** 64, 2 ** 70, -(2 ** 63) - 1, -(2 ** 70)])
@pytest.mark.parametrize("op", ["add", "rsub", "lt", "add_"])
def test_ints_beyond_uint64_and_int64_raise_torchs_overflow(op, k):
    with pytest.raises(OverflowError) as t:
        OPS[op](torch.tensor([1, 2]), k)
    with pytest.raises(OverflowError) as e:
        OPS[op](ember.tensor([1, 2]), k)
    assert str(e.value) == str(t.value)


REFUSED = {
    # converted to the integer result's C type: refused, not wrapped
    "clamp max int64": lambda L, B: L.tensor([1, 2]).clamp(max=B),
    "clamp max int32": lambda L, B: L.tensor([1, 2], dtype=L.int32).clamp(max=2 ** 40),
    "clamp min uint8": lambda L, B: L.tensor([1, 2], dtype=L.uint8).clamp(min=-B),
    "where int8": lambda L, B: L.where(L.tensor([True, False]), L.tensor([1, 2], dtype=L.int8), B),
    "where int64": lambda L, B: L.where(L.tensor([True, False]), L.tensor([1, 2]), B),
    # the exponent is read as an int64_t
    "pow int": lambda L, B: L.tensor([1, 2]) ** B,
    "pow bool": lambda L, B: L.tensor([True]).pow(B),
    # a bool tensor cannot be promoted with a uint64 Scalar
    "bool add": lambda L, B: L.tensor([True, False]) + B,
    "bool clamp": lambda L, B: L.tensor([True]).clamp(max=B),
    "bool where": lambda L, B: L.where(L.tensor([True]), L.tensor([True]), B),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_int_the_op_converts_to_its_integer_type_is_refused_past_its_range(name):
    from helpers import same_message

    same_message(lambda L: REFUSED[name](L, 2 ** 63), RuntimeError)


def test_alpha_past_uint64_is_torchs_overflow_error():
    from helpers import same_message

    same_message(lambda L: L.tensor([1, 2]).add(1, alpha=2 ** 64), OverflowError)


def test_a_float_result_takes_the_big_int_as_a_number():
    for call in (lambda L: L.tensor([1.0, 2.0]).clamp(max=2 ** 63),
                 lambda L: L.where(L.tensor([True, False]), L.tensor([1.0, 2.0]), 2 ** 63),
                 lambda L: L.tensor([True]).clamp(max=2 ** 40)):
        assert call(ember).tolist() == call(torch).tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([3, 0, 200], dtype=L.uint8).clamp(max=-3),
    lambda L: L.tensor([3, 0, 200], dtype=L.uint8).clamp(max=-255),
    lambda L: L.tensor([3, 0, 200], dtype=L.uint8).clamp(min=-255),
    lambda L: L.where(L.tensor([True, False]), L.tensor([3, 200], dtype=L.uint8), -3),
    lambda L: L.tensor([3, 0, 100], dtype=L.int8).clamp(max=127),
], ids=["clamp max -3", "clamp max -255", "clamp min -255", "where -3", "int8 max"])
def test_an_unsigned_result_takes_negatives_down_to_minus_its_max_wrapped(call):
    """c10's overflow check lets -max..-1 into an unsigned type (two's complement)."""
    assert call(ember).tolist() == call(torch).tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([3], dtype=L.uint8).clamp(max=-256),
    lambda L: L.where(L.tensor([True]), L.tensor([3], dtype=L.uint8), -256),
    lambda L: L.tensor([3], dtype=L.int8).clamp(max=200),
    lambda L: L.tensor([3], dtype=L.int8).clamp(max=-129),
], ids=["uint8 -256", "where uint8 -256", "int8 200", "int8 -129"])
def test_past_those_limits_the_number_is_refused(call):
    from helpers import same_message

    same_message(call, RuntimeError)
