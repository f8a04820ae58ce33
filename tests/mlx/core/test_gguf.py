"""mx.save_gguf / mx.load of `.gguf` files: interchangeable with MLX 0.32.4's, and read
as MLX reads files it did not write (every metadata kind; Q4_0, Q4_1 and Q8_0 tensors as
quantized triples; BF16, Q2_K, Q4_K and Q6_K dequantized to float16), bit for bit."""

import pathlib
import struct

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")


# ------------------------------------------------- GGUF files written by hand (the spec)

def _str(s: str) -> bytes:
    return struct.pack("<Q", len(s.encode())) + s.encode()


def _kv(key: str, kind: int, payload: bytes) -> bytes:
    """One metadata entry: key, value kind (0 uint8 ... 12 float64), value bytes."""
    return _str(key) + struct.pack("<I", kind) + payload


def _gguf(kvs=(), tensors=(), alignment=32) -> bytes:
    """A GGUF v3 file; `tensors` holds (name, dims in ggml's order, type, data bytes)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    data = b""
    for name, dims, gguf_type, raw in tensors:
        data += bytes(-len(data) % alignment)
        out += _str(name) + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims, gguf_type,
                                        len(data))
        data += raw
    return out + bytes(-len(out) % alignment) + data if tensors else out


def _blocks(rng, count: int, size: int, halves=(), raw_bits=False) -> bytes:
    """`count` quantization blocks of random bytes; the float16 fields at the byte
    offsets `halves` get ordinary scales unless `raw_bits` (then NaN and inf occur)."""
    blocks = rng.integers(0, 256, (count, size), dtype=np.uint8)
    if not raw_bits:
        for at in halves:
            scales = (rng.normal(size=count) * 0.1).astype(np.float16)
            blocks[:, at:at + 2] = scales.view(np.uint8).reshape(count, 2)
    return blocks.tobytes()


# ---------------------------------------------------------------------- comparing

def _contents(value):
    """What a loaded array or metadata value holds: dtype, shape and bytes."""
    if isinstance(value, (str, list)):
        return value
    values = np.array(value)
    if values.dtype == bool:  # NOTE: MLX keeps a GGUF bool's byte (2 is a True)
        values = values != 0
    return str(value.dtype), value.shape, values.tobytes()


def _load(module, path):
    """`(arrays, metadata)` as `module.load` gives them, made comparable, or the
    exception's (type name, message)."""
    try:
        arrays, metadata = module.load(str(path), return_metadata=True)
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)
    return ({k: _contents(v) for k, v in arrays.items()},
            {k: _contents(v) for k, v in metadata.items()})


def _loads_as_mlx(path, data: bytes | None = None):
    """Ember reads the file (written with `data`, if given) as MLX does."""
    if data is not None:
        pathlib.Path(path).write_bytes(data)
    ours, theirs = _load(mx, path), _load(mlx, path)
    assert ours == theirs
    return ours


def _outcomes(call: str, **names) -> tuple:
    """The outcomes of `call` with `mx` bound to ember's face and to MLX (and `names`
    bound to their values): ("ok", value) or (exception type name, message)."""
    setup = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    return tuple(outcome(call, m, setup, show=None) for m in (mx, mlx))


def _same_outcome(call: str, **names):
    """`call` raises the same exception, with the same message, in ember and in MLX;
    ember's (type name, message)."""
    ours, theirs = _outcomes(call, **names)
    assert ours[0] == theirs[0] and ours[0] != "ok", (ours, theirs)
    assert ours[1] == theirs[1]
    return ours


# ----------------------------------------------------- round trips through both sides

def _arrays(m):
    return {"w": m.array([[1.5, -2.0, 0.25], [3.0, 4.0, -5.5]]),
            "wt": m.array([[1.5, -2.0, 0.25], [3.0, 4.0, -5.5]]).T,  # not contiguous
            "h": m.array([1, 2, 65504], m.float16),
            "i8": m.array([-128, 127], m.int8), "i16": m.array([-3, 300], m.int16),
            "i32": m.arange(24).reshape(2, 3, 4), "scalar": m.array(2.5),
            "empty": m.zeros((0, 3))}


