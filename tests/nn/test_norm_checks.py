"""group_norm's and instance_norm's checks of their weight and bias against torch's words.

# NOTE: until nn/_functional/layers.py calls these checks, the tests compare the checks'
# errors with the ones torch's functional raises for the same arguments.
"""

import pytest
import torch
import torch.nn.functional as F

import ember
from ember.nn._functional.norm_checks import (
    check_group_norm_affine,
    check_instance_norm_affine,
)

SHAPE = (2, 8, 4, 4)
AFFINES = [((6,), None), (None, (6,)), ((2, 4), None), ((8,), (2, 4)), ((8,), (6,)),
           ((7,), (2, 4)), ((), None)]


def vec(lib, shape):
    return None if shape is None else lib.ones(shape)


def torch_error(call) -> str:
    with pytest.raises(RuntimeError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("weight,bias", AFFINES)
def test_group_norm_affine_of_the_wrong_size(weight, bias):
    expected = torch_error(lambda: F.group_norm(torch.zeros(SHAPE), 4, vec(torch, weight),
                                                vec(torch, bias)))
    with pytest.raises(RuntimeError) as info:
        check_group_norm_affine(ember.zeros(SHAPE), vec(ember, weight), vec(ember, bias))
    assert str(info.value) == expected


@pytest.mark.parametrize("weight,bias", AFFINES)
def test_instance_norm_affine_of_the_wrong_size(weight, bias):
    expected = torch_error(lambda: F.instance_norm(torch.zeros(SHAPE), weight=vec(torch, weight),
                                                   bias=vec(torch, bias)))
    x, w, b = ember.zeros(SHAPE), vec(ember, weight), vec(ember, bias)
    with pytest.raises(RuntimeError) as info:
        check_instance_norm_affine(x, w, b, repeated=False)
        check_instance_norm_affine(x, w, b, repeated=True)
    assert str(info.value) == expected


def test_affines_of_one_value_per_channel_pass():
    x = ember.zeros(SHAPE)
    check_group_norm_affine(x, ember.ones(8), ember.zeros(8))
    check_group_norm_affine(x, None, None)
    for repeated in (False, True):
        check_instance_norm_affine(x, ember.ones(8), ember.zeros(8), repeated=repeated)
