"""torch._tensor_str's face: the print options programs read, save and restore."""

from __future__ import annotations

import torch
import torch._tensor_str as tts

import ember
import ember._tensor_str as ets


def _opts(mod) -> tuple:
    o = mod.PRINT_OPTS
    return o.precision, o.threshold, o.edgeitems, o.linewidth, o.sci_mode


def test_print_opts_follow_set_printoptions_as_torch():
    try:
        for kw in ({"profile": "full"}, {"profile": "short"}, {"precision": 6, "linewidth": 50},
                   {"sci_mode": True, "threshold": 7}):
            torch.set_printoptions(**kw)
            ember.set_printoptions(**kw)
            assert _opts(ets) == _opts(tts)
            assert ets.get_printoptions() == tts.get_printoptions()
            assert repr(ets.PRINT_OPTS) == repr(tts.PRINT_OPTS)
    finally:
        torch.set_printoptions(profile="default")
        ember.set_printoptions(profile="default")
    assert _opts(ets) == _opts(tts) == (4, 1000, 3, 80, None)


def test_saved_options_restore_and_the_context_manager():
    for mod, lib in ((ets, ember), (tts, torch)):
        old = mod.get_printoptions()
        lib.set_printoptions(precision=1, sci_mode=False)
        assert str(lib.tensor([1 / 3])) == "tensor([0.3])"
        lib.set_printoptions(**old)
        with mod.printoptions(precision=2):
            assert str(lib.tensor([1 / 3])) == "tensor([0.33])"
        assert mod.get_printoptions() == old
