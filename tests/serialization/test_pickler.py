"""Plain Python and NumPy objects in checkpoints: ember.save writes what torch.save writes
(the same data.pkl), and ember.load accepts and refuses what torch.load(weights_only=True)
accepts and refuses, with the same exception type, both ways and under an allowlist."""

import argparse
import collections
import datetime
import fractions
import io
import pathlib
import pickle
import zipfile

import numpy as np
import pytest
import torch
from numpy._core.multiarray import _reconstruct, scalar

import ember

_recursive: list = []
_recursive.append(_recursive)

OBJECTS = {
    "dict": {"a": 1, "b": [1, 2.5]}, "list": [1, "x", None, True], "tuple": (1, (2, 3)),
    "set": {1, 2, 3}, "str": "héllo", "bytes": b"\x00\xffabc", "bytearray": bytearray(b"ab"),
    "int": 7, "bigint": 2**100, "negint": -5, "float": 1.5, "complex": 1 + 2j, "bool": True,
    "None": None, "OrderedDict": collections.OrderedDict([("x", 1), ("y", 2)]),
    "Counter": collections.Counter("aab"), "recursive_list": _recursive,
    "frozenset": frozenset({1, 2}),
    "defaultdict": collections.defaultdict(int, {"a": 1}),
    "deque": collections.deque([1, 2]),
    "Namespace": argparse.Namespace(lr=0.1, name="x"),
    "slice": slice(1, 5, 2), "range": range(3), "type_int": int, "ellipsis": Ellipsis,
    "datetime": datetime.datetime(2020, 1, 2), "Fraction": fractions.Fraction(1, 3),
    "Path": pathlib.PurePosixPath("/a/b"),
    "ndarray_f32": np.arange(6, dtype=np.float32).reshape(2, 3),
    "ndarray_i64": np.arange(3), "ndarray_bool": np.array([True, False]),
    "ndarray_c128": np.array([1 + 2j]), "ndarray_0d": np.array(3.5),
    "ndarray_strided": np.arange(12.0).reshape(3, 4)[:, ::2],
    "ndarray_fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "ndarray_str": np.array(["a", "bc"]), "ndarray_object": np.array([1, "a"], dtype=object),
    "np_float64": np.float64(2.5), "np_float32": np.float32(2.5), "np_int64": np.int64(3),
    "np_int32": np.int32(3), "np_bool": np.bool_(True), "np_complex64": np.complex64(1j),
    "np_dtype": np.dtype("float32"),
    "state_with_numpy": {"acc": np.float64(0.9), "w": np.ones(2), "t": torch.ones(2)},
}

# What torch.load(weights_only=True) needs allowlisted to load each refused object.
ALLOW = {
    "frozenset": [frozenset], "defaultdict": [collections.defaultdict, int],
    "deque": [collections.deque], "Namespace": [argparse.Namespace], "slice": [slice],
    "range": [range], "type_int": [int], "datetime": [datetime.datetime],
    "Fraction": [fractions.Fraction], "Path": [pathlib.PurePosixPath],
    "np_dtype": [np.dtype, type(np.dtype(np.float32))],
}
for _name, _obj in OBJECTS.items():
    if _name.startswith("ndarray"):
        ALLOW[_name] = [_reconstruct, np.ndarray, np.dtype, type(_obj.dtype)]
    elif _name.startswith("np_") and _name != "np_dtype":
        ALLOW[_name] = [scalar, np.dtype, type(_obj.dtype)]
ALLOW["state_with_numpy"] = [_reconstruct, scalar, np.ndarray, np.dtype,
                             type(np.dtype(np.float64))]


def _in(L, obj):
    """`obj` with its torch tensors turned into tensors of library `L`."""
    if isinstance(obj, dict) and type(obj) is dict:
        return {k: _in(L, v) for k, v in obj.items()}
    if isinstance(obj, torch.Tensor):
        return L.tensor(obj.tolist())
    return obj


def _same(a, b) -> bool:
    if type(a) is dict:
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (torch.Tensor, ember.Tensor)):
        return a.tolist() == b.tolist()
    if isinstance(a, np.ndarray):
        return (type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
                and a.flags.f_contiguous == b.flags.f_contiguous and (a == b).all())
    if type(a) is list and a and a[0] is a:
        return type(b) is list and b[0] is b
    return type(a) is type(b) and a == b


