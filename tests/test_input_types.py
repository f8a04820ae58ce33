"""A torch function given no tensor as its operand (a list, a number) raises PyTorch's
parser TypeError, where ember's op used to fail on an attribute of the non-tensor."""

from __future__ import annotations

import pytest

import ember

from helpers import same_message

CALLS = {
    "sum_of_list": lambda m, t: m.sum([t, t]),
    "mean_of_floats": lambda m, t: m.mean([1.0, 2.0]),
    "max_of_ints": lambda m, t: m.max([1, 2]),
    "argmax": lambda m, t: m.argmax([1, 2]),
    "softmax": lambda m, t: m.softmax([1.0, 2.0], 0),
    "cumsum": lambda m, t: m.cumsum([1, 2], 0),
    "cumsum_missing_dim": lambda m, t: m.cumsum([1, 2]),
    "numel": lambda m, t: m.numel([1]),
    "squeeze": lambda m, t: m.squeeze(1.5),
    "any": lambda m, t: m.any([True], 0),
    "all": lambda m, t: m.all(1.5),
    "std": lambda m, t: m.std(1.5),
    "var": lambda m, t: m.var([1.0]),
    "matmul": lambda m, t: m.matmul(t, [1.0]),
    "mm": lambda m, t: m.mm(t.reshape(2, 1), [1.0]),
    "mv": lambda m, t: m.mv([1.0], t),
    "dot": lambda m, t: m.dot(t, [1.0]),
    "vdot": lambda m, t: m.vdot(t, [1.0]),
    "outer": lambda m, t: m.outer(t, [1.0]),
    "inner": lambda m, t: m.inner([1.0], t),
    "allclose": lambda m, t: m.allclose(t, [1.0]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_non_tensor_operand_raises_torchs_type_error(name):
    same_message(lambda m: CALLS[name](m, m.ones(2)), TypeError)


def test_tensors_still_pass():
    t = ember.ones(2, 3)
    assert ember.sum(t, dim=1, keepdims=True).shape == (2, 1)  # (the alias wrapper too)
    assert ember.mean(input=t).item() == 1.0
