"""Fill values that do not fit the tensor's dtype are refused, as PyTorch refuses them.

`full`, `fill_`, `masked_fill(_)`, `index_fill(_)`, `scatter(value=)` and `x[i] = v` share
one conversion (ember.ops._scalar_value); each is compared with torch over every dtype and
the edge values: NaN, +-inf, each integer dtype's max + 1 and min - 1, ints beyond int64 and
uint64, floats beyond float16 / bfloat16 / float32, complex numbers into real dtypes, bools.
Same exception type and message, or the same stored value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tests.helpers import DTYPE_PAIRS

import ember

INF, NAN = float("inf"), float("nan")
VALUES = [
    NAN, INF, -INF, 0, -0.0, 1, -1, True, False, 3.5, -0.5,
    127, 128, -128, -129, 255, 256, -255, -256, 300, 32767, 32768, -32769,
    2**31 - 1, 2**31, -2**31 - 1, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64 - 1, 2**64,
    2**100, 65504.0, 65505.0, 65520.0, 1e6, -1e6, 3.4e38, 3.5e38, 1e39, -1e39, 1.7e308,
    1 + 0j, 1 + 2j, 0.5j, complex(1e39, 0), complex(0, 1e39), complex(INF, 0),
]


def _fill(lib, d, v):
    x = lib.zeros(3, dtype=d)
    x.fill_(v)
    return x


def _masked_fill(lib, d, v):
    return lib.zeros(3, dtype=d).masked_fill(lib.tensor([True, False, True]), v)


def _masked_fill_(lib, d, v):
    x = lib.zeros(3, dtype=d)
    x.masked_fill_(lib.tensor([True, False, True]), v)
    return x


def _index_fill(lib, d, v):
    return lib.zeros(3, dtype=d).index_fill(0, lib.tensor([0, 2]), v)


def _index_fill_(lib, d, v):
    x = lib.zeros(3, dtype=d)
    x.index_fill_(0, lib.tensor([0, 2]), v)
    return x


def _scatter(lib, d, v):
    return lib.zeros(3, dtype=d).scatter(0, lib.tensor([2]), v)


def _setitem(lib, d, v):
    x = lib.zeros(3, dtype=d)
    x[1] = v
    return x


def _setitem_slice(lib, d, v):
    x = lib.zeros(3, dtype=d)
    x[0:2] = v
    return x


def _setitem_mask(lib, d, v):
    x = lib.zeros(3, dtype=d)
    x[lib.tensor([True, False, True])] = v
    return x


def _full(lib, d, v):
    return lib.full((3,), v, dtype=d)


OPS = [_fill, _masked_fill, _masked_fill_, _index_fill, _index_fill_, _scatter, _setitem,
       _setitem_slice, _setitem_mask, _full]


def _outcome(lib, op, d, v):
    """('raises', type, message) or ('value', the stored values as complex numbers)."""
    try:
        r = op(lib, d, v)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return ("raises", type(e).__name__, str(e))
    if r.dtype == lib.bfloat16:
        r = r.float()
    return ("value", [complex(z) for z in np.asarray(r.tolist(), dtype=complex)])


def _same(a, b) -> bool:
    if a[0] != b[0] or a[0] == "raises":
        return a == b
    return all(x == y or (math.isnan(x.real) and math.isnan(y.real)) for x, y in zip(a[1], b[1]))


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("e_dtype, t_dtype", DTYPE_PAIRS, ids=lambda d: str(d).split(".")[-1])
def test_fill_value_overflow_matches_torch(op, e_dtype, t_dtype):
    mismatches = []
    with np.errstate(all="ignore"):
        for v in VALUES:
            got = _outcome(ember, op, e_dtype, v)
            want = _outcome(torch, op, t_dtype, v)
            if not _same(got, want):
                mismatches.append((v, got, want))
    assert not mismatches, mismatches


@pytest.mark.parametrize("op, value, dtype, message", [
    (_masked_fill_, -INF, ember.int64, "int64_t"),
    (_fill, 300, ember.int8, "int8_t"),
    (_index_fill_, 1e6, ember.float16, "c10::Half"),
    (_full, -129, ember.int8, "int8_t"),
    (_setitem, 256, ember.uint8, "uint8_t"),
    (_setitem, NAN, ember.int32, "int"),
])
def test_issue_examples_raise(op, value, dtype, message):
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {message} "
                                           "without overflow"):
        op(ember, dtype, value)


def test_setitem_float16_saturates_like_torch():
    """PyTorch converts `x[i] = v` through double for half types: 1e6 becomes inf."""
    x = ember.zeros(2, dtype=ember.float16)
    x[0] = 1e6
    assert x.tolist() == [INF, 0.0]


def test_tensor_values():
    """A 0-d tensor value: fill_ copies it (wrapping, as in PyTorch); masked_fill and
    index_fill read it as a number (so it is checked)."""
    for lib in (ember, torch):
        x = lib.zeros(3, dtype=lib.int8)
        x.fill_(lib.tensor(300))
        assert x.tolist() == [44, 44, 44]
        with pytest.raises(RuntimeError, match="int8_t without overflow"):
            lib.zeros(3, dtype=lib.int8).masked_fill(lib.tensor([True, False, True]),
                                                     lib.tensor(300))
        with pytest.raises(RuntimeError, match="int8_t without overflow"):
            lib.zeros(3, dtype=lib.int8).index_fill(0, lib.tensor([0]), lib.tensor(300))


def test_in_range_values_still_fill():
    x = ember.zeros(3, dtype=ember.int8)
    x.masked_fill_(ember.tensor([True, False, True]), -128)
    x[1] = 127
    assert x.tolist() == [-128, 127, -128]
    y = ember.zeros(2, dtype=ember.uint8)
    y.fill_(-1)  # PyTorch wraps an integer down to -255 into uint8
    assert y.tolist() == [255, 255]


@pytest.mark.parametrize("op", [_fill, _setitem, _setitem_slice, _full],
                         ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("e_dtype, t_dtype", [(ember.float8_e4m3fn, torch.float8_e4m3fn),
                                              (ember.float8_e5m2, torch.float8_e5m2)],
                         ids=lambda d: str(d).split(".")[-1])
def test_float8_fill_refuses_and_setitem_saturates_like_torch(op, e_dtype, t_dtype):
    # fill_ / full refuse a value beyond the largest finite one (inf too for e4m3fn, which
    # has none); x[i] = v converts as a copy does, saturating e4m3fn at 448
    values = VALUES[:11] + [3.3, 448.0, 449.0, 464.0, 500.0, 57344.0, 61439.0, 61440.0, 1e5,
                            1e-9, 2.0 ** -17, 1e6]
    for v in values:
        got, want = _outcome(ember, op, e_dtype, v), _outcome(torch, op, t_dtype, v)
        assert _same(got, want), (v, got, want)
        if got[0] == "value":  # the bits, NaN's included
            assert op(ember, e_dtype, v).view(ember.uint8).tolist() == \
                op(torch, t_dtype, v).view(torch.uint8).tolist(), v
