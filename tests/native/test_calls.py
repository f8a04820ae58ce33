"""native/calls.py's array pointers: read from the array object (the data field after the
object header, its offset found at import), they must be the address NumPy reports for
every kind of array a kernel meets, and the fallback must give the same."""

from __future__ import annotations

import numpy as np
import pytest

from ember.native import calls


def _arrays():
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    return {
        "contiguous": base,
        "view at an offset": base[2:, 3:],
        "transposed": base.T,
        "negative stride": base[::-1, ::-2],
        "zero-size": np.empty((0, 4), np.float64),
        "0-d": np.asarray(3.0),
        "broadcast": np.broadcast_to(np.ones(3), (4, 3)),
        "subclass": base.view(np.matrix),
    }


@pytest.mark.parametrize("kind", list(_arrays()))
def test_pointer_is_numpys_address(kind, monkeypatch):
    a = _arrays()[kind]
    want = a.__array_interface__["data"][0]
    assert calls._DATA is not None  # (this is CPython: the fast read is in use)
    assert calls.ptr(a) == want
    monkeypatch.setattr(calls, "_DATA", None)  # (the fallback, elsewhere)
    assert calls.ptr(a) == want


def test_none_is_a_null_pointer():
    assert calls.ptr(None) is None
