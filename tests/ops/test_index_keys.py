"""Every kind of index key PyTorch accepts (range objects, nested lists, NumPy int, float,
uint8 and bool arrays, and tuples mixing them with slices, None, `...` and tensors) in
reads, writes and their gradients, against torch: values, gradients and exception types.

The keys are given to both frameworks as they are (NumPy arrays stay NumPy arrays), except
the markers "T" / "T0", which stand for a 1-d / 0-d int64 tensor of the framework."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same

BASE = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

KEYS = {
    "range": range(2), "range_step": range(0, 3, 2), "range_neg": range(-1, -3, -1),
    "range_empty": range(0), "range_oob": range(5), "range_oob_neg": range(-4, 0),
    "ranges_tuple": (range(1, 3), slice(None), range(2)), "range_dim1": (slice(None), range(3)),
    "range_int": (range(2), 1), "int_range_array": (1, range(2), np.array([0, 4])),
    "list": [0, 2], "list_neg": [-1, 0], "nested": [[0, 1], [2, 0]],
    "list_bool": [True, False, True], "nested_bool": [[True, False, True, False]] * 3,
    "list_empty": [], "list_float": [0.5, 1.0], "ragged": [[0, 1], [2]],
    "list_long": [0, 1, 2] * 12, "lists_tuple": ([0, 1], [[1], [2]]),
    "lists_none": ([0, 1], None, [1, 2]), "list_of_ranges": [range(2), range(1, 3)],
    "list_np_ints": [np.int64(0), np.int64(2)], "list_with_array": [np.array([0, 1]), slice(None)],
    "tuple_in_tuple": ((0, 2), slice(1, 3)),
    "np_int": np.array([0, 2]), "np_int32": np.array([1, 2], np.int32),
    "np_int16_2d": np.array([[0, 2], [1, 1]], np.int16), "np_2d": np.array([[0, 1], [1, 2]]),
    "np_uint8": np.array([1, 0], np.uint8), "np_uint8_0d": np.array(1, np.uint8),
    "np_bool": np.array([True, False, True]), "np_bool_2d": np.ones((3, 4), bool),
    "np_bool_0d": np.array(True), "np_0d": np.array(1), "np_int64_scalar": np.int64(2),
    "np_float": np.array([0.0, 1.0]), "np_float_0d": np.array(1.0),
    "np_float16": np.array([1.0, 2.0], np.float16), "np_complex": np.array([1 + 0j, 0j]),
    "np_str": np.array(["a"]), "np_float_scalar": np.float32(1.0), "np_oob": np.array([0, 7]),
    "np_pair": (np.array([0, 2]), np.array([1, 3])),
    "np_slice_none": (np.array([0, 2]), slice(1, 3), None),
    "ellipsis_np": (Ellipsis, np.array([1, 3])),
    "none_list_ellipsis_range": (None, [0, 1], Ellipsis, range(2)),
    "slice_np_mask": (slice(None), np.array([True, False, True, True])),
    "np_slice_np": (np.array([0, 1]), slice(None), np.array([1, 2])),
    "scalar_range": (np.int64(1), range(2)), "tensor_range": ("T", range(2)),
    "tensor0d_range": ("T0", range(3)), "str": "a",
}


def _key(key, L):
    if isinstance(key, tuple) and key and key[0] in ("T", "T0"):
        t = L.tensor([0, 2]) if key[0] == "T" else L.tensor(1)
        return (t,) + key[1:]
    return key


def _read(L, key):
    return L.tensor(BASE)[_key(key, L)]


def _write(L, key):
    x = L.tensor(BASE)
    x[_key(key, L)] = -1.0
    return x


def _read_grad(L, key):
    x = L.tensor(BASE, requires_grad=True)
    y = x[_key(key, L)]
    (y * L.arange(float(y.numel())).reshape(y.shape)).sum().backward()
    return x.grad


def _write_grad(L, key):
    leaf = L.tensor(BASE, requires_grad=True)
    x = leaf * 1
    k = _key(key, L)
    shape = x[k].shape
    v = L.arange(1.0, 1.0 + int(np.prod(shape))).reshape(shape).requires_grad_(True)
    x[k] = v * 2
    (x * L.arange(60.0).reshape(3, 4, 5)).sum().backward()
    return x, leaf.grad, v.grad


@pytest.mark.parametrize("mode", [_read, _write, _read_grad, _write_grad],
                         ids=["read", "write", "read_grad", "write_grad"])
@pytest.mark.parametrize("name", list(KEYS))
def test_key_matches_torch(name, mode):
    key = KEYS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's list-as-tuple deprecation, uint8 masks)
        try:
            expected = mode(torch, key)
        except Exception as exc:  # noqa: BLE001 - ember must raise what torch raises
            with pytest.raises(type(exc)):
                mode(ember, key)
            return
        got = mode(ember, key)
    assert_same(got, expected)


def test_sweep_exercises_values_not_only_errors():
    """Most keys in the sweep are valid: compare, not just fail alike."""
    ok = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key in KEYS.values():
            try:
                _read(torch, key)
                ok += 1
            except Exception:  # noqa: BLE001
                pass
    assert ok >= 40


def test_range_reads_as_its_list():
    x = ember.tensor(BASE)
    assert_same(x[range(1, 3)], torch.tensor(BASE)[[1, 2]])
    assert x[range(1, 3)].data_ptr() != x.data_ptr()  # an advanced index copies, as in torch
