"""MLX 0.32.4's files as MLX writes and reads them: the order of the keys `load` gives
(that of a libstdc++ unordered_map), byte-identical .safetensors / .gguf files, .npz entry
order, bfloat16 .npy, file objects, and how the savers refuse bad arguments; each compared
with MLX in-process."""

import ctypes
import ctypes.util
import io
import zipfile

import numpy as np
import pytest
from tests.mlx_oracle import outcome

import ember.mlx.core as mx
from ember.mlx.core._unordered import hash_order, string_hash

mlx = pytest.importorskip("mlx.core")

SIZES = [1, 2, 12, 13, 14, 29, 30, 60, 300]


def _keys(n: int) -> list[str]:
    """Names like a model's, in no sorted order, with a non-ASCII one."""
    names = [f"layers.{(7 * i) % n}.w{i % 3}" for i in range(n)]
    return names[:-1] + ["é.ü"] if n > 2 else names


def test_string_hash_is_libstdcxx():
    lib = ctypes.util.find_library("stdc++")
    if lib is None:
        pytest.skip("no libstdc++ to compare with")
    fn = ctypes.CDLL(lib)._ZSt11_Hash_bytesPKvmm  # std::_Hash_bytes(ptr, len, seed)
    fn.restype, fn.argtypes = ctypes.c_size_t, [ctypes.c_char_p, ctypes.c_size_t,
                                                ctypes.c_size_t]
    for s in ["", "a", "abcdefg", "abcdefgh", "layers.10.weight", "é" * 9]:
        b = s.encode()
        assert string_hash(s) == fn(b, len(b), 0xC70F6907), s


def test_hash_order_keeps_the_first_of_repeated_keys():
    assert hash_order(["b", "a", "b"]) == hash_order(["b", "a"])
    assert sorted(hash_order(_keys(300))) == sorted(set(_keys(300)))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("writer", ["ember", "mlx"])
def test_safetensors_load_order_and_bytes(tmp_path, n, writer):
    keys = _keys(n)
    files = {}
    for name, m in (("ember", mx), ("mlx", mlx)):
        arrays = {k: m.array([i, -i], m.float16 if i % 2 else m.int32)
                  for i, k in enumerate(keys)}
        files[name] = str(tmp_path / f"{name}.safetensors")
        m.save_safetensors(files[name], arrays, metadata={k: str(i) for i, k in
                                                          enumerate(reversed(keys))})
    data = [open(f, "rb").read() for f in files.values()]
    assert data[0] == data[1]
    ours, meta = mx.load(files[writer], return_metadata=True)
    theirs, their_meta = mlx.load(files[writer], return_metadata=True)
    assert list(ours) == list(theirs) and list(meta.items()) == list(their_meta.items())


@pytest.mark.parametrize("n", SIZES)
def test_npz_entry_and_load_order(tmp_path, n):
    keys = _keys(n)
    names = []
    for m in (mx, mlx):
        path = str(tmp_path / f"{m.__name__}.npz")
        m.savez(path, m.zeros(1), m.ones(2), **{k: m.array([i]) for i, k in enumerate(keys)})
        names.append(zipfile.ZipFile(path).namelist())
        assert list(mx.load(path)) == list(mlx.load(path))
    assert names[0] == names[1]


@pytest.mark.parametrize("n", [1, 14, 40])
def test_gguf_bytes_and_load_order(tmp_path, n):
    keys = _keys(n)
    paths = []
    for m in (mx, mlx):
        paths.append(str(tmp_path / f"{m.__name__}.gguf"))
        m.save_gguf(paths[-1], {k: m.full((2,), i, m.float32) for i, k in enumerate(keys)},
                    {f"meta.{k}": k for k in keys})
    assert open(paths[0], "rb").read() == open(paths[1], "rb").read()
    ours, meta = mx.load(paths[1], return_metadata=True)
    theirs, their_meta = mlx.load(paths[1], return_metadata=True)
    assert list(ours) == list(theirs) and list(meta) == list(their_meta)