def _saved(lib: str, name: str) -> bytes:
    buf = io.BytesIO()
    if lib == "torch":
        torch.save(OBJECTS[name], buf)
    else:
        ember.save(_in(ember, OBJECTS[name]), buf)
    return buf.getvalue()


def _load(lib: str, raw: bytes, allow=None):
    """("ok", object) or (exception type, message) for one load."""
    L = torch if lib == "torch" else ember
    try:
        with L.serialization.safe_globals(allow or []):
            return "ok", L.load(io.BytesIO(raw))
    except Exception as exc:  # noqa: BLE001 - compared across the libraries
        return type(exc), str(exc)


def _data_pkl(raw: bytes) -> bytes:
    z = zipfile.ZipFile(io.BytesIO(raw))
    return z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))


@pytest.mark.parametrize("name", [n for n in OBJECTS if n != "state_with_numpy"])
def test_ember_save_writes_torch_saves_pickle(name):
    assert _data_pkl(_saved("ember", name)) == _data_pkl(_saved("torch", name))


@pytest.mark.parametrize("writer", ["torch", "ember"])
@pytest.mark.parametrize("name", list(OBJECTS))
def test_load_accepts_and_refuses_what_torch_does(name, writer):
    raw = _saved(writer, name)
    expected, got = _load("torch", raw), _load("ember", raw)
    if expected[0] == "ok":
        assert got[0] == "ok", got
        assert _same(_in(ember, expected[1]), got[1])
    else:
        # ember's UnpicklingError subclasses pickle's, which torch raises: `except` catches both
        assert expected[0] is pickle.UnpicklingError and issubclass(got[0], expected[0]), got


@pytest.mark.parametrize("writer", ["torch", "ember"])
@pytest.mark.parametrize("name", list(ALLOW))
def test_allowlisted_objects_load_as_in_torch(name, writer):
    raw = _saved(writer, name)
    assert _load("torch", raw)[0] is not "ok"  # noqa: F632 - refused by default...
    assert _load("ember", raw)[0] is not "ok"  # noqa: F632
    expected, got = _load("torch", raw, ALLOW[name]), _load("ember", raw, ALLOW[name])
    if expected[0] == "ok":  # ...and loaded, equal, once allowed
        assert got[0] == "ok", got
        assert _same(_in(ember, expected[1]), got[1])
    else:  # a defaultdict or deque stays refused: neither library fills one by opcode
        assert issubclass(got[0], expected[0]), got


def test_numpy_arrays_saved_by_ember_load_in_torch_without_weights_only():
    obj = {"w": np.arange(6.0).reshape(2, 3)[:, ::2], "step": np.int64(4),
           "ns": argparse.Namespace(a=1)}
    buf = io.BytesIO()
    ember.save(obj, buf)
    back = torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert _same(obj["w"], back["w"]) and _same(obj["step"], back["step"])
    assert back["ns"] == obj["ns"]


def test_a_whole_optimizer_and_scheduler_round_trip_with_weights_only_false():
    import io

    out = {}
    for L in (ember, torch):
        L.manual_seed(0)
        model = L.nn.Linear(3, 2)
        opt = L.optim.Adam(model.parameters(), lr=0.1)
        sched = L.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
        for _ in range(3):
            opt.zero_grad()
            model(L.ones(4, 3)).pow(2).sum().backward()
            opt.step()
            sched.step()
        buf = io.BytesIO()
        L.save({"opt": opt, "sched": sched}, buf)
        buf.seek(0)
        back = L.load(buf, weights_only=False)
        state = back["opt"].state_dict()["state"][0]
        out[L.__name__] = (type(back["opt"]).__name__, back["sched"].get_last_lr(),
                           float(state["step"]), state["exp_avg"].tolist())
    assert out["ember"][:3] == out["torch"][:3] == ("Adam", [0.05], 3.0)
    # (Adam's moments round as ember's ops do: within float32 ulps of torch's fused kernel)
    np.testing.assert_allclose(out["ember"][3], out["torch"][3], rtol=1e-6)
