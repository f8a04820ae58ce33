"""torch.backends.opt_einsum's `set_flags` / `flags`: checked, and restored, as PyTorch's."""

from __future__ import annotations

import pytest
import torch

import ember

from helpers import raised


def _reset(o) -> None:
    """Both libraries back at their defaults (through the checked setters)."""
    o.set_flags(o.is_available(), "auto" if o.is_available() else None)


@pytest.mark.parametrize("kw", [{"strategy": "fastest"}, {"enabled": False, "strategy": "greedy"},
                                {"strategy": "optimal"}, {"enabled": False}])
def test_flags_check_and_restore_as_torch(kw):
    def run(L):
        o = L.backends.opt_einsum
        seen = []

        def body():
            with o.flags(**kw):
                seen.append((o.enabled, o.strategy))
        try:
            return raised(body), seen, (o.enabled, o.strategy)
        finally:
            _reset(o)

    assert run(ember) == run(torch)


def test_set_flags_returns_the_previous_flags():
    # (without the opt_einsum package installed, both refuse a strategy: test environments
    # differ, `make test` does not install it)
    def run(L):
        o = L.backends.opt_einsum
        previous = []
        try:
            return raised(lambda: previous.append(o.set_flags(None, "greedy"))), previous, \
                o.strategy
        finally:
            _reset(o)

    assert run(ember) == run(torch)