def _metadata(m):
    return {"name": "tiny", "tokens": ["<s>", "", "é✓"], "none": [],
            "f": m.array(1.5), "i": m.array(-7), "u8": m.array(3, m.uint8),
            "u64": m.array(2**40 + 5, m.uint64), "flag": m.array(True),
            "v": m.array([1, 2, 3]), "one": m.array([4], m.int64),
            "u16": m.array([1, 65535], m.uint16), "u32": m.array([7], m.uint32),
            "i8": m.array([-1], m.int8), "i16": m.array([-2, 2], m.int16),
            "bools": m.array([True, False]), "floats": m.array([0.5, -1.0])}


@pytest.mark.parametrize("writer,reader", [(mx, mlx), (mlx, mx)])
def test_written_by_one_read_by_the_other(tmp_path, writer, reader):
    path = tmp_path / "model.gguf"
    writer.save_gguf(str(path), _arrays(writer), _metadata(writer))
    assert _load(reader, path) == _load(writer, path)
    arrays, metadata = _load(reader, path)
    assert arrays == {k: _contents(v) for k, v in _arrays(writer).items()}
    assert metadata == {k: _contents(v) for k, v in _metadata(writer).items()}


def test_scalars_stay_0d_and_1_element_arrays_stay_1d(tmp_path):
    mx.save_gguf(str(tmp_path / "s"), {}, {"a": mx.array(3), "b": mx.array([3])})
    _, metadata = mlx.load(str(tmp_path / "s.gguf"), return_metadata=True)
    assert metadata["a"].shape == () and metadata["b"].shape == (1,)


def test_file_is_byte_for_byte_mlx_file(tmp_path):
    # with one tensor and one key the order of MLX's (unordered) maps does not matter
    for m, name in ((mx, "ours"), (mlx, "theirs")):
        m.save_gguf(str(tmp_path / name), {"w": m.arange(5, dtype=m.float16)},
                    {"tokens": ["a", "bc"]})
    assert (tmp_path / "ours.gguf").read_bytes() == (tmp_path / "theirs.gguf").read_bytes()


def test_suffix_added_format_named_and_pathlib(tmp_path):
    mx.save_gguf(tmp_path / "w", {"a": mx.ones(2)})  # a pathlib.Path; ".gguf" added
    (tmp_path / "w.gguf").rename(tmp_path / "w.bin")
    assert mx.load(str(tmp_path / "w.bin"), format="gguf")["a"].tolist() == [1.0, 1.0]
    mx.save_gguf(str(tmp_path / "x.gguf"), {"a": mx.ones(1)})  # no second suffix
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.bin", "x.gguf"]
    assert list(mx.load(tmp_path / "x.gguf")) == ["a"]  # without metadata: the arrays


def test_written_with_declared_alignment(tmp_path):
    # NOTE: MLX writes 32-byte-aligned data whatever `general.alignment` says, then reads
    # with the declared alignment (its own file fails to load); ember writes with it.
    path = str(tmp_path / "a.gguf")
    mx.save_gguf(path, {"x": mx.arange(3)}, {"general.alignment": mx.array(64, mx.uint32)})
    arrays, _ = _loads_as_mlx(path)
    assert arrays["x"] == _contents(mx.arange(3))


# ------------------------------------------------------------- refused when writing

@pytest.mark.parametrize("dtype", ["bfloat16", "int64", "uint8", "uint16", "uint32",
                                   "uint64", "bool_", "float64", "complex64"])
def test_tensor_dtype_refused_as_mlx(tmp_path, dtype):
    kind, message = _same_outcome(f"mx.save_gguf(path, {{'a': mx.ones(2, mx.{dtype})}})",
                                  path=str(tmp_path / "a"))
    assert kind == "RuntimeError" and "is not supported" in message


@pytest.mark.parametrize("value", [
    "mx.ones((2, 2))",                # more than one dimension
    "mx.array([], mx.float32)",       # empty
    "mx.array([1], mx.float16)",      # a dtype GGUF metadata has no kind for
    "mx.array(1, mx.bfloat16)",
    "mx.array([1.0], mx.float64)",
    "mx.array([1 + 2j])",
    "None",
])
def test_metadata_value_refused_as_mlx(tmp_path, value):
    _same_outcome(f"mx.save_gguf(path, {{}}, {{'k': {value}}})", path=str(tmp_path / "a"))


