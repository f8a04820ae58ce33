"""Deterministic mode fills the memory it hands out without values (torch.utils.deterministic)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils.deterministic as torch_det

import ember
import ember.utils.deterministic as ember_det

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "int64", "int32", "int8",
          "uint8", "bool"]

FACTORIES = {
    "empty": lambda L, d: L.empty(2, 3, dtype=d),
    "empty_like": lambda L, d: L.empty_like(L.ones(3, 2, dtype=d).t()),
    "new_empty": lambda L, d: L.ones(1, dtype=d).new_empty(4),
    "empty_strided": lambda L, d: L.empty_strided((2, 2), (1, 2), dtype=d),
    "new_empty_strided": lambda L, d: L.ones(1, dtype=d).new_empty_strided((3,), (2,)),
}


def _values(t) -> np.ndarray:
    """The values as NumPy (bfloat16 through float32, exactly)."""
    if t.dtype in (ember.bfloat16, torch.bfloat16):
        t = t.float()
    return t.numpy()


def _deterministic(L, fn):
    L.use_deterministic_algorithms(True)
    try:
        return fn()
    finally:
        L.use_deterministic_algorithms(False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("factory", list(FACTORIES))
def test_uninitialised_memory_is_filled_as_torch_fills_it(factory, dtype):
    make = FACTORIES[factory]
    got = _deterministic(ember, lambda: make(ember, getattr(ember, dtype)))
    want = _deterministic(torch, lambda: make(torch, getattr(torch, dtype)))
    # exact: NaN, True or the dtype's largest integer, written, not computed
    assert got.shape == tuple(want.shape) and got.stride() == want.stride()
    np.testing.assert_array_equal(_values(got), _values(want))


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "complex128"])
def test_resize_fills_only_the_grown_elements(dtype):
    def grow(L):
        t = L.ones(4, dtype=getattr(L, dtype))[1:]  # offset 1 in a storage of 4
        return t.resize_(2, 3)

    got = _deterministic(ember, lambda: grow(ember))
    want = _deterministic(torch, lambda: grow(torch))
    np.testing.assert_array_equal(_values(got), _values(want))  # (exact, as above)
    assert got[0, :3].tolist() == want[0, :3].tolist()


def test_the_fill_flag_and_its_refusal():
    for det in (ember_det, torch_det):
        assert det.fill_uninitialized_memory is True
        det.fill_uninitialized_memory = False
        try:
            assert det.fill_uninitialized_memory is False
        finally:
            det.fill_uninitialized_memory = True
    with pytest.raises(RuntimeError, match="expected a bool, but got int"):
        torch_det.fill_uninitialized_memory = 1
    with pytest.raises(RuntimeError, match="expected a bool, but got int"):
        ember_det.fill_uninitialized_memory = 1


def test_no_fill_without_the_flag_or_outside_deterministic_mode(monkeypatch):
    # without filling, `empty` is np.empty: whatever the memory held. Shown through the
    # allocator: a filled `empty` would be NaN, an unfilled one is what np.empty returned.
    marker = np.array([7.0, 7.0], np.float32)
    monkeypatch.setattr(np, "empty", lambda shape, dtype=None, **kw: marker.copy())
    assert ember.empty(2).tolist() == [7.0, 7.0]
    ember_det.fill_uninitialized_memory = False
    try:
        assert _deterministic(ember, lambda: ember.empty(2)).tolist() == [7.0, 7.0]
    finally:
        ember_det.fill_uninitialized_memory = True
    assert np.isnan(_deterministic(ember, lambda: ember.empty(2)).numpy()).all()
