"""What an optimizer says about a `params` argument that is not an iterable of tensors or
groups, against torch (optim/optimizer.py)."""

import pytest

from helpers import same_message


@pytest.mark.parametrize("make,kind", [
    (lambda L: L.nn.Linear(1, 1), TypeError),          # the module itself, not .parameters()
    (lambda L: 3, TypeError),
    (lambda L: L.nn.Linear(1, 1).weight, TypeError),   # one tensor
    (lambda L: [], ValueError),
    (lambda L: [{"params": {L.nn.Parameter(L.ones(1))}}], TypeError),  # a set in a group
])
def test_bad_params_argument_as_torch(make, kind):
    msg = same_message(lambda L: L.optim.SGD(make(L), lr=0.1), kind)
    assert msg


def test_a_module_is_not_iterable_in_pythons_words():
    assert same_message(lambda L: L.optim.Adam(L.nn.Linear(1, 1)), TypeError) == \
        "'Linear' object is not iterable"
