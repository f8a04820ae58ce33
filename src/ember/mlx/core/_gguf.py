"""GGUF files (ggml's docs/gguf.md) as MLX 0.32.4 writes and reads them: `save_gguf`
and `load_gguf`, which `_io.load` calls for `.gguf`. NumPy only.

A GGUF file is a header, metadata key-values, one info record per tensor (name, dims in
ggml's reversed order, type, data offset) and then the tensor data, each tensor aligned
to 32 bytes unless the metadata says `general.alignment`. MLX writes float32, float16,
int8, int16 and int32 tensors. It reads those back as they are; Q4_0, Q4_1 and Q8_0
tensors as MLX-quantized triples (`w`, `w.scales`, `w.biases`); and BF16, Q2_K, Q4_K
and Q6_K tensors dequantized to float16 by the gguflib C library it links.
"""

from __future__ import annotations

import math
import os
import struct

import numpy as np

from ._array import array, array_from_numpy, numpy_of
from ._binding import bad_call
from ._unordered import hash_order, reorder

# metadata value kinds (gguf_metadata_value_type)
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = range(10)
UINT64, INT64, FLOAT64 = 10, 11, 12

# the NumPy type of each fixed-size kind's bytes
_KIND_NP = {UINT8: "<u1", INT8: "<i1", UINT16: "<u2", INT16: "<i2", UINT32: "<u4",
            INT32: "<i4", FLOAT32: "<f4", BOOL: "<u1", UINT64: "<u8", INT64: "<i8",
            FLOAT64: "<f8"}

# the kind MLX writes for a metadata array of each dtype (float16 etc. are refused)
_KIND_OF_DTYPE = {"float32": FLOAT32, "int64": INT64, "int32": INT32, "int16": INT16,
                  "int8": INT8, "uint64": UINT64, "uint32": UINT32, "uint16": UINT16,
                  "uint8": UINT8, "bool": BOOL}

# tensor types (ggml_type) with (weights per block, bytes per block), as gguflib lists
# them, but for Q2_K's 84 bytes: gguflib's table says 82 while its decoder (and ggml)
# reads 84. The removed types 4 and 5 are left out; types from 31 on end the tensor list.
F32, F16, Q4_0, Q4_1, Q8_0, Q2_K, Q4_K, Q6_K, BF16 = 0, 1, 2, 3, 8, 10, 12, 14, 30
_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24),
           8: (32, 34), 9: (32, 40), 10: (256, 84), 11: (256, 110), 12: (256, 144),
           13: (256, 176), 14: (256, 210), 15: (256, 292), 16: (256, 66), 17: (256, 74),
           18: (256, 98), 19: (256, 110), 20: (256, 50), 21: (256, 110), 22: (256, 82),
           23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
           29: (256, 56), 30: (1, 2)}
_TYPE_COUNT = 31

# tensor types stored as they are, and the dtype names that write to them
_PLAIN = {F32: "<f4", F16: "<f2", 24: "<i1", 25: "<i2", 26: "<i4"}
_TYPE_OF_DTYPE = {"float32": F32, "float16": F16, "int8": 24, "int16": 25, "int32": 26}

_MAX_DIMS = 8  # gguflib's GGUF_TENSOR_MAX_DIM
_SAVE_GGUF = ("save_gguf(file: file | str | pathlib.Path, arrays: dict[str, array], "
              "metadata: dict[str, array | str | list[str]])")
_CORRUPT = "Perhaps an incomplete download or corrupt file?"


def _pad(offset: int, alignment: int) -> int:
    """Bytes of padding that bring `offset` to a multiple of `alignment`."""
    return -offset % alignment


def _alignment(kind: int, value, where: str) -> int | None:
    """The data alignment a `general.alignment` entry sets (only a uint32 scalar does,
    as in gguflib), or None."""
    if kind != UINT32:
        return None
    if int(value) == 0:
        raise RuntimeError(f"[{where}] general.alignment must be positive.")
    return int(value)


# ------------------------------------------------------------------------- writing


def _path(file, where: str) -> str:
    if not isinstance(file, (str, os.PathLike)) or not isinstance(os.fspath(file), str):
        raise ValueError(f"[{where}] Input must be a string")
    return os.fspath(file)


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack("<Q", len(data)) + data


