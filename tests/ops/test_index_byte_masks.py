"""uint8 masks, as PyTorch still reads them: a bool mask with a deprecation warning per
indexing call, except that one value written through a lone uint8 mask goes to
masked_fill_, which refuses it."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same

DEPRECATED = "indexing with dtype torch.uint8 is now deprecated"
MASK = [1, 0, 1]


def _run(lib, call):
    """call's result (or its error's type and text), and how many warnings say DEPRECATED."""
    mask = lib.tensor(MASK, dtype=lib.uint8)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out = call(lib, mask)
        except (RuntimeError, IndexError) as e:
            out = f"{type(e).__name__}: {e}"
    return out, sum(DEPRECATED in str(w.message) for w in seen)


def _put(index, value):
    def call(L, m):
        y = L.zeros(3, 3)
        y[index(m)] = value(L)
        return y
    return call


CALLS = {
    "read": lambda L, m: L.arange(9).reshape(3, 3)[m],
    "read two masks": lambda L, m: L.arange(9).reshape(3, 3)[m, m],
    "read a NumPy uint8 array": lambda L, m: L.arange(3)[np.array(MASK, np.uint8)],
    "write rows": _put(lambda m: m, lambda L: L.tensor([[1.0, 2.0, 3.0]])),
    "write beside a list": _put(lambda m: (m, [0, 1]), lambda L: 2.0),
    "write one value": _put(lambda m: m, lambda L: 2.0),  # masked_fill_ refuses it
    "write one value by column": _put(lambda m: (slice(None), m), lambda L: L.tensor(2.0)),
    "index_put_ one value": lambda L, m: L.zeros(3).index_put_((m,), L.tensor([4.0])),
    "index_put_ accumulate": lambda L, m: L.zeros(3).index_put_((m,), L.tensor(4.0), True),
    "index_put values": lambda L, m: L.zeros(3).index_put((m,), L.tensor([4.0, 5.0])),
    # the mask's shape is checked before masked_fill_ refuses its dtype
    "write one value through a short mask": _put(lambda m: (Ellipsis, m[:2]), lambda L: 1.0),
    "write one value by a 0-d mask": _put(lambda m: m[0], lambda L: 1.0),  # an index: works
    "index_put_ by a 0-d mask": lambda L, m: L.zeros(3).index_put_((m[0],), L.tensor(4.0)),
}


@pytest.mark.parametrize("name", CALLS)
def test_uint8_masks_read_warn_and_refuse_as_in_torch(name):
    got, got_warnings = _run(ember, CALLS[name])
    want, want_warnings = _run(torch, CALLS[name])
    if isinstance(want, str):
        assert got == want
    else:
        assert_same(got, want)
    assert got_warnings == want_warnings


def test_a_write_with_a_graph_warns_once():
    def call(L, m):
        y = L.zeros(3, 3, requires_grad=True) * 1
        y[m] = L.ones(1, 3)
        return y

    assert _run(ember, call)[1] == _run(torch, call)[1] == 1