def test_safetensors_to_a_file_object_with_each_dtype():
    out = []
    for m in (mx, mlx):
        f = io.BytesIO()
        arrays = {d: m.ones((2,), getattr(m, d)) for d in
                  ("float32", "float16", "bfloat16", "int8", "uint64", "bool_", "complex64")}
        m.save_safetensors(f, arrays)  # no metadata: MLX writes "__metadata__":null
        out.append(f.getvalue())
    assert out[0] == out[1]


# each refused as MLX refuses it (type and message); `p` is a path in a fresh folder
REFUSED = [
    "mx.save(p, [1, 2])",
    "mx.save(p, np.ones(2))",
    "mx.save(3, mx.ones(2))",
    "mx.save(object(), mx.ones(2))",
    "mx.savez(p, mx.ones(1), arr_0=mx.ones(1))",
    "mx.save_safetensors(p, mx.ones(2))",
    "mx.save_safetensors(p, {'a': mx.ones(2)}, {'x': 1})",
    "mx.save_safetensors(p, {'a': mx.ones(2)}, {1: 'x'})",
    "mx.save_safetensors(3, {'a': mx.ones(2)})",
    "mx.save_safetensors(p, {'a': mx.ones(2, mx.float64)})",
    "mx.save_gguf(p, [1])",
    "mx.save_gguf(p, {'a': mx.ones(2)}, [1])",
    "mx.save_gguf(3, {'a': mx.ones(2)})",
]


@pytest.mark.parametrize("expr", REFUSED)
def test_savers_refuse_as_mlx(tmp_path, expr):
    setup = f"p = {str(tmp_path / 'f')!r}"
    assert outcome(expr, mx, setup) == outcome(expr, mlx, setup)


@pytest.mark.parametrize("expr", ["mx.savez(p, 3)", "mx.savez(p, a=mx.ones(1), b=[1.0])",
                                  "mx.save_safetensors(p, {'a': 1})",
                                  "mx.save_safetensors(p, {1: mx.ones(2)})"])
def test_non_arrays_refused_with_mlx_type_and_a_message(tmp_path, expr):
    # MLX's bindings say only "std::bad_cast"; ember keeps its type and names the key
    setup = f"p = {str(tmp_path / 'f')!r}"
    ours, theirs = outcome(expr, mx, setup), outcome(expr, mlx, setup)
    assert ours[0] == theirs[0] == "RuntimeError" and "array values" in ours[1]


def test_paths_and_file_objects_accepted_as_mlx(tmp_path):
    for m in (mx, mlx):
        d = tmp_path / m.__name__
        d.mkdir()
        m.save(d / "a", m.arange(3))
        m.savez(d / "b", x=m.ones(2))
        m.save_safetensors(d / "c", {"y": m.ones(1)})
        f = io.BytesIO()
        m.savez(f, m.arange(2))
        f.seek(0)
        assert sorted(p.name for p in d.iterdir()) == ["a.npy", "b.npz", "c.safetensors"]
        assert np.array_equal(np.array(mlx.load(f, format="npz")["arr_0"]), [0, 1])


