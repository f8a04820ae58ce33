"""mx.save / savez / save_safetensors / load: files interchangeable with MLX 0.32.4's."""

import io

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")


def _arrays(m):
    return {"w": m.array([[1.5, -2.0], [0.25, 3.0]]), "i": m.arange(5),
            "h": m.array([1, 2], m.float16), "u": m.array([7, 9], m.uint32)}


@pytest.mark.parametrize("writer,reader", [(mx, mlx), (mlx, mx)])
def test_safetensors_written_by_one_read_by_the_other(tmp_path, writer, reader):
    path = str(tmp_path / "w.safetensors")
    writer.save_safetensors(path, _arrays(writer), metadata={"epoch": "3"})
    got, meta = reader.load(path, return_metadata=True)
    assert meta == {"epoch": "3"}
    for k, v in _arrays(writer).items():
        assert repr(got[k]).split("dtype=")[1] == repr(v).split("dtype=")[1]
        assert np.array_equal(np.array(got[k]), np.array(v))


@pytest.mark.parametrize("writer,reader", [(mx, mlx), (mlx, mx)])
def test_npy_and_npz_written_by_one_read_by_the_other(tmp_path, writer, reader):
    writer.save(str(tmp_path / "a"), writer.arange(6).reshape(2, 3))  # suffix added
    assert reader.load(str(tmp_path / "a.npy")).tolist() == [[0, 1, 2], [3, 4, 5]]
    writer.savez(str(tmp_path / "z"), writer.ones(2), b=writer.zeros(3))
    z = reader.load(str(tmp_path / "z.npz"))
    assert sorted(z) == ["arr_0", "b"] and z["b"].tolist() == [0.0, 0.0, 0.0]


# files MLX refuses, each for a reason of its own (named by the file)
BAD_FILES = {
    "empty.npy": b"", "short.npy": b"\x93NU", "magic.npy": b"not a numpy file",
    "no_header.npy": b"\x93NUMPY\x01\x00\x40\x00{'descr'", "v2.npy": b"\x93NUMPY\x02\x00\x01",
    "empty.safetensors": b"", "long.safetensors": (10**8).to_bytes(8, "little") + b"{}",
    "cut.safetensors": (100).to_bytes(8, "little") + b"{}", "text.npz": b"hello",
}


@pytest.mark.parametrize("call", [
    "mx.load('{d}/missing.npy')",
    "mx.load('{d}/a.xyz')",
    "mx.load('{d}/a.npy', return_metadata=True)",
    # MLX's npz reader is Python's zipfile: whatever it cannot open gives one message
    "mx.load('{d}/missing.npz')",
    "mx.load('{d}/a.npy', format='npz')",
    "mx.load('{d}/dir.npz')",
    "mx.load(io.BytesIO(b'not a zip'), format='npz')",
    "mx.load('{d}/missing.safetensors')",
    "mx.load('{d}/no_suffix')",
    "mx.load('{d}/dir.safetensors')",
    *(f"mx.load('{{d}}/{name}')" for name in BAD_FILES),
])
def test_load_errors_as_mlx(tmp_path, call):
    mx.save(str(tmp_path / "a"), mx.arange(3))
    for name, data in BAD_FILES.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "dir.npz").mkdir()
    (tmp_path / "dir.safetensors").mkdir()
    seen = []
    for m in (mx, mlx):
        try:
            eval(call.format(d=tmp_path), {"mx": m, "io": io})
            seen.append(None)
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            seen.append((type(e).__name__, str(e)))
    assert seen[0] == seen[1] and seen[0] is not None
