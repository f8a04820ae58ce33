"""Devices: parsing as torch parses, cuda refused clearly without a GPU, meta allocates nothing."""

import pickle

import pytest
import torch

import ember

from helpers import E2T


@pytest.mark.parametrize("spec", ["cpu", "meta", "cuda", "cuda:0", "cuda:3", "cpu:0"])
def test_device_strings_parse_like_torch(spec):
    e, t = ember.device(spec), torch.device(spec)
    assert (e.type, e.index) == (t.type, t.index)
    assert repr(e) == repr(t)
    assert str(e) == str(t)
    assert pickle.loads(pickle.dumps(e)) == e


@pytest.mark.parametrize("spec", ["cuda:x", "cuda:-1", "cuda:01", " cpu", "", "gpu", "CUDA"])
def test_bad_device_strings_raise_runtime_error(spec):
    with pytest.raises(RuntimeError):
        torch.device(spec)
    with pytest.raises(RuntimeError):
        ember.device(spec)


def test_device_type_and_index_arguments():
    assert ember.device("cuda", 1) == ember.device("cuda:1")
    assert repr(ember.device("cuda", 1)) == repr(torch.device("cuda", 1))
    assert ember.device(ember.device("meta")) is ember.device("meta")
    for args in [("cuda", -1), ("cuda:0", 1)]:
        with pytest.raises(RuntimeError):
            torch.device(*args)
        with pytest.raises(RuntimeError):
            ember.device(*args)
    with pytest.raises(TypeError):
        ember.device(1.5)


def test_devices_compare_and_hash_like_torch():
    assert ember.device("cpu") == ember.device("cpu")
    assert ember.device("cuda:0") != ember.device("cuda")
    assert (ember.device("cpu") == "cpu") == (torch.device("cpu") == "cpu")
    assert len({ember.device("cpu"), ember.device("cpu"), ember.device("meta")}) == 2


def test_tensors_report_their_device():
    x = ember.zeros(2, 3)
    assert x.device == ember.device("cpu") and x.is_cpu and not x.is_meta and not x.is_cuda
    assert x.get_device() == torch.zeros(2).get_device()
    m = ember.zeros(2, 3, device="meta")
    assert m.device.type == "meta" and m.is_meta
    assert ember.zeros(2, device=ember.device("meta")).is_meta


def test_cuda_is_honest_without_a_gpu():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    for make in (lambda: ember.zeros(2, device="cuda"), lambda: ember.ones(2).cuda(),
                 lambda: ember.tensor([1.0], device="cuda:0"), lambda: ember.ones(2).to("cuda"),
                 lambda: ember.cuda.current_device()):
        with pytest.raises(RuntimeError, match="device='cpu'"):
            make()


def test_meta_tensors_are_instant_and_sized_right():
    x = ember.empty(100_000, 100_000, device="meta")
    t = torch.empty(100_000, 100_000, device="meta")
    assert x.nbytes == t.nbytes == 40_000_000_000
    assert x.untyped_storage().nbytes() == t.untyped_storage().nbytes()
    assert x.stride() == t.stride()
    for dtype in (ember.float16, ember.int64, ember.complex128):
        m = ember.zeros(3, 5, dtype=dtype, device="meta")
        assert m.nbytes == torch.zeros(3, 5, dtype=E2T[dtype], device="meta").nbytes


def test_meta_tensors_flow_through_ops_without_data():
    x = ember.empty(1000, 1000, device="meta")
    y = (x.t() @ x + 1).sum(0)
    assert y.shape == (1000,) and y.is_meta
    z = ember.ones(3, 4).to("meta").transpose(0, 1)[1:]
    t = torch.ones(3, 4).to("meta").transpose(0, 1)[1:]
    assert (z.shape, z.stride(), z.storage_offset()) == (t.shape, t.stride(), t.storage_offset())


def test_reading_meta_values_raises_like_torch():
    e, t = ember.zeros(2, device="meta"), torch.zeros(2, device="meta")
    for read, exc in [(lambda x: x.tolist(), NotImplementedError),
                      (lambda x: x[0].item(), RuntimeError),
                      (lambda x: x.numpy(), TypeError),
                      (lambda x: float(x[0]), RuntimeError),
                      (lambda x: x.to("cpu"), NotImplementedError)]:
        with pytest.raises(exc):
            read(t)
        with pytest.raises(exc):
            read(e)


def test_mixing_devices_raises_runtime_error():
    with pytest.raises(RuntimeError, match="same device"):
        ember.zeros(2, device="meta") + ember.zeros(2)
