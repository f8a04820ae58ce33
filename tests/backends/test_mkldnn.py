"""torch.backends.mkldnn's flags: checked on assignment and restored by `flags`."""

from __future__ import annotations

import pytest
import torch

import ember


@pytest.mark.parametrize("flag", ["enabled", "deterministic"])
def test_flags_refuse_a_non_bool_as_torch(flag):
    from helpers import same_message

    same_message(lambda L: setattr(L.backends.mkldnn, flag, 1))
    assert getattr(ember.backends.mkldnn, flag) is getattr(torch.backends.mkldnn, flag)


def test_assigned_flag_is_read_back_and_flags_restores_it():
    got = []
    for L in (ember, torch):
        m = L.backends.mkldnn
        m.deterministic = True
        try:
            with m.flags(enabled=False):
                inside = (m.enabled, m.deterministic)
            got.append((inside, m.enabled, m.deterministic))
        finally:
            m.deterministic = False
    assert got[0] == got[1] == [((False, False), True, True)][0]


def test_writing_allow_tf32_warns_as_torch():
    import warnings

    def count(L) -> list:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with L.backends.mkldnn.flags(enabled=False):  # (writes allow_tf32=True on entry)
                pass
            L.backends.mkldnn.set_flags(None, None, False)
        return [str(w.message).split(" (Triggered")[0] for w in caught]

    # (torch's count depends on what ran before it in the process: its C++ warning reaches
    # Python through a handler pytest also hooks; a fresh `python -c` counts 2, as ember)
    assert set(count(ember)) == set(count(torch))
    assert len(count(ember)) == 2 and "Intel GPU" in count(ember)[0]
