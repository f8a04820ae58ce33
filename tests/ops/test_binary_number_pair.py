"""add/sub/mul/div/floor_divide of two numbers: PyTorch wraps them and returns a 0-d tensor
(`torch.add(1, 2.5)` is tensor(3.5000), float32; a NumPy scalar counts as the Python number
it holds). Other two-operand ops refuse two numbers (see test_arg_parser_text.py)."""

import numpy as np
import pytest
import torch

import ember

PAIRS = [(1, 1), (1.5, 2), (True, True), (np.float64(1.0), 2), (2, np.float32(1.5)),
         (1, 2.5), (1 + 2j, 1), (7, 2), (-7, 2)]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "floor_divide"])
@pytest.mark.parametrize("pair", PAIRS, ids=repr)
def test_two_numbers(op, pair):
    def run(L):
        try:
            r = getattr(L, op)(*pair)
        except (RuntimeError, NotImplementedError) as exc:  # (two bools: sub, floor_divide)
            return type(exc), str(exc)
        return r.shape, str(r.dtype).split(".")[1], r.tolist()
    # the values are single correctly-rounded operations on exact inputs: compared exactly
    assert run(ember) == run(torch)


def test_two_numbers_keyword_forms():
    assert ember.add(1, 2, alpha=3).tolist() == torch.add(1, 2, alpha=3).tolist() == 7
    assert ember.sub(1, 2, alpha=2).tolist() == torch.sub(1, 2, alpha=2).tolist() == -3
    assert ember.div(7, 2, rounding_mode="floor").tolist() == \
        torch.div(7, 2, rounding_mode="floor").tolist() == 3
