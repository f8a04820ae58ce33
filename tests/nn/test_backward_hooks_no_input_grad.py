"""Full backward hooks on a module none of whose inputs needs a gradient (the first layer
of a network fed plain data): they fire with the output gradients, warn as PyTorch does,
and may not return replacement input gradients."""

import warnings

import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, copy_module_state


def _run(lib, lin, register):
    """Backward through `lin` fed data that needs no gradient; returns what the hook saw
    and the warnings raised (category, text, file)."""
    seen = []
    register(lin, seen)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (lin(lib.ones(4, 3)) ** 2).sum().backward()
    return seen, [(w.category, str(w.message), w.filename) for w in caught]


def _full(lin, seen):
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))


def _pre_only(lin, seen):
    lin.register_full_backward_pre_hook(lambda m, go: seen.append(go))


@pytest.mark.parametrize("register", [_full, _pre_only], ids=["full", "pre_only"])
def test_hook_fires_on_outputs_and_warns_at_the_backward_line(register):
    lin_t, lin_e = torch.nn.Linear(3, 2), nn.Linear(3, 2)
    copy_module_state(lin_e, lin_t)
    seen_t, warned_t = _run(torch, lin_t, register)
    seen_e, warned_e = _run(ember, lin_e, register)
    # the same warning, reported in this file (the line that called backward)
    assert warned_e == warned_t and len(warned_t) == 1 and warned_t[0][2] == __file__
    assert len(seen_e) == len(seen_t) == 1
    if register is _full:
        assert seen_e[0][0] == seen_t[0][0] == (None,)
        assert_same(seen_e[0][1][0], seen_t[0][1][0])
    else:
        assert_same(seen_e[0][0], seen_t[0][0])


@pytest.mark.parametrize("returned", ["tensor", "nones"])
def test_hook_may_not_replace_missing_input_grads(returned):
    def register(lin, seen):
        def hook(m, gi, go):
            return (go[0].sum(0),) if returned == "tensor" else (None,)
        lin.register_full_backward_hook(hook)

    outcomes = []
    for lib, lin in [(torch, torch.nn.Linear(3, 2)), (ember, nn.Linear(3, 2))]:
        try:
            _run(lib, lin, register)
            outcomes.append(None)
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0] is None) == (returned == "nones")