@pytest.mark.parametrize("value", ["3", "1.5", "True", "[1, 2]", "['x', 1]", "b'x'",
                                   "{'b': 'c'}", "np.array([1, 2])"])
def test_metadata_kind_refused_with_a_message(tmp_path, value):
    # MLX's bindings raise RuntimeError("std::bad_cast"); ember names the key and kind
    ours, theirs = _outcomes(f"mx.save_gguf(path, {{}}, {{'k': {value}}})",
                             path=str(tmp_path / "a"))
    assert ours[0] == theirs[0] == "RuntimeError"
    assert "'k'" in ours[1] and "list of str" in ours[1]


@pytest.mark.parametrize("arrays", ["{'a': 1}", "{'a': np.ones(2)}", "{'a': [1.0]}",
                                    "{1: mx.ones(2)}"])
def test_non_array_refused_with_a_message(tmp_path, arrays):
    ours, theirs = _outcomes(f"mx.save_gguf(path, {arrays})", path=str(tmp_path / "a"))
    assert ours[0] == theirs[0] == "RuntimeError" and "array values" in ours[1]


@pytest.mark.parametrize("call", [
    "mx.save_gguf(path, [mx.ones(2)])",                   # not a dict: TypeError
    "mx.save_gguf(path, {'a': mx.ones(2)}, ['x'])",
    "mx.save_gguf(open(path + '.gguf', 'wb'), {'a': mx.ones(2)})",  # not a path
    "mx.save_gguf(path + '/no/such/dir/a', {'a': mx.ones(2)})",
])
def test_save_errors_as_mlx(tmp_path, call):
    ours, theirs = _outcomes(call, path=str(tmp_path / "a"))
    assert ours[0] == theirs[0] != "ok"
    if ours[0] != "TypeError":  # MLX's TypeError lists its signature instead
        assert ours[1] == theirs[1]


# ----------------------------------------------------------------- refused when reading

@pytest.mark.parametrize("data", [None, b"", b"GGUF\x03\x00\x00\x00", b"NOPE" * 10])
def test_missing_or_not_gguf_file_as_mlx(tmp_path, data):
    path = tmp_path / "f.gguf"
    if data is not None:
        path.write_bytes(data)
    _same_outcome("mx.load(path, return_metadata=True)", path=str(path))


def test_directory_and_file_object_as_mlx(tmp_path):
    (tmp_path / "d.gguf").mkdir()
    _same_outcome("mx.load(path)", path=str(tmp_path / "d.gguf"))
    (tmp_path / "f.gguf").write_bytes(_gguf())
    _same_outcome("mx.load(open(path, 'rb'))", path=str(tmp_path / "f.gguf"))
    _same_outcome("mx.load(open(path, 'rb'), format='gguf')", path=str(tmp_path / "f.gguf"))


@pytest.mark.parametrize("data", [
    _gguf([_kv("k", 8, struct.pack("<Q", 10) + b"short")]),          # string cut short
    _gguf([_kv("k", 9, struct.pack("<IQ", 5, 4) + bytes(8))]),       # array cut short
    _gguf([_kv("k", 9, struct.pack("<IQ", 8, 2) + _str("a"))]),      # string array, too
    _gguf([_kv("k", 5, b"\x01")]),                                   # int32 cut short
    _gguf([_kv("k", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 0, 0))]),  # nested
    _gguf([_kv("k", 9, struct.pack("<IQ", 13, 1) + bytes(8))]),      # unknown item kind
    _gguf([_kv("k", 13, bytes(8))]),                                 # unknown kind
    _gguf([_kv("k", 8, struct.pack("<Q", 2) + b"\xff\xfe")]),        # not UTF-8
    _gguf([], [("t", [6], 0, bytes(24))])[:-4],                      # tensor cut short
    _gguf([], [("t", [2], 0, bytes(8)), ("t", [2], 0, bytes(8))]),   # duplicate name
])
def test_corrupt_file_as_mlx(tmp_path, data):
    path = tmp_path / "c.gguf"
    path.write_bytes(data)
    kind, message = _same_outcome("mx.load(path, return_metadata=True)", path=str(path))
    assert kind in ("RuntimeError", "ValueError", "UnicodeDecodeError")


