"""ember.frombuffer against torch.frombuffer: values, dtypes, shared memory, errors."""

import array
import warnings

import pytest
import torch

import ember

from helpers import DTYPE_PAIRS, assert_same, same_error

RAW = bytes(range(1, 33))


@pytest.mark.parametrize("edt,tdt", DTYPE_PAIRS, ids=[str(p[1]) for p in DTYPE_PAIRS])
@pytest.mark.parametrize("count,offset", [(-1, 0), (2, 0), (1, 16), (-1, 16)])
def test_values_match_torch(edt, tdt, count, offset):
    if count == -1 and (len(RAW) - offset) % tdt.itemsize:
        pytest.skip("not a whole number of elements")
    e = ember.frombuffer(bytearray(RAW), dtype=edt, count=count, offset=offset)
    t = torch.frombuffer(bytearray(RAW), dtype=tdt, count=count, offset=offset)
    assert_same(e, t)


def test_shares_the_buffers_memory():
    buf = bytearray(b"\x00\x00\x80\x3f" * 4)
    x = ember.frombuffer(buf, dtype=ember.float32)
    x[0] = 5.0
    assert buf[:4] == bytearray(b"\x00\x00\xa0@")
    buf[4:8] = b"\x00\x00\x00\x40"
    assert x.tolist() == [5.0, 2.0, 1.0, 1.0]


def test_array_module_and_requires_grad():
    src = array.array("i", [1, 2, 3])
    assert_same(ember.frombuffer(src, dtype=ember.int32), torch.frombuffer(src, dtype=torch.int32))
    e = ember.frombuffer(bytearray(8), dtype=ember.float32, requires_grad=True)
    assert e.requires_grad and e.is_leaf


def test_read_only_buffer_warns_as_torch():
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        e = ember.frombuffer(b"\x00\x00\x80\x3f", dtype=ember.float32)
    assert e.tolist() == [1.0] and any(w.category is UserWarning for w in got)


@pytest.mark.parametrize("call", [
    lambda L: L.frombuffer(bytearray(16), dtype=L.float32, offset=3),
    lambda L: L.frombuffer(bytearray(16), dtype=L.float32, count=10),
    lambda L: L.frombuffer(b"", dtype=L.float32),
    lambda L: L.frombuffer(bytearray(16)),
    lambda L: L.frombuffer([1, 2], dtype=L.float32),
    lambda L: L.frombuffer(bytearray(16), dtype=L.float32, offset=-1),
    lambda L: L.frombuffer(bytearray(16), dtype=L.float32, offset=16),
    lambda L: L.frombuffer(bytearray(16), dtype=L.float32, count=0),
    lambda L: L.frombuffer(bytearray(16), dtype=L.int64, requires_grad=True),
])
def test_errors_match_torch(call):
    same_error(call)
