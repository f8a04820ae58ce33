"""torch.backends.cudnn's flags: set, read and restored as PyTorch's CPU build does."""

from __future__ import annotations

import pytest
import torch

import ember


def _flags(L) -> tuple:
    c = L.backends.cudnn
    return c.enabled, c.benchmark, c.deterministic, c.allow_tf32, c.benchmark_limit


def test_flags_context_sets_then_restores_as_torch():
    for L in (ember, torch):
        L.backends.cudnn.benchmark = True
    try:
        seen = []
        for L in (ember, torch):
            with L.backends.cudnn.flags(enabled=False, deterministic=True, allow_tf32=False):
                inside = _flags(L)
            seen.append((inside, _flags(L)))
        assert seen[0] == seen[1]
        assert seen[1][0][:4] == (False, False, True, False) and seen[1][1][1] is True
    finally:
        for L in (ember, torch):
            L.backends.cudnn.benchmark = False


def test_set_flags_returns_the_previous_flags_as_torch():
    got = []
    for L in (ember, torch):
        before = L.backends.cudnn.set_flags(False, True)
        after = L.backends.cudnn.set_flags(*before)
        got.append((before, after, _flags(L)))
    assert got[0] == got[1]


@pytest.mark.parametrize("flag", ["enabled", "benchmark", "deterministic", "allow_tf32"])
@pytest.mark.parametrize("bad", [1, None])
def test_flags_refuse_a_non_bool_as_torch(flag, bad):
    from helpers import same_message

    before = getattr(ember.backends.cudnn, flag)
    same_message(lambda L: setattr(L.backends.cudnn, flag, bad))
    assert getattr(ember.backends.cudnn, flag) is before