def test_tensor_data_offset_past_the_end_as_mlx(tmp_path):
    data = bytearray(_gguf([], [("t", [2], 0, bytes(8))]))
    offset_at = 24 + 8 + 1 + 4 + 8 + 4  # header, name, ndim, dim, type, then the offset
    data[offset_at:offset_at + 8] = struct.pack("<Q", 4096)
    (tmp_path / "o.gguf").write_bytes(bytes(data))
    _, message = _same_outcome("mx.load(path)", path=str(tmp_path / "o.gguf"))
    assert "data offset past the end of the file" in message


def test_more_than_eight_dimensions_refused(tmp_path):
    # MLX aborts the process here (gguflib's assert), so ember is checked alone
    mx.save_gguf(str(tmp_path / "d"), {"a": mx.ones((1,) * 9)})
    with pytest.raises(RuntimeError, match="9 dimensions"):
        mx.load(str(tmp_path / "d.gguf"))


# ------------------------------------------------- metadata in files MLX did not write

# each fixed-size kind: its struct format and three values, the last read as a scalar
_SCALARS = {0: ("B", [0, 7, 255]), 1: ("b", [-128, 0, 127]), 2: ("H", [0, 1, 65535]),
            3: ("h", [-2, 0, 300]), 4: ("I", [1, 2, 2**32 - 1]), 5: ("i", [-1, 2, 3]),
            6: ("f", [-1.25, 3e38, 7.0]), 7: ("B", [1, 0, 2]),
            10: ("Q", [0, 2**63, 2**64 - 1]), 11: ("q", [-(2**63), 0, 5]),
            12: ("d", [0.1, 1e300, -2.5])}


@pytest.mark.parametrize("kind", sorted(_SCALARS))
def test_metadata_kind_read_as_mlx(tmp_path, kind):
    fmt, values = _SCALARS[kind]
    many = struct.pack("<IQ", kind, 3) + struct.pack(f"<3{fmt}", *values)
    one = struct.pack(f"<{fmt}", values[-1])
    # NOTE: MLX skips too few bytes after a float64 value (4 per item), so it must come
    # last: a file each for the array and the scalar
    for key, value_kind, payload in (("many", 9, many), ("one", kind, one)):
        data = _gguf([_kv("text", 8, _str("before")), _kv(key, value_kind, payload)])
        _, metadata = _loads_as_mlx(tmp_path / "k.gguf", data)
        assert metadata[key][1] == ((3,) if key == "many" else ())


def test_float64_and_bool_metadata_as_mlx_reads_them(tmp_path):
    data = _gguf([_kv("flags", 9, struct.pack("<IQ", 7, 3) + b"\x00\x02\x01"),
                  _kv("big", 9, struct.pack("<IQ", 12, 2) + struct.pack("<2d", 0.1, 1e300))])
    _loads_as_mlx(tmp_path / "f.gguf", data)
    _, metadata = mx.load(str(tmp_path / "f.gguf"), return_metadata=True)
    assert metadata["flags"].tolist() == [False, True, True]
    assert metadata["big"].dtype == mx.float32 and metadata["big"].tolist()[1] == np.inf


def test_strings_empty_arrays_and_repeated_keys_as_mlx(tmp_path):
    data = _gguf([_kv("names", 9, struct.pack("<IQ", 8, 2) + _str("a") + _str("é")),
                  _kv("nothing", 9, struct.pack("<IQ", 5, 0)),
                  _kv("no_names", 9, struct.pack("<IQ", 8, 0)),
                  _kv("k", 8, _str("first")), _kv("k", 8, _str("second"))])
    _, metadata = _loads_as_mlx(tmp_path / "s.gguf", data)
    assert metadata["k"] == "second" and metadata["no_names"] == []


def test_general_alignment_honoured_when_reading(tmp_path):
    align = _kv("general.alignment", 4, struct.pack("<I", 64))
    data = _gguf([align], [("a", [3], 0, np.arange(3, dtype="<f4").tobytes()),
                           ("b", [6], 0, np.arange(6, dtype="<f4").tobytes())], alignment=64)
    arrays, _ = _loads_as_mlx(tmp_path / "a.gguf", data)
    assert arrays["b"] == _contents(mx.arange(6, dtype=mx.float32))


# ------------------------------------------------------ tensors MLX did not write