# loading from Python file objects (MLX reads them through readinto) and their refusals
STREAMS = [
    "mx.load(f(b'\\x93NU'), format='npy')",
    "mx.load(f(b'not a numpy file'), format='npy')",
    "mx.load(f(b''), format='safetensors')",
    "mx.load(f((10**8).to_bytes(8, 'little') + b'{}'), format='safetensors')",
    "mx.load(f((100).to_bytes(8, 'little') + b'{}'), format='safetensors')",
    "mx.load(f((2).to_bytes(8, 'little') + b'[]'), format='safetensors')",
    "mx.load(f((0).to_bytes(8, 'little')), format='safetensors')",
    "mx.load(f(npy))",                       # no name to infer the format from
    "mx.load(f(npy, 'w.npy')).tolist()",
    "mx.load(f(npy), format='npy').tolist()",
    "mx.load(f(st), format='safetensors', return_metadata=True)[1]",
    "list(mx.load(f(st), format='safetensors'))",
    "mx.load(f(st), format='safetensors')['b'].tolist()",
    "mx.load(3)",
    "mx.load(Reader(), format='npy')",
    "mx.load(Reader(), format='safetensors')",
    "mx.load(f(npy), format='npy', return_metadata=True)",
]
STREAM_SETUP = """
import io
class Reader:
    def read(self, n):
        return b''
def f(data, name=None):
    b = io.BytesIO(data)
    if name:
        b.name = name
    return b
b = io.BytesIO(); mx.save(b, mx.arange(3, dtype=mx.int16)); npy = b.getvalue()
b = io.BytesIO()
mx.save_safetensors(b, {'b': mx.ones(2), 'a': mx.zeros(1), 'c': mx.ones(1)}, {'m': '1', 'k': '2'})
st = b.getvalue()
"""


@pytest.mark.parametrize("expr", STREAMS)
def test_load_from_file_objects_as_mlx(expr):
    assert outcome(expr, mx, STREAM_SETUP) == outcome(expr, mlx, STREAM_SETUP)


def test_load_finds_the_format_after_the_last_dot_of_the_path(tmp_path):
    (tmp_path / "a.b").mkdir()
    (tmp_path / "a.b" / "noext").write_bytes(b"x")
    expr = f"mx.load({str(tmp_path / 'a.b' / 'noext')!r})"
    assert outcome(expr, mx) == outcome(expr, mlx)
    assert outcome(expr, mx)[0] == "ValueError"


@pytest.mark.parametrize("writer,reader", [("mx", "mlx"), ("mlx", "mx"), ("mx", "mx")])
def test_bfloat16_npy_and_npz_read_back_as_bfloat16(tmp_path, writer, reader):
    # NumPy has no bfloat16: MLX writes it as the void type "<V2" and reads that back
    w, r = {"mx": mx, "mlx": mlx}[writer], {"mx": mx, "mlx": mlx}[reader]
    a = w.array([[1.5, -2.0], [0.0, 3.0]], w.bfloat16)
    w.save(str(tmp_path / "a.npy"), a)
    w.savez(str(tmp_path / "z.npz"), x=a)
    for got in (r.load(str(tmp_path / "a.npy")), r.load(str(tmp_path / "z.npz"))["x"]):
        assert got.dtype == r.bfloat16 and got.tolist() == [[1.5, -2.0], [0.0, 3.0]]


@pytest.mark.parametrize("expr", [
    "m.array([[1, 0], [2, 3]], m.float32)", "m.array([[1, 0], [2, 3]], m.bfloat16)",
    "m.array([[1, 0], [2, 3]]).T",  # column-contiguous: fortran_order True, data as stored
    "m.arange(24).reshape(2, 3, 4)[:, 1:, ::2]", "m.array(3.0)", "m.zeros((0, 2))",
    "m.broadcast_to(m.array([1, 2]), (3, 2))", "m.ones((1, 3), m.uint8).T",
    "m.array([1 + 2j, 3j])", "m.arange(5)[::2]", "m.ones((1,) * 30)",
    "m.array([1.5], m.float64)", "m.ones((2, 3), m.bool_)",
])
def test_npy_bytes_are_mlx_s(expr):
    # MLX writes its own .npy header ("'shape': (2, 3, )", its padding, fortran_order for
    # column-contiguous arrays); the files read back the same on both
    out = []
    for m in (mx, mlx):
        f = io.BytesIO()
        m.save(f, eval(expr, {"m": m}))
        out.append(f.getvalue())
    assert out[0] == out[1]
    want = eval(expr, {"m": mlx}).tolist()
    assert mx.load(io.BytesIO(out[1]), format="npy").tolist() == want
    assert mlx.load(io.BytesIO(out[0]), format="npy").tolist() == want
