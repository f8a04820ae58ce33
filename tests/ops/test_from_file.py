"""from_file against torch 2.13: private and shared reads, dtypes, sizes, errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


@pytest.fixture
def raw(tmp_path):
    path = tmp_path / "f.bin"
    np.arange(10, dtype=np.float32).tofile(path)
    return str(path)


@pytest.mark.parametrize("kw", [
    dict(size=4), dict(size=10, dtype="float32"), dict(size=4, dtype="int32"),
    dict(size=2, dtype="float64"), dict(size=0), dict(size=40, dtype="uint8"),
    dict(size=3, dtype="bfloat16"),
])
def test_private_read_matches_torch(raw, kw):
    name = kw.pop("dtype", None)
    t = torch.from_file(raw, False, dtype=getattr(torch, name) if name else None, **kw)
    e = ember.from_file(raw, False, dtype=getattr(ember, name) if name else None, **kw)
    if name == "bfloat16":  # (torch's bfloat16 has no NumPy twin: compare as float32)
        assert e.dtype == ember.bfloat16
        t, e = t.float(), e.float()
    assert_same(e, t)


def test_private_copy_leaves_the_file(raw):
    e = ember.from_file(raw, size=3)
    e[1] = 77.0
    assert np.fromfile(raw, dtype=np.float32)[1] == 1.0


def test_shared_map_writes_the_file(raw, tmp_path):
    e = ember.from_file(raw, shared=True, size=3)
    e[0] = 55.0
    assert np.fromfile(raw, dtype=np.float32)[:3].tolist() == [55.0, 1.0, 2.0]
    for lib, name in ((torch, "t.bin"), (ember, "e.bin")):  # a missing file is created
        x = lib.from_file(str(tmp_path / name), shared=True, size=2)
        assert x.tolist() == [0.0, 0.0] and (tmp_path / name).stat().st_size == 8


def test_requires_grad(raw):
    assert ember.from_file(raw, size=2, requires_grad=True).requires_grad


@pytest.mark.parametrize("call, kind", [
    (lambda L, f: L.from_file(f, size=20), RuntimeError),
    (lambda L, f: L.from_file(f + ".missing", size=2), RuntimeError),
    (lambda L, f: L.from_file(f, size=-1), RuntimeError),
    (lambda L, f: L.from_file(3, size=2), TypeError),
])
def test_refusals_in_torchs_words(raw, call, kind):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(kind) as exc:
            call(lib, raw)
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1]
