"""ember.utils.safetensors: the format byte for byte, checked against the reference package."""

import json
import struct

import numpy as np
import pytest
import torch

import ember
from ember.utils import safetensors as est

from helpers import to_torch

st = pytest.importorskip("safetensors.torch")

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64")


def example():
    ember.manual_seed(0)
    w = ember.randn(3, 4)
    return {"w": w, "w_t": w.t(), "half": ember.randn(2, 2).to(ember.bfloat16),
            "ids": ember.arange(5), "mask": ember.tensor([True, False]),
            "scalar": ember.tensor(1.5), "empty": ember.zeros(0, 3)}


def as_torch(tensors):
    return {k: to_torch(v).contiguous() for k, v in tensors.items()}


def test_bytes_match_the_reference_writer():
    tensors = example()
    meta = {"note": "ünïcode"}  # one key: the reference writes a hash map's order
    assert est.save(tensors, metadata=meta) == st.save(as_torch(tensors), metadata=meta)


def test_non_contiguous_tensors_are_written_in_logical_order(tmp_path):
    path = tmp_path / "v.safetensors"
    w = ember.arange(12.0).reshape(3, 4)
    est.save_file({"view": w.t()[1:, ::2]}, path)
    got = st.load_file(path)["view"]
    assert np.array_equal(got.numpy(), w.numpy().T[1:, ::2])


def test_reference_files_load_in_ember(tmp_path):
    path = tmp_path / "ref.safetensors"
    ref = {d: torch.arange(6).to(getattr(torch, d)).reshape(2, 3) for d in DTYPES}
    ref.update({"f8": torch.arange(4.0).to(torch.float8_e4m3fn),
                "f8b": torch.arange(4.0).to(torch.float8_e5m2),
                "u16": torch.arange(3).to(torch.uint16)})
    st.save_file(ref, path, metadata={"k": "v"})
    out = est.load_file(path)
    assert set(out) == set(ref)
    for k, t in ref.items():
        e = out[k]
        assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype)[6:]
        assert e.numpy().tobytes() == t.reshape(-1).view(torch.uint8).numpy().tobytes()
    assert est.load_metadata(path) == {"k": "v"}


def test_round_trip_in_memory():
    tensors = example()
    out = est.load(est.save(tensors))
    for k, v in tensors.items():
        assert out[k].dtype is v.dtype and out[k].shape == v.shape
        assert np.array_equal(out[k].numpy(), v.numpy())
        assert out[k].is_contiguous()


def _raw(header: dict, data: bytes) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


@pytest.mark.parametrize("raw, match", [
    (b"\x00" * 4, "too short"),
    (struct.pack("<Q", 10**12) + b"{}", "larger than the file"),
    (struct.pack("<Q", 2) + b"[]", "JSON object"),
    (_raw({"a": {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), "dtype"),
    (_raw({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4),
     "do not match"),
    (_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8),
     "does not start"),
    (_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 9),
     "buffer holds"),
    (_raw({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4), "shape"),
])
def test_malformed_files_are_refused(raw, match):
    with pytest.raises(est.SafetensorError, match=match):
        est.load(raw)


def test_non_tensors_are_refused():
    with pytest.raises(TypeError):
        est.save({"a": np.zeros(2)})
