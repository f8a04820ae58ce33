"""Writes into an expanded view (elements sharing memory), as PyTorch treats each op: the
ops whose result does not depend on the order of their writes go through; copies into a
basic view and elementwise in-place ops refuse, before any shape or dtype check."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = ["bool", "int8", "int64", "float16", "bfloat16", "float32", "complex64"]


def both(fn, dtype="float32"):
    """fn run on an expanded (2, 3) view in each library: the values it leaves, or the
    exception type it raises."""
    out = []
    for lib in (ember, torch):
        x = lib.tensor([1, 0, 1], dtype=getattr(lib, dtype)).expand(2, 3)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(lib, x)
            out.append(np.asarray(x.to(lib.float64 if dtype != "complex64" else lib.complex128)
                                  .tolist()))
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            out.append(type(e))
    return out


def mask(lib):
    return lib.tensor([[True, False, False], [False, False, True]])


CASES = {
    "tril_": lambda lib, x: x.tril_(),
    "triu_": lambda lib, x: x.triu_(1),
    "masked_fill_": lambda lib, x: x.masked_fill_(mask(lib), 1),
    "x[mask] = v": lambda lib, x: x.__setitem__(mask(lib), 1),
    "x[[0]] = v": lambda lib, x: x.__setitem__(lib.tensor([0]), 0),
    "x[0] = v": lambda lib, x: x.__setitem__(0, 1),
    "x[:, 0] = v (overlapping view)": lambda lib, x: x.__setitem__((slice(None), 0), 1),
    "add_": lambda lib, x: x.add_(1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CASES)
def test_writes_into_an_expanded_view_as_pytorch(name, dtype):
    if name == "add_" and dtype == "bool":
        pytest.skip("bool add_ is another refusal")
    e, t = both(CASES[name], dtype)
    if isinstance(t, type):
        assert e is t, (e, t)
    else:
        np.testing.assert_array_equal(e, t)


def test_overlap_is_refused_before_the_dtype():
    x = ember.tensor([1, 2], dtype=ember.int8).expand(2, 2)
    with pytest.raises(RuntimeError, match="single memory location"):
        x.frac_()  # int8 frac_ would be a NotImplementedError: PyTorch checks overlap first
    e = ember.ones(0).expand(2, 0)
    assert e.add_(1).shape == (2, 0)  # an empty view overlaps nothing


def test_masked_fill_on_an_expanded_view_warns_as_pytorch():
    x = ember.zeros(3).expand(2, 3)
    with pytest.warns(UserWarning, match="masked_fill_ on expanded tensors is deprecated"):
        x.masked_fill_(mask(ember), 2.0)
    assert x.tolist() == [[2.0, 0.0, 2.0], [2.0, 0.0, 2.0]]
