"""safetensors files: a dict of tensors as a JSON header plus one raw byte buffer.

Layout: an 8-byte little-endian header length N, N bytes of JSON (padded with
spaces to a multiple of 8), then the tensors' bytes, dense, row-major and
little-endian. The header maps each name to `{"dtype", "shape", "data_offsets":
[begin, end]}` (offsets into the buffer) plus an optional `"__metadata__"` dict of
strings. No code, no pickle: loading is safe by construction, and ember checks that
the offsets tile the buffer exactly before making any tensor.

Written like the reference implementation: tensors sorted by dtype (widest first,
in the format's dtype order) then by name, so files match byte for byte. Views and
other non-contiguous tensors are written in logical (row-major) order; tensors
that share memory are written once each (no sharing in this format).
"""

from __future__ import annotations

import json
import os
import struct
import sys

import ml_dtypes
import numpy as np

from .. import _dtype as dt

__all__ = ["save", "save_file", "load", "load_file", "encode", "decode"]

# The format's dtype names, in its own order (the writer sorts by it, descending).
_ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ",
          "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"]
_RANK = {name: i for i, name in enumerate(_ORDER)}
_NUMPY = {
    "BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16,
    "F16": np.float16, "BF16": ml_dtypes.bfloat16, "I32": np.int32, "U32": np.uint32,
    "F32": np.float32, "C64": np.complex64, "F64": np.float64, "I64": np.int64,
    "U64": np.uint64, "F8_E5M2": ml_dtypes.float8_e5m2, "F8_E4M3": ml_dtypes.float8_e4m3fn,
    "F8_E8M0": ml_dtypes.float8_e8m0fnu, "F8_E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "F8_E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
}
_CODE = {np.dtype(v): k for k, v in _NUMPY.items()}
_MAX_HEADER = 100_000_000  # the reference implementation's limit


class SafetensorError(ValueError):
    """A safetensors file or header is malformed."""


# --- writing -------------------------------------------------------------------------------

def _array(name: str, t) -> np.ndarray:
    from .._tensor import Tensor

    if not isinstance(t, Tensor):
        raise TypeError(f"tensor {name!r} is a {type(t).__name__}, expected a Tensor")
    a = t.detach().cpu().numpy()
    if np.dtype(a.dtype) not in _CODE:
        raise ValueError(f"tensor {name!r}: safetensors has no dtype for {t.dtype!r}")
    # NOTE: copy into row-major order: writing a view's raw memory would scramble it.
    return np.array(a, order="C", copy=True)


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors encoding of `tensors` (a dict of name -> Tensor) as bytes."""
    return encode({str(k): _array(k, v) for k, v in tensors.items()}, metadata)


def encode(arrays: dict, metadata: dict | None = None) -> bytes:
    """The safetensors encoding of `arrays` (name -> row-major NumPy array) as bytes."""
    for k, a in arrays.items():
        if np.dtype(a.dtype) not in _CODE:
            raise ValueError(f"tensor {k!r}: safetensors has no dtype for {a.dtype}")
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str)
                                        for k, v in metadata.items()):
        raise ValueError("safetensors metadata must map strings to strings")
    order = sorted(arrays, key=lambda k: (-_RANK[_CODE[arrays[k].dtype]], k))
    header: dict = {"__metadata__": dict(metadata)} if metadata else {}
    offset = 0
    for k in order:
        a = arrays[k]
        header[k] = {"dtype": _CODE[a.dtype], "shape": list(a.shape),
                     "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    swap = sys.byteorder == "big"  # the format is little-endian
    return b"".join([struct.pack("<Q", len(raw)), raw] +
                    [(arrays[k].byteswap() if swap else arrays[k]).tobytes() for k in order])


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write `tensors` to `filename` in the safetensors format."""
    data = save(tensors, metadata)
    with open(filename, "wb") as f:
        f.write(data)


# --- reading --------------------------------------------------------------------------------

