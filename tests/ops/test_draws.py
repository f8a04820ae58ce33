"""Draws laid out like a tensor (`*_like`, multinomial's and bernoulli's noise) take the
layout `empty_like` gives it, as PyTorch does, also for expanded (stride-0) inputs.

The layout decides which drawn value lands at which index, so a wrong order shows as
other values, bit for bit: each case compares strides and bytes with torch in-process.
"""

import numpy as np
import pytest
import torch

import ember

SEEDS = (0, 1, 42)


def _views(lib):
    """Overlapping and permuted views whose `empty_like` layout is not simply theirs."""
    return {
        "expand_rows": lib.ones(6).expand(4, 6),
        "expand_cols": lib.ones(4, 1).expand(4, 6),
        "expand_mid": lib.ones(3, 1, 4).expand(3, 5, 4),
        "expand_transposed": lib.ones(5).expand(2, 3, 5).transpose(0, 1),
        "expand_permuted": lib.ones(3, 1, 4).expand(3, 5, 4).transpose(0, 2),
        "permuted_sliced": lib.ones(2, 3, 4).permute(2, 0, 1)[:, :, ::2],
    }


VIEWS = tuple(_views(torch))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("fn", ["rand_like", "randn_like"])
def test_like_factories_follow_empty_like_layout(fn, view, seed):
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(seed)
        r = getattr(lib, fn)(_views(lib)[view])
        outs.append((tuple(r.stride()), np.asarray(r.contiguous().numpy())))
    assert outs[0][0] == outs[1][0]
    assert outs[0][1].tobytes() == outs[1][1].tobytes()  # the same draws at the same places


@pytest.mark.parametrize("seed", SEEDS)
def test_randint_like_expanded(seed):
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(seed)
        r = lib.randint_like(lib.zeros(5, dtype=lib.int64).expand(3, 5), 0, 100)
        outs.append((tuple(r.stride()), r.tolist()))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("view", ["expand_rows", "expand_cols"])
def test_multinomial_on_expanded_probabilities(view, k, replacement, seed):
    # Without replacement the Exp(1) noise is drawn like `empty_like(probs)`: an expanded
    # row of weights (a tournament over a uniform population) must pair each noise value
    # with the index torch pairs it with.
    outs = []
    for lib in (torch, ember):
        g = lib.Generator().manual_seed(seed)
        w = _views(lib)[view]
        outs.append((lib.multinomial(w, k, replacement=replacement, generator=g).tolist(),
                     lib.rand(2, generator=g).tolist()))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("seed", SEEDS)
def test_bernoulli_of_expanded_probabilities(seed):
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(seed)
        p = lib.tensor([0.2, 0.5, 0.9]).expand(4, 3)
        outs.append((lib.bernoulli(p).tolist(), lib.rand(2).tolist()))
    assert outs[0] == outs[1]
