"""NumPy arrays, scalars and dtypes under `load(..., weights_only=False)`: loaded as torch
loads them, from files either library wrote, while every argument a file could bend is
checked first (`ember/serialization/_numpy.py`)."""

import io
import pickle

import numpy as np
import pytest
import torch
from numpy._core.multiarray import _reconstruct, scalar

import ember
from ember.serialization import UnpicklingError
from hostile_checkpoints import checkpoint

OBJECTS = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3), "big_endian": np.arange(3, dtype=">f8"),
    "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "strided": np.arange(12.0)[::3], "str": np.array(["a", "bc"]), "bytes": np.array([b"ab"]),
    "object": np.array([1, "a", None], dtype=object), "0d": np.array(2.0),
    "empty": np.zeros((0, 3)), "bool": np.array([True]), "c64": np.array([1j], np.complex64),
    "f16": np.ones(2, np.float16), "u8": np.arange(3, dtype=np.uint8),
    "s_f64": np.float64(0.5), "s_i32": np.int32(7), "s_bool": np.bool_(False),
    "s_c128": np.complex128(1 + 1j), "dtype": np.dtype("float32"), "dtype_be": np.dtype(">i4"),
    "dtype_str": np.dtype("U3"), "state": {"acc": np.float64(0.9), "w": np.ones(2), "n": None},
}


def _same(a, b) -> bool:
    if type(a) is dict:
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return (type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
                and a.strides == b.strides and (a == b).all())
    return type(a) is type(b) and a == b and getattr(a, "dtype", None) == getattr(b, "dtype", None)


@pytest.mark.parametrize("writer", [torch.save, ember.save], ids=["torch", "ember"])
@pytest.mark.parametrize("name", list(OBJECTS))
def test_numpy_objects_load_as_torch_loads_them_without_weights_only(name, writer):
    buf = io.BytesIO()
    writer(OBJECTS[name], buf)
    expected = torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert _same(expected, ember.load(io.BytesIO(buf.getvalue()), weights_only=False))
    with pytest.raises(pickle.UnpicklingError) as refused:  # the default, as in torch
        torch.load(io.BytesIO(buf.getvalue()))
    with pytest.raises(UnpicklingError, match="Unsupported global: GLOBAL numpy") as e:
        ember.load(io.BytesIO(buf.getvalue()))
    assert str(e.value) == str(refused.value)  # torch's words, naming the same global


class _Reduce:
    """Pickles as `fn(*args)` then BUILD `state`: a file that bends numpy's arguments."""

    def __init__(self, fn, args, state=None) -> None:
        self.rv = (fn, args) if state is None else (fn, args, state)

    def __reduce__(self):
        return self.rv


class _DtypeCopy:
    """Pickles as numpy.dtype(code, False, False) plus a BUILD: a file asking for NumPy's
    shared dtype object, then rewriting it."""

    def __init__(self, code, state) -> None:
        self.rv = (np.dtype, (code, False, False), state)

    def __reduce__(self):
        return self.rv


F8 = np.dtype("f8")
HOSTILE = {
    "too_few_bytes": _Reduce(_reconstruct, (np.ndarray, (0,), b"b"),
                             (1, (10**6,), F8, False, b"ab")),
    "negative_shape": _Reduce(_reconstruct, (np.ndarray, (0,), b"b"),
                              (1, (-1,), F8, False, b"")),
    "huge_shape_zero_size": _Reduce(_reconstruct, (np.ndarray, (0,), b"b"),
                                    (1, (2**40, 2**40), np.dtype("V0"), False, b"")),
    "object_count_lie": _Reduce(_reconstruct, (np.ndarray, (0,), b"b"),
                                (1, (5,), np.dtype(object), False, [1])),
    "reconstruct_allocates": _Reduce(_reconstruct, (np.ndarray, (10**9,), b"b")),
    "structured_dtype": np.zeros(2, dtype=[("a", "f4")]),
    "datetime_dtype": np.array(["2020-01-01"], dtype="M8[D]"),
    "scalar_byte_lie": _Reduce(scalar, (F8, b"\x00" * 3)),
    "dtype_state_elsize": _DtypeCopy("U2", (3, "<", None, None, None, 10**9, 4, 8)),
    "dtype_state_fields": _DtypeCopy("V8", (3, "|", None, ("a",), {"a": (F8, 0)}, 8, 1, 0)),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_bent_numpy_arguments_are_refused(name):
    raw = checkpoint(pickle.dumps(HOSTILE[name], protocol=2))
    with pytest.raises(UnpicklingError):
        ember.load(io.BytesIO(raw), weights_only=False)


def test_a_file_never_rewrites_numpys_shared_dtypes():
    # pickle asks for a copy (copy=True); a file asking for the shared float64 dtype and
    # then flipping its byte order gets a copy anyway
    raw = checkpoint(pickle.dumps(_DtypeCopy("f8", (3, ">", None, None, None, -1, -1, 0)),
                                  protocol=2))
    got = ember.load(io.BytesIO(raw), weights_only=False)
    assert got is not np.dtype("f8") and got.byteorder == ">"
    assert np.dtype("f8").byteorder == "=" and np.ones(1).dtype.isnative
