"""Collation (ember/utils/data/_collate.py and the _utils.collate path) against torch's."""

import collections

import numpy as np
import pytest
import torch
from torch.utils.data._utils import collate as tcollate

import ember
from ember.utils.data._utils import collate as ecollate

from helpers import assert_same


def _same_tree(e, t):
    """Same container types (by name), keys, and leaves (tensors exactly: collation copies)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor)
        assert_same(e, t)
        return
    assert type(e).__name__ == type(t).__name__, (type(e), type(t))
    if isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            _same_tree(e[k], t[k])
    elif isinstance(t, (list, tuple, collections.UserList, range)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same_tree(a, b)
    else:
        assert e == t


class Tagged(dict):
    split = "none"


def _tagged(v):
    d = Tagged(v=v, name=f"n{v}")
    d.split = "train"
    return d


Pair = collections.namedtuple("Pair", ["a", "b"])

BATCHES = {
    "ints/floats/bools": [(1, 2.5, True), (3, -1.0, False)],
    "mixed int float": [1, 2.5],
    "strings and bytes": [("a", b"x"), ("b", b"y")],
    "numpy": [(np.arange(3, dtype=np.int16), np.float32(1.5), np.bool_(True)),
              (np.arange(3, 6, dtype=np.int16), np.float32(2.5), np.bool_(False))],
    "numpy 0-d arrays": [np.array(3.0), np.array(4.0)],
    "np str scalar": [np.str_("a"), np.str_("b")],
    "ordered dict": [collections.OrderedDict(b=1, a=2), collections.OrderedDict(b=3, a=4)],
    "defaultdict": [collections.defaultdict(int, a=1), collections.defaultdict(int, a=2)],
    "dict subclass": [_tagged(1.0), _tagged(2.0)],
    "namedtuple": [Pair(1, [2, 3]), Pair(4, [5, 6])],
    "user list": [collections.UserList([1, 2]), collections.UserList([3, 4])],
    "range": [range(2), range(2)],
}


@pytest.mark.parametrize("name", list(BATCHES))
def test_default_collate_structures(name):
    batch = BATCHES[name]
    e, t = ecollate.default_collate(batch), tcollate.default_collate(batch)
    _same_tree(e, t)
    if name == "dict subclass":  # (a mutable mapping is copied, so it keeps its attributes)
        assert e.split == t.split == "train"
    if name == "defaultdict":
        assert e.default_factory is t.default_factory is int


def test_tensor_leaves_and_nesting():
    samples_e = [{"t": ember.ones(2, dtype=ember.float16) * i, "p": (ember.tensor(i), "s")}
                 for i in range(3)]
    samples_t = [{"t": torch.ones(2, dtype=torch.float16) * i, "p": (torch.tensor(i), "s")}
                 for i in range(3)]
    _same_tree(ecollate.default_collate(samples_e), tcollate.default_collate(samples_t))


@pytest.mark.parametrize("batch", [[[1, 2], [3]], [object(), object()],
                                   [np.array(["a"]), np.array(["b"])], [{1}, {2}]])
def test_default_collate_errors(batch):
    with pytest.raises(Exception) as te:
        tcollate.default_collate(batch)
    with pytest.raises(te.type) as ee:
        ecollate.default_collate(batch)
    assert str(ee.value) == str(te.value)


def test_custom_collate_fn_map():
    class Box:
        def __init__(self, w):
            self.w = w

    class SubBox(Box):
        pass

    def make(lib):
        def fn(batch, *, collate_fn_map=None):
            return lib.tensor([b.w for b in batch]).sum()
        return fn

    batch = [{"b": SubBox(1.0), "i": 1}, {"b": SubBox(2.5), "i": 2}]
    mod_e, mod_t = ecollate, tcollate
    e = mod_e.collate(batch, collate_fn_map={**mod_e.default_collate_fn_map, Box: make(ember)})
    t = mod_t.collate(batch, collate_fn_map={**mod_t.default_collate_fn_map, Box: make(torch)})
    _same_tree(e, t)  # (SubBox reaches Box's entry through the isinstance fallback)
    with pytest.raises(TypeError, match="found <class"):
        ecollate.collate(batch)  # no table: a Box is not collatable


def test_collate_per_type_functions():
    assert_same(ecollate.collate_float_fn([1.0, 2.0]), tcollate.collate_float_fn([1.0, 2.0]))
    assert_same(ecollate.collate_int_fn([True, False]), tcollate.collate_int_fn([True, False]))
    assert ecollate.collate_str_fn(("a", "b")) == ("a", "b")
    assert ecollate.np_str_obj_array_pattern.pattern == tcollate.np_str_obj_array_pattern.pattern
    assert ecollate.default_collate_err_msg_format == tcollate.default_collate_err_msg_format


CONVERT = {
    "namedtuple": Pair(np.int8(1), [np.ones(2)]),
    "tuple": (np.ones(1), "s", 3),
    "ordered dict": collections.OrderedDict(m=np.eye(2)),
    "dict subclass": _tagged(np.float32(2.0)),
    "user list": collections.UserList([np.arange(2), 1]),
    "str array": np.array(["a", "b"]),
    "np bool": np.bool_(True),
    "bytes": b"abc",
    "range": range(3),
}


@pytest.mark.parametrize("name", list(CONVERT))
def test_default_convert(name):
    data = CONVERT[name]
    e, t = ecollate.default_convert(data), tcollate.default_convert(data)
    if isinstance(t, np.ndarray):
        assert e is data and t is data
        return
    _same_tree(e, t)
    if name == "dict subclass":
        assert e.split == "train"


def test_utils_module_paths():
    from ember.utils.data._utils import worker

    assert ecollate.default_collate is ember.utils.data.default_collate
    assert worker.get_worker_info is ember.utils.data.get_worker_info