def _parse(buf) -> tuple[dict, dict, int]:
    """(entries, metadata, start of the byte buffer), with every offset checked."""
    if len(buf) < 8:
        raise SafetensorError("file too short for a safetensors header")
    n = struct.unpack("<Q", bytes(buf[:8]))[0]
    if n > _MAX_HEADER or 8 + n > len(buf):
        raise SafetensorError(f"header length {n} is larger than the file")
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorError(f"header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorError("header must be a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise SafetensorError("__metadata__ must map strings to strings")
    start = 8 + n
    spans = []
    for name, e in header.items():
        if not isinstance(e, dict) or e.get("dtype") not in _NUMPY:
            raise SafetensorError(f"tensor {name!r}: unknown or missing dtype")
        shape, offs = e.get("shape"), e.get("data_offsets")
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise SafetensorError(f"tensor {name!r}: bad shape {shape!r}")
        if not isinstance(offs, list) or len(offs) != 2 or not all(type(o) is int for o in offs):
            raise SafetensorError(f"tensor {name!r}: bad data_offsets {offs!r}")
        count = int(np.prod(shape, dtype=object)) if shape else 1
        if offs[1] - offs[0] != count * np.dtype(_NUMPY[e["dtype"]]).itemsize or offs[0] < 0:
            raise SafetensorError(f"tensor {name!r}: data_offsets {offs} do not match shape "
                                  f"{shape} of {e['dtype']}")
        spans.append((offs[0], offs[1], name))
    # The tensors must tile the buffer exactly: no gaps, no overlaps, nothing left over.
    end = 0
    for b, e, name in sorted(spans):
        if b != end:
            raise SafetensorError(f"tensor {name!r} does not start where the previous ends")
        end = e
    if start + end != len(buf):
        raise SafetensorError(f"buffer holds {len(buf) - start} bytes, header describes {end}")
    return header, metadata, start


def decode(buf) -> tuple[dict, dict]:
    """(name -> NumPy array, metadata) of safetensors bytes, every offset checked."""
    header, metadata, start = _parse(buf)
    out = {}
    for name, e in header.items():
        np_dtype = np.dtype(_NUMPY[e["dtype"]])
        b, end = e["data_offsets"]
        a = np.frombuffer(buf, np_dtype, (end - b) // np_dtype.itemsize, start + b).copy()
        if sys.byteorder == "big":
            a = a.byteswap()
        out[name] = a.reshape(e["shape"])
    return out, metadata


def _tensors(arrays: dict) -> dict:
    from ..ops.creation import from_numpy

    return {name: from_numpy(a) if a.dtype in dt._BY_NP else _extra(a)
            for name, a in arrays.items()}


def _extra(a: np.ndarray):
    """float8 / uint16-64 tensors, which ember holds with the checkpoint loader's dtypes."""
    from .._storage import Storage
    from .._tensor import _make
    from .._view import contiguous_strides
    from ..serialization import _V3_NUMPY, _extra_dtype

    name = next(k for k, v in _V3_NUMPY.items() if np.dtype(v) == a.dtype)
    flat = a.reshape(-1)
    return _make(Storage(flat, flat.nbytes), a.shape, contiguous_strides(a.shape), 0,
                 _extra_dtype(name))


def load(data: bytes) -> dict:
    """Tensors from safetensors bytes."""
    return _tensors(decode(data)[0])


def load_file(filename, device="cpu") -> dict:
    """Tensors from a safetensors file (name -> Tensor), on `device`."""
    with open(filename, "rb") as f:
        data = f.read()
    out = load(data)
    if str(device) != "cpu":
        out = {k: v.to(device) for k, v in out.items()}
    return out


def load_metadata(filename) -> dict:
    """The `__metadata__` strings of a safetensors file (reads only the header)."""
    size = os.path.getsize(filename)
    with open(filename, "rb") as f:
        head = f.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
        if n > min(size - 8, _MAX_HEADER):
            raise SafetensorError(f"header length {n} is larger than the file")
        raw = head + f.read(n)
    try:
        header = json.loads(raw[8:].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorError(f"header is not valid JSON: {e}") from None
    return header.get("__metadata__") or {}
