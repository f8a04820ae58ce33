"""ember.get_device_module against torch.get_device_module."""

import pytest
import torch
from tests.helpers import same_message

import ember


@pytest.mark.parametrize("arg", [None, "cpu", "cpu:0", "cuda"])
def test_the_module_of_each_device_type(arg):
    assert ember.get_device_module(arg).__name__.split(".", 1)[1] == \
        torch.get_device_module(arg).__name__.split(".", 1)[1]
    assert ember.get_device_module(ember.device("cpu")) is ember.cpu


@pytest.mark.parametrize("arg", ["meta", "foo", 3])
def test_refusals(arg):
    same_message(lambda L: L.get_device_module(arg))