def _metadata_value(value) -> tuple[int, bytes]:
    """The kind and bytes of one metadata value: a str, a list of str, or a 0-d (written
    as a scalar) or 1-D array, refused where MLX refuses it."""
    if isinstance(value, str):
        return STRING, _string(value)
    if isinstance(value, (list, tuple)):
        return ARRAY, struct.pack("<IQ", STRING, len(value)) + b"".join(map(_string, value))
    if value.ndim > 1:
        raise RuntimeError("[save_gguf] Cannot save arrays with more than one dimension.")
    if value.size == 0:
        raise RuntimeError("[save_gguf] Cannot save empty arrays.")
    kind = _KIND_OF_DTYPE.get(value.dtype.name)
    if kind is None:
        raise ValueError(f"[save_gguf] array type {value.dtype.name} not support for metadata.")
    data = np.ascontiguousarray(numpy_of(value)).astype(_KIND_NP[kind]).tobytes()
    if value.ndim == 0:
        return kind, data
    return ARRAY, struct.pack("<IQ", kind, value.size) + data


def _check_arrays(arrays) -> None:
    """Refuse what MLX's bindings cannot convert to a dict of str to array (MLX itself
    then says only `std::bad_cast`)."""
    for k, v in arrays.items():
        if not isinstance(k, str) or not isinstance(v, array):
            raise RuntimeError(f"[save_gguf] Expected str keys and array values; got "
                               f"{type(v).__name__} for key {k!r}.")


def _check_metadata(metadata) -> None:
    """Refuse metadata values that are not an array, a str or a list of str (None gets
    through, to be refused later as MLX refuses it)."""
    for k, v in metadata.items():
        ok = v is None or isinstance(v, (str, array)) or (
            isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v))
        if not isinstance(k, str) or not ok:
            raise RuntimeError(f"[save_gguf] Metadata values must be an array, a str or a "
                               f"list of str; got {type(v).__name__} for key {k!r}.")


def _encode(arrays: dict, metadata: dict) -> bytes:
    alignment = 32
    entries = []
    # NOTE: MLX passes both dicts through C++ unordered_maps and writes in their order.
    for key in hash_order(metadata):
        value = metadata[key]
        if value is None:
            raise RuntimeError("[save_gguf] Received unexpected type in metadata")
        kind, data = _metadata_value(value)
        if key == "general.alignment":
            alignment = _alignment(kind, value, "save_gguf") or alignment
        entries.append(_string(key) + struct.pack("<I", kind) + data)

    infos, blobs, offset = [], [], 0
    for key in hash_order(arrays):
        value = arrays[key]
        gguf_type = _TYPE_OF_DTYPE.get(value.dtype.name)
        if gguf_type is None:
            raise RuntimeError(f"[save_gguf] dtype {value.dtype.name} is not supported")
        dims = value.shape[::-1]  # ggml lists the fastest-moving dimension first
        offset += _pad(offset, alignment)
        infos.append(_string(key) + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims,
                                                gguf_type, offset))
        blobs.append(np.ascontiguousarray(numpy_of(value)).tobytes())
        offset += len(blobs[-1])

    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(entries)))
    out += b"".join(entries) + b"".join(infos)
    for blob in blobs:
        out += bytes(_pad(len(out), alignment)) + blob
    return bytes(out)


def save_gguf(file, arrays: dict, metadata: dict | None = None) -> None:
    """Write a flat dict of arrays (float32, float16, int8, int16 or int32) and metadata
    (arrays of at most one dimension, strs, lists of str) as a `.gguf` file; the suffix is
    added when missing."""
    if not isinstance(arrays, dict) or not isinstance(metadata, (dict, type(None))):
        given = (file, arrays) if metadata is None else (file, arrays, metadata)
        raise bad_call("save_gguf", _SAVE_GGUF, given)
    _check_arrays(arrays)
    file = _path(file, "save_gguf")
    _check_metadata(metadata or {})
    data = _encode(arrays, metadata or {})
    path = file if file.endswith(".gguf") else file + ".gguf"
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError:
        raise RuntimeError("[save_gguf] gguf_create failed") from None


# ------------------------------------------------------------------------- reading


