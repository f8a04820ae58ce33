"""mx.save / savez / save_safetensors / load: files interchangeable with MLX 0.32.4's."""

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


@pytest.mark.parametrize("call", [
    "mx.load('{d}/missing.npy')",
    "mx.load('{d}/a.xyz')",
    "mx.load('{d}/a.npy', return_metadata=True)",
])
def test_load_errors_as_mlx(tmp_path, call):
    mx.save(str(tmp_path / "a"), mx.arange(3))
    seen = []
    for m in (mx, mlx):
        try:
            eval(call.format(d=tmp_path), {"mx": m})
            seen.append(None)
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            seen.append((type(e).__name__, str(e)))
    assert seen[0] == seen[1] and seen[0] is not None
