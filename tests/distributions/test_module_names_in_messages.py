"""Messages that name a class by its module path say `ember.` normally and `torch.` once
ember.compat is installed (ember._names.prefix), so that a PyTorch program run through
ember.run prints exactly what it prints under PyTorch."""

import pytest
import torch

import ember
from ember import _names

CALLS = [
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Normal(0.0, 1.0),
                                                L.distributions.Normal(L.zeros(3), 1.0)),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(3)), 3),
]


def _message(call, lib) -> str:
    with pytest.raises(ValueError) as info:
        call(lib)
    return str(info.value)


@pytest.mark.parametrize("call", CALLS, ids=["mixture", "component"])
@pytest.mark.parametrize("prefix", ["ember", "torch"])
def test_mixture_messages_name_the_public_module(call, prefix, monkeypatch):
    monkeypatch.setattr(_names, "prefix", prefix)
    expected = _message(call, torch).replace("torch.", f"{prefix}.")
    assert f"{prefix}.distributions." in expected
    assert _message(call, ember) == expected
