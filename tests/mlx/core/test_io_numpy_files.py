"""`.npy` / `.npz` files as MLX 0.32.4 reads and writes them: the NumPy types it reads (in
either byte order) and its message for the others, the zip64 entries of `savez`, and its
error for a path it cannot open to write. Compared with MLX in-process."""

import os
import zipfile

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")


def _outcome(call):
    try:
        v = call()
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)
    if isinstance(v, dict):
        return {k: (str(x.dtype).rpartition(".")[2], x.tolist()) for k, x in v.items()}
    return str(v.dtype).rpartition(".")[2], v.tolist()


@pytest.mark.parametrize("descr", [
    "<i8", ">i8", ">f8", ">f4", ">f2", ">u2", ">u8", ">i2", "|i1", "|u1", "|b1", "<c8",
    "<c16", ">c16", "<M8[s]", "<m8[s]", "|S3", "<U1", ">U1", "|V4", "|V2",
])
def test_npy_types(tmp_path, descr):
    # MLX reads bool, ints, float16/32/64, complex64 and its bfloat16 ("V2") in either byte
    # order; any other type fails naming the first three characters of the type text
    path = str(tmp_path / "x.npy")
    a = np.zeros(2, descr)
    if a.dtype.kind in "iufc":
        a = (np.arange(2) + 1).astype(descr)
    np.save(path, a)
    assert _outcome(lambda: mx.load(path)) == _outcome(lambda: mlx.load(path))


def test_big_endian_complex64_keeps_its_parts(tmp_path):
    # NOTE: MLX 0.32.4 swaps a big-endian complex64 as one 8-byte word, so its real and
    # imaginary parts trade places ([1, 2] reads as [1j, 2j]); ember reads the values
    path = str(tmp_path / "c.npy")
    np.save(path, np.array([1 + 0.5j, 2], ">c8"))
    assert mx.load(path).tolist() == [1 + 0.5j, 2]
    assert mlx.load(path).tolist() == [0.5 + 1j, 2j]  # (what MLX gives, for the record)


def test_npy_of_objects_is_refused_by_type(tmp_path):
    path = str(tmp_path / "o.npy")
    np.save(path, np.array([None, 1], dtype=object), allow_pickle=True)
    assert _outcome(lambda: mx.load(path)) == _outcome(lambda: mlx.load(path))


def test_npz_entries_checked_and_byte_swapped(tmp_path):
    good, bad = str(tmp_path / "g.npz"), str(tmp_path / "b.npz")
    np.savez(good, a=np.array([1, 2], ">i2"), b=np.array([1.5], "<f8"))
    np.savez(bad, a=np.array([1, 2], ">i2"), b=np.array([1j], np.complex128))
    for path in (good, bad):
        assert _outcome(lambda p=path: mx.load(p)) == _outcome(lambda p=path: mlx.load(p))


@pytest.mark.parametrize("compressed", [False, True])
def test_savez_writes_zip64_entries(tmp_path, compressed):
    # (NumPy's savez and MLX's both ask zipfile for zip64 entries: version 45 and a zip64
    # extra field in each local header, so every offset after the first moves)
    def entries(module, name):
        path = str(tmp_path / name)
        save = module.savez_compressed if compressed else module.savez
        save(path, module.arange(6).reshape(2, 3), w=module.ones(2))
        with zipfile.ZipFile(path) as z:
            return [(i.filename, i.create_version, i.extract_version, i.header_offset,
                     i.file_size, i.compress_type) for i in z.infolist()], os.path.getsize(path)

    assert entries(mx, "ours.npz") == entries(mlx, "theirs.npz")


@pytest.mark.parametrize("expr", [
    "mx.save(os.path.join(root, 'no', 'x.npy'), mx.zeros(1))",
    "mx.save(os.path.join(root, 'dir.npy'), mx.zeros(1))",
    "mx.save_safetensors(os.path.join(root, 'no', 'x'), {'a': mx.zeros(1)})",
    "mx.save_safetensors(os.path.join(root, 'dir.safetensors'), {'a': mx.zeros(1)})",
    "mx.savez(os.path.join(root, 'no', 'x.npz'), mx.zeros(1))",
])
def test_paths_that_cannot_be_opened_to_write(tmp_path, expr):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "dir.npy"), exist_ok=True)
    os.makedirs(os.path.join(root, "dir.safetensors"), exist_ok=True)
    ours = _outcome(lambda: eval(expr, {"mx": mx, "os": os, "root": root}))
    theirs = _outcome(lambda: eval(expr, {"mx": mlx, "os": os, "root": root}))
    assert ours == theirs
    assert ours[0] in ("RuntimeError", "FileNotFoundError")
