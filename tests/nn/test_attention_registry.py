"""torch.nn.attention's flash-attention implementation registry, against torch 2.13."""

import pytest
import torch.nn.attention as TA

import ember.nn.attention as EA
from ember.nn.attention import _registry


class _Handle:
    def __init__(self, log):
        self.log = log

    def remove(self):
        self.log.append("removed")


@pytest.fixture(autouse=True)
def _clean_registry():
    saved = dict(_registry._IMPLS)
    yield
    _registry._IMPLS.clear()
    _registry._IMPLS.update(saved)
    _registry._active = None


def test_defaults_match():
    assert EA.list_flash_attention_impls() == TA.list_flash_attention_impls()
    assert EA.current_flash_attention_impl() is TA.current_flash_attention_impl() is None


@pytest.mark.parametrize("name", ["FA3", "FA4", "nope"])
def test_activate_unavailable(name):
    with pytest.raises(Exception) as want:
        TA.activate_flash_attention_impl(name)
    with pytest.raises(type(want.value)) as got:
        EA.activate_flash_attention_impl(name)
    assert str(got.value) == str(want.value)


def test_register_activate_restore():
    log = []
    EA.register_flash_attention_impl("Mine", register_fn=lambda: (log.append("on"),
                                                                  _Handle(log))[1])
    assert EA.list_flash_attention_impls()[-1] == "Mine"
    EA.activate_flash_attention_impl("Mine")
    assert EA.current_flash_attention_impl() == "Mine" and log == ["on"]
    EA.activate_flash_attention_impl("Mine")  # (restores the previous one first)
    assert log == ["on", "removed", "on"]
    EA.restore_flash_attention_impl()
    assert EA.current_flash_attention_impl() is None and log[-1] == "removed"
    EA.register_flash_attention_impl("NoHandle", register_fn=lambda: None)
    EA.activate_flash_attention_impl("NoHandle")
    assert EA.current_flash_attention_impl() is None