def test_tensor_shapes_read_as_mlx(tmp_path):
    f = np.arange(6, dtype="<f4").tobytes()
    data = _gguf([], [("matrix", [3, 2], 0, f), ("ones", [3, 1, 2], 0, f),
                      ("scalar", [], 0, f[:4]), ("empty", [0, 3], 0, b""),
                      ("h", [6], 1, np.arange(6, dtype="<f2").tobytes()),
                      ("i8", [6], 24, bytes(range(6))), ("i16", [3], 25, bytes(6)),
                      ("i32", [1, 1], 26, bytes(4))])
    arrays, _ = _loads_as_mlx(tmp_path / "t.gguf", data)
    assert arrays["matrix"][1] == (2, 3) and arrays["scalar"][1] == ()


@pytest.mark.parametrize("gguf_type,size", [(6, 22), (7, 24), (9, 40), (11, 110),
                                            (13, 176), (27, 8), (28, 8)])
def test_unsupported_tensor_type_as_mlx(tmp_path, gguf_type, size):
    # Q5_0, Q5_1, Q8_1, Q3_K, Q5_K, I64, F64: no float16 conversion in MLX's gguflib
    per_block = 1 if gguf_type >= 24 else 32 if gguf_type < 10 else 256
    data = _gguf([], [("t", [per_block], gguf_type, bytes(size))])
    (tmp_path / "u.gguf").write_bytes(data)
    _same_outcome("mx.load(path)", path=str(tmp_path / "u.gguf"))


def test_unknown_tensor_type_ends_the_tensor_list_as_mlx(tmp_path):
    f = np.ones(2, "<f4").tobytes()
    data = _gguf([], [("a", [2], 0, f), ("odd", [2], 31, f), ("b", [2], 0, f)])
    arrays, _ = _loads_as_mlx(tmp_path / "u.gguf", data)
    assert list(arrays) == ["a"]


# gguf type, weights and bytes per block, byte offsets of the block's float16 fields
_TRIPLES = {"Q4_0": (2, 32, 18, (0,)), "Q4_1": (3, 32, 20, (0, 2)),
            "Q8_0": (8, 32, 34, (0,))}
_FLOAT16 = {"BF16": (30, 1, 2, ()), "Q2_K": (10, 256, 84, (80, 82)),
            "Q4_K": (12, 256, 144, (0, 2)), "Q6_K": (14, 256, 210, (208,))}


