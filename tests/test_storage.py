"""Storages as PyTorch programs see them: `Tensor.storage()` (TypedStorage, the legacy
face), `untyped_storage()` (bytes), their printing, indexing, writes and the legacy
class names, each against torch 2.13."""

import pytest
import torch

import ember
from ember import _names
from fresh_process import with_server

pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")


@pytest.fixture
def torch_names(monkeypatch):
    monkeypatch.setattr(_names, "prefix", "torch")


CASES = [
    ([1.0, 2.0, 3.0], "float32"),
    ([1.5, -0.0, 1e30], "float64"),
    ([0.1, 65504.0], "float16"),
    ([1.0, 3.140625], "bfloat16"),
    ([1, -2, 300], "int64"),
    ([7, 255], "uint8"),
    ([True, False], "bool"),
    ([1 + 2j, -0.5j], "complex64"),
    ([], "float32"),
]


@pytest.mark.parametrize("values,dtype", CASES)
def test_typed_storage_prints_and_reads_as_torch(values, dtype, torch_names):
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    e = ember.tensor(values, dtype=getattr(ember, dtype))
    ts, es = t.storage(), e.storage()
    assert str(es) == str(ts) and repr(es) == repr(ts)
    assert (len(es), es.size(), es.nbytes(), es.element_size()) == (
        len(ts), ts.size(), ts.nbytes(), ts.element_size())
    assert es.tolist() == ts.tolist() and list(es) == list(ts)
    assert [type(v) for v in es.tolist()] == [type(v) for v in ts.tolist()]
    assert es.type() == ts.type() and str(es.dtype) == str(ts.dtype)
    assert es.data_ptr() == e.data_ptr()


@pytest.mark.parametrize("values,dtype", CASES)
def test_untyped_storage_is_bytes(values, dtype, torch_names):
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    e = ember.tensor(values, dtype=getattr(ember, dtype))
    assert e.untyped_storage().tolist() == t.untyped_storage().tolist()
    assert str(e.untyped_storage()) == str(t.untyped_storage())


def test_a_view_reads_the_whole_storage_and_writes_reach_the_tensor():
    t, e = torch.arange(6.0), ember.arange(6.0)
    tv, ev = t[2:4], e[2:4]
    assert ev.storage().size() == tv.storage().size() == 6
    assert ev.storage().data_ptr() == e.data_ptr()
    ts, es = tv.storage(), ev.storage()
    for s in (ts, es):
        s[0] = 9
        s[-1] = torch.tensor(7.0) if s is ts else ember.tensor(7.0)
        s[1:3] = 4
    assert e.tolist() == t.tolist() == [9.0, 4.0, 4.0, 3.0, 4.0, 7.0]
    assert ev.tolist() == tv.tolist()
    es.fill_(2)
    assert e.tolist() == [2.0] * 6


def test_conversions_copy_and_clone():
    e = ember.tensor([1.5, -2.5, 3.0])
    s = e.storage()
    d = s.double()
    assert d.dtype is ember.float64 and d.tolist() == [1.5, -2.5, 3.0]
    assert s.int().tolist() == torch.tensor([1.5, -2.5, 3.0]).storage().int().tolist()
    c = s.clone()
    c[0] = 0
    assert e[0].item() == 1.5 and c.data_ptr() != s.data_ptr()
    s.copy_(ember.tensor([4.0, 5.0, 6.0]).storage())
    assert e.tolist() == [4.0, 5.0, 6.0]


def test_indexing_errors_as_torch():
    e, t = ember.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    for key, kind in ((2, IndexError), (-3, IndexError), (slice(0, 1), RuntimeError)):
        with pytest.raises(kind) as te:
            t.storage()[key]
        with pytest.raises(kind) as ee:
            e.storage()[key]
        assert str(ee.value) == str(te.value)
    with pytest.raises(IndexError, match="index 8 out of range for storage of size 8"):
        e.untyped_storage()[8]


def test_public_constructors_and_legacy_names(torch_names):
    assert ember.UntypedStorage(5).nbytes() == torch.UntypedStorage(5).nbytes() == 5
    assert ember.UntypedStorage([1, 2, 300]).tolist() == torch.UntypedStorage([1, 2, 300]).tolist()
    assert ember.FloatStorage([1, 2]).tolist() == torch.FloatStorage([1, 2]).tolist()
    assert ember.LongStorage(3).size() == 3
    assert ember.TypedStorage([1, 2], dtype=ember.float64).dtype is ember.float64
    s = ember.tensor([1, 2]).storage()
    assert isinstance(s, ember.TypedStorage) and isinstance(s, ember.LongStorage)
    assert not isinstance(s, ember.FloatStorage)
    assert isinstance(ember.tensor([1.0]).untyped_storage(), ember.UntypedStorage)
    assert ember.is_storage(s) and ember.is_storage(s.untyped()) and not ember.is_storage([1])
    assert str(ember.empty(2, device="meta").storage()) == str(
        torch.empty(2, device="meta").storage())


def test_storage_warns_once_per_process_as_torch():
    code = ("import warnings; warnings.simplefilter('always'); import {m} as t\n"
            "x = t.ones(2)\nx.storage(); x.storage(); t.FloatStorage(2)\n")
    # (a fresh process each: a child of a server that imported the library and ran nothing,
    # tests/fresh_process.py)
    runs = [with_server(m).run_code(code.format(m=m)) for m in ("torch", "ember")]
    assert [r.returncode for r in runs] == [0, 0], runs
    outs = [r.stderr for r in runs]
    assert outs[0].count("TypedStorage is deprecated") == 1
    assert outs[1].count("TypedStorage is deprecated") == 1
    assert outs[1].splitlines()[0].startswith("<string>:3: UserWarning")


def test_storage_type_is_the_legacy_class_of_the_dtype(torch_names):
    for d in ("float32", "float64", "int64", "uint8", "bool", "bfloat16"):
        t = torch.ones(1, dtype=getattr(torch, d)).storage_type()
        e = ember.ones(1, dtype=getattr(ember, d)).storage_type()
        assert e.__name__ == t.__name__ and e.dtype is getattr(ember, d)