class _Reader:
    """A cursor over a file's bytes that refuses to read past their end."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int, what: str) -> bytes:
        if n > len(self.data) - self.pos:
            raise RuntimeError(f"[load_gguf] {what} extends past the end of the file. "
                               f"{_CORRUPT}")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def unpack(self, fmt: str, what: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def string(self, what: str, length_what: str | None = None) -> str:
        (n,) = self.unpack("<Q", length_what or what)
        return self.take(n, what).decode()

    def numbers(self, kind: int, count: int, what: str) -> np.ndarray:
        """`count` values of a fixed-size kind, as MLX returns them: bool as bool, float64
        narrowed to float32."""
        dtype = np.dtype(_KIND_NP[kind])
        values = np.frombuffer(self.take(count * dtype.itemsize, what), dtype)
        if kind == BOOL:
            return values != 0
        if kind == FLOAT64:
            with np.errstate(over="ignore"):  # past float32's range: infinity
                return values.astype(np.float32)
        return values.copy()


def _read_value(r: _Reader, kind: int):
    """One metadata value: a 0-d or 1-D NumPy array, a str or a list of str."""
    if kind in _KIND_NP:
        return r.numbers(kind, 1, "Metadata value").reshape(())
    if kind == STRING:
        return r.string("String metadata value")
    if kind != ARRAY:
        raise RuntimeError("[load_gguf] Received unexpected type.")
    item_kind, count = r.unpack("<IQ", "Metadata value")
    if item_kind in _KIND_NP:
        return r.numbers(item_kind, count, "Array metadata value")
    if item_kind == STRING:
        return [r.string("String metadata value", "Array metadata value")
                for _ in range(count)]
    if item_kind == ARRAY:
        raise ValueError("[load_gguf] Only supports loading 1-layer of nested arrays.")
    raise RuntimeError("[load_gguf] Multiple levels of nested arrays are not supported.")


def _read_metadata(r: _Reader, count: int) -> tuple[dict, int]:
    """The metadata (a later duplicate key wins, as in MLX) and the data alignment."""
    metadata, alignment = {}, 32
    for _ in range(count):
        key = r.string("Metadata key")
        (kind,) = r.unpack("<I", "Metadata key")
        metadata[key] = _read_value(r, kind)
        if key == "general.alignment":
            alignment = _alignment(kind, metadata[key], "load_gguf") or alignment
    return metadata, alignment


def _read_tensor_infos(r: _Reader, count: int) -> list[tuple]:
    """(name, shape in MLX's order, type, offset in the data section) per tensor."""
    infos = []
    for _ in range(count):
        name = r.string("Tensor info")
        (ndim,) = r.unpack("<I", "Tensor info")
        dims = r.unpack(f"<{ndim}Q", "Tensor info")
        gguf_type, offset = r.unpack("<IQ", "Tensor info")
        infos.append((name, tuple(reversed(dims)), gguf_type, offset))
    return infos


def _tensor_bytes(data: bytes, name: str, start: int, shape: tuple, gguf_type: int) -> bytes:
    """The bytes of one tensor, after MLX's checks that they lie inside the file."""
    if gguf_type not in _BLOCKS:
        raise RuntimeError("[load_gguf] gguf_tensor_to_f16 failed")
    per_block, block_bytes = _BLOCKS[gguf_type]
    size = -(-math.prod(shape) // per_block) * block_bytes

    def fail(what: str):
        return RuntimeError(f"[load_gguf] Tensor '{name}' {what}. {_CORRUPT}")

    if start >= 2**64:
        raise fail("has a data offset that overflows the data section")
    if start > len(data):
        raise fail("has a data offset past the end of the file")
    if size > len(data) - start:
        raise fail("extends past the end of the file")
    return data[start:start + size]


def load_gguf(file) -> tuple[dict, dict]:
    """The arrays and the metadata of a `.gguf` file, as MLX's `load` gives them."""
    file = _path(file, "load_gguf")
    try:
        with open(file, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        data = b""  # MLX opens a directory, then fails to map it
    except OSError:
        raise ValueError(f"[load_gguf] Failed to open {file}") from None
    if len(data) < 24 or data[:4] != b"GGUF":
        raise RuntimeError("[load_gguf] gguf_init failed")

    r = _Reader(data)
    r.take(8, "Header")  # magic and version (MLX reads any version as version 3)
    n_tensors, n_kv = r.unpack("<QQ", "Header")
    metadata, alignment = _read_metadata(r, n_kv)
    infos = _read_tensor_infos(r, n_tensors)
    data_start = r.pos + _pad(r.pos, alignment)

    arrays = {}
    for name, shape, gguf_type, offset in infos:
        if gguf_type >= _TYPE_COUNT:
            break  # gguflib stops listing tensors at an unknown type
        if len(shape) > _MAX_DIMS:
            raise RuntimeError(f"[load_gguf] Tensor '{name}' has {len(shape)} dimensions; "
                               f"GGUF allows at most {_MAX_DIMS}.")
        raw = _tensor_bytes(data, name, data_start + offset, shape, gguf_type)
        if gguf_type in (Q4_0, Q4_1, Q8_0):
            _add_quantized(arrays, name, shape, gguf_type, raw)
        else:
            _insert(arrays, name, _tensor(raw, shape, gguf_type))
    # NOTE: MLX inserts both, in the file's order, into C++ unordered_maps and hands back
    # their order.
    out = reorder({k: array_from_numpy(v) for k, v in arrays.items()})
    meta = reorder({k: array_from_numpy(v) if isinstance(v, np.ndarray) else v
                    for k, v in metadata.items()})
    return out, meta


def _insert(arrays: dict, name: str, value: np.ndarray) -> None:
    if name in arrays:
        raise RuntimeError(f"[load_gguf] Duplicate parameter name "
                           f"{array_from_numpy(arrays[name])!r} this can happend when "
                           f"loading quantized tensors.")
    arrays[name] = value


# ----------------------------------------------------------------- tensor decoding


def _tensor(raw: bytes, shape: tuple, gguf_type: int) -> np.ndarray:
    """A tensor of a type MLX stores as it is, or one gguflib dequantizes to float16."""
    count = math.prod(shape)
    if gguf_type in _PLAIN:
        values = np.frombuffer(raw, _PLAIN[gguf_type], count)
    elif gguf_type in _TO_FLOAT:
        with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN scales
            values = _float16(_TO_FLOAT[gguf_type](raw)[:count])
    else:
        raise RuntimeError("[load_gguf] gguf_tensor_to_f16 failed")
    return values.reshape(shape)


def _blocks(raw: bytes, gguf_type: int) -> np.ndarray:
    """The tensor's bytes, one row per quantization block."""
    return np.frombuffer(raw, np.uint8).reshape(-1, _BLOCKS[gguf_type][1])


def _half(blocks: np.ndarray, at: int) -> np.ndarray:
    """The float16 at byte `at` of each block, as a float16 column."""
    return blocks[:, at:at + 2].copy().view("<f2")


def _add_quantized(arrays: dict, name: str, shape: tuple, gguf_type: int, raw: bytes):
    """A Q4_0, Q4_1 or Q8_0 tensor as MLX's `quantize` would hold it: uint32-packed
    weights (group size 32, 4 or 8 bits) under `name`, float16 scales and biases under
    `name` less its last 7 characters (".weight") plus ".scales" and ".biases"."""
    if not shape:
        raise RuntimeError(f"[load_gguf] quantized tensor {name} has no dimensions")
    if shape[-1] % 32:
        raise RuntimeError(f"[load_gguf] tensor {name}has incompatible last dim shape: "
                           f"{shape[-1]}")
    blocks = _blocks(raw, gguf_type)
    scales = _half(blocks, 0)
    if gguf_type == Q8_0:
        # int8 q stored as the unsigned q + 128 (flip the sign bit); w = s*q - 128*s
        quants = blocks[:, 2:] ^ 0x80
        biases = _mlx_times(-128, scales)
    else:
        # 16 bytes: weight j in the low nibble of byte j, weight 16+j in the high one
        nibbles = blocks[:, -16:]
        q = np.concatenate([nibbles & 0xF, nibbles >> 4], axis=1)
        quants = q[:, 0::2] | (q[:, 1::2] << 4)  # MLX packs low nibble first
        biases = _mlx_times(-8, scales) if gguf_type == Q4_0 else _half(blocks, 2)
    groups = (*shape[:-1], shape[-1] // 32)
    words = shape[-1] // (4 if gguf_type == Q8_0 else 8)  # uint32 words per row
    weights = np.ascontiguousarray(quants).view("<u4").reshape(*shape[:-1], words)
    # NOTE: MLX names the scales by cutting 7 characters off the name whatever they are
    # ("abcdefgh" gives "a.scales"); a name shorter than 7 is kept whole.
    prefix = name[:len(name) - 7] if len(name) >= 7 else name
    arrays.setdefault(name, weights)  # MLX does not check this name for duplicates
    _insert(arrays, prefix + ".scales", scales.reshape(groups))
    _insert(arrays, prefix + ".biases", biases.reshape(groups))


def _mlx_times(k: int, scales: np.ndarray) -> np.ndarray:
    """`k * scales` as MLX's float16 type computes it: in float32, rounded back to
    float16 (past 65504 to infinity), a NaN becoming 0x7D00 with its sign kept."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.float16(k) * scales
    nan = np.isnan(scales)
    out.view(np.uint16)[nan] = (scales.view(np.uint16)[nan] & 0x8000) | 0x7D00
    return out


def _float16(values: np.ndarray) -> np.ndarray:
    """float32 to float16 as gguflib's `to_half` rounds (to nearest even, NaN to the
    quiet NaN 0x7E00 with the sign kept)."""
    with np.errstate(over="ignore", invalid="ignore"):
        half = values.astype(np.float16)
    nan = np.isnan(values)
    if nan.any():
        sign = (values.view(np.uint32)[nan] >> 16) & 0x8000
        half.view(np.uint16)[nan] = sign | 0x7E00
    return half


# gguflib dequantizes in float32, one product or difference at a time; the NumPy below
# keeps its order of operations so the float16 results match bit for bit.


def _q_k_layout() -> tuple:
    """For each of a Q2_K or Q6_K block's 256 weights: its 128-weight cluster, its index
    j in the cluster, and the shift (2 bits per 32 weights) of its 2-bit field. (uint8
    shifts keep the quants uint8, and so the products float32.)"""
    i = np.arange(256)
    return i // 128, i % 128, (i % 128 // 32 * 2).astype(np.uint8)


def _bf16(raw: bytes) -> np.ndarray:
    return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)


def _q2_k(raw: bytes) -> np.ndarray:
    """256 weights per block: 16 bytes of 4-bit (min, scale) pairs, 64 bytes of 2-bit
    quants, float16 scale-of-scales and scale-of-mins; w = q * scale - min."""
    b = _blocks(raw, Q2_K)
    d, dmin = _half(b, 80).astype(np.float32), _half(b, 82).astype(np.float32)
    cluster, j, shift = _q_k_layout()
    sub = b[:, cluster * 8 + j // 16]  # the 16-weight sub-block's (min, scale) byte
    q = (b[:, 16 + cluster * 32 + j % 32] >> shift) & 3
    return (q * (d * (sub & 0xF)) - dmin * (sub >> 4)).reshape(-1)


def _q4_k(raw: bytes) -> np.ndarray:
    """256 weights per block: float16 scale-of-scales and scale-of-mins, 12 bytes of eight
    6-bit (scale, min) pairs, 128 bytes of 4-bit quants; w = q * scale - min."""
    b = _blocks(raw, Q4_K)
    d, dmin = _half(b, 0).astype(np.float32), _half(b, 2).astype(np.float32)
    s = b[:, 4:16]
    sc = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 0xF) | (s[:, 0:4] >> 6 << 4)], 1)
    mn = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | (s[:, 4:8] >> 6 << 4)], 1)
    scale, low = (sc * d)[:, 0::2, None], (mn * dmin)[:, 0::2, None]
    qs = b[:, 16:].reshape(-1, 4, 32)
    # NOTE: gguflib applies sub-block 2k's scale and min to the high nibbles too, where
    # llama.cpp uses sub-block 2k+1's; MLX's values are gguflib's, so these are too.
    q = np.concatenate([qs & 0xF, qs >> 4], axis=2)
    return (q * scale - low).reshape(-1)


def _q6_k(raw: bytes) -> np.ndarray:
    """256 weights per block: 128 bytes of low 4 bits, 64 bytes of high 2 bits, 16 int8
    sub-block scales, a float16 scale-of-scales; w = (d * scale) * (q - 32)."""
    b = _blocks(raw, Q6_K)
    d = _half(b, 208).astype(np.float32)
    cluster, j, shift = _q_k_layout()
    low = (b[:, cluster * 64 + j % 64] >> (j // 64 * 4).astype(np.uint8)) & 0xF
    high = (b[:, 128 + cluster * 32 + j % 32] >> shift) & 3
    q = (low | high << 4).astype(np.int8) - np.int8(32)
    scales = b[:, 192:208].view(np.int8)[:, cluster * 8 + j // 16]
    return ((d * scales) * q).reshape(-1)


_TO_FLOAT = {BF16: _bf16, Q2_K: _q2_k, Q4_K: _q4_k, Q6_K: _q6_k}