@pytest.mark.parametrize("raw_bits", [False, True])
@pytest.mark.parametrize("dims", [[32], [64, 3], [96, 2, 2], [32, 0]])
@pytest.mark.parametrize("name", sorted(_TRIPLES))
def test_quantized_tensor_loads_as_mlx_triple(tmp_path, name, dims, raw_bits):
    gguf_type, per_block, size, halves = _TRIPLES[name]
    count = int(np.prod(dims)) // per_block
    raw = _blocks(np.random.default_rng(gguf_type), count, size, halves, raw_bits)
    data = _gguf([], [("blk.0.weight", dims, gguf_type, raw)])
    arrays, _ = _loads_as_mlx(tmp_path / "q.gguf", data)
    bits = 8 if name == "Q8_0" else 4
    *rows, last = reversed(dims)
    assert arrays["blk.0.weight"][:2] == ("mlx.core.uint32", (*rows, last * bits // 32))
    assert arrays["blk.0.scales"][:2] == ("mlx.core.float16", (*rows, last // 32))
    assert arrays["blk.0.biases"][:2] == ("mlx.core.float16", (*rows, last // 32))


@pytest.mark.parametrize("name", sorted(_TRIPLES))
def test_quantized_triple_is_the_gguf_dequantization(tmp_path, name):
    # block 0: scale 0.5 (and bias -1 for Q4_1), quants 0, 1, 2, ...
    gguf_type, _, size, _ = _TRIPLES[name]
    q = np.arange(32)
    if name == "Q8_0":
        block = np.float16(0.5).tobytes() + (q - 16).astype(np.int8).tobytes()
        expected = 0.5 * (q - 16)
    else:
        nibbles = ((q[:16] % 16) | ((q[16:] % 16) << 4)).astype(np.uint8).tobytes()
        bias = np.float16(-1).tobytes() if name == "Q4_1" else b""
        block = np.float16(0.5).tobytes() + bias + nibbles
        expected = 0.5 * (q % 16) + (-1 if name == "Q4_1" else -4)
    assert len(block) == size
    (tmp_path / "q.gguf").write_bytes(_gguf([], [("x.weight", [32, 1], gguf_type, block)]))
    arrays = mx.load(str(tmp_path / "q.gguf"))
    got = mx.dequantize(arrays["x.weight"], arrays["x.scales"], arrays["x.biases"],
                        group_size=32, bits=8 if name == "Q8_0" else 4)
    assert got.tolist() == [expected.tolist()]


@pytest.mark.parametrize("name", sorted(_TRIPLES))
def test_quantized_nan_inf_and_huge_scales_as_mlx(tmp_path, name):
    # biases -8 * s and -128 * s overflow to -inf, and a NaN comes out as MLX's 0x7D00
    gguf_type, _, size, _ = _TRIPLES[name]
    scales = np.array([np.nan, -np.nan, np.inf, 1000, 60000, 6e-8], np.float16)
    blocks = np.zeros((len(scales), size), np.uint8)
    blocks[:, :2] = scales.view(np.uint8).reshape(-1, 2)
    blocks[:, 2:4] = scales[::-1].copy().view(np.uint8).reshape(-1, 2)  # Q4_1's biases
    data = _gguf([], [("x.weight", [32 * len(scales)], gguf_type, blocks.tobytes())])
    _loads_as_mlx(tmp_path / "q.gguf", data)


@pytest.mark.parametrize("tensor_name", ["w", "abcdefg", "abcdefgh", "x.weight",
                                         "model.layers.0.attn"])
def test_quantized_scales_named_as_mlx(tmp_path, tensor_name):
    # MLX cuts 7 characters (".weight") off any name of 7 or more
    raw = _blocks(np.random.default_rng(0), 1, 18, (0,))
    _loads_as_mlx(tmp_path / "n.gguf", _gguf([], [(tensor_name, [32], 2, raw)]))


@pytest.mark.parametrize("tensors", [
    [("m.weight", [16, 2], 2, bytes(18))],                       # last dim not 32k
    [("m.weight", [], 2, bytes(18))],                            # no dimensions
    [("m.weight", [32], 2, bytes(18)), ("m.scales", [2], 0, bytes(8))],
    [("m.scales", [2], 0, bytes(8)), ("m.weight", [32], 2, bytes(18))],
])
def test_quantized_tensor_refused_as_mlx(tmp_path, tensors):
    (tmp_path / "q.gguf").write_bytes(_gguf([], tensors))
    _same_outcome("mx.load(path)", path=str(tmp_path / "q.gguf"))


def test_quantized_weight_name_taken_keeps_the_first_as_mlx(tmp_path):
    data = _gguf([], [("m.weight", [2], 0, bytes(8)), ("m.weight", [32], 2, bytes(18))])
    arrays, _ = _loads_as_mlx(tmp_path / "q.gguf", data)
    assert arrays["m.weight"][0] == "mlx.core.float32"


@pytest.mark.parametrize("raw_bits", [False, True])
@pytest.mark.parametrize("weights", [256, 300, 512 * 3])
@pytest.mark.parametrize("name", sorted(_FLOAT16))
def test_float16_fallback_tensor_loads_as_mlx(tmp_path, name, weights, raw_bits):
    # NOTE: MLX's Q4_K values come from gguflib, which applies each even sub-block's
    # scale and min to the odd one too; ember matches those values, not llama.cpp's
    gguf_type, per_block, size, halves = _FLOAT16[name]
    rng = np.random.default_rng(gguf_type + weights)
    raw = _blocks(rng, -(-weights // per_block), size, halves, raw_bits)
    data = _gguf([], [("t", [weights], gguf_type, raw)])
    arrays, _ = _loads_as_mlx(tmp_path / "f.gguf", data)
    assert arrays["t"][:2] == ("mlx.core.float16", (weights,))


def test_every_bfloat16_value_loads_as_mlx(tmp_path):
    every = np.arange(2**16, dtype="<u2").tobytes()
    _loads_as_mlx(tmp_path / "b.gguf", _gguf([], [("b", [2**16], 30, every)]))
