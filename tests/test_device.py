"""Devices: parsing as torch parses, cuda refused clearly without a GPU, meta allocates nothing."""

import pickle
import re

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


no_gpu = pytest.mark.skipif(ember.cuda.is_available() or torch.cuda.is_available(),
                            reason="PyTorch's CPU-build behaviour, on a machine without a GPU")


def _outcome(call, L):
    """(exception type, message) of `call(L)` with the library's name taken out, or the
    value it returned."""
    try:
        return "ok", call(L)
    except Exception as exc:  # noqa: BLE001 - compared with torch's below
        return type(exc), str(exc).replace(L.__name__ + ".", "torch.")


# Tensors on devices PyTorch knows and this build lacks: made there, moved there.
UNAVAILABLE = ["cuda", "cuda:0", "cuda:1", "mps", "mps:0", "xpu", "xpu:1", "mtia", "xla",
               "vulkan", "lazy", "hip", "hpu"]
MAKERS = {
    "ones": lambda L, d: L.ones(2, device=d),
    "empty": lambda L, d: L.empty(2, device=d),
    "zeros_like": lambda L, d: L.zeros_like(L.ones(2), device=d),
    "tensor": lambda L, d: L.tensor([1.0], device=d),
    "to": lambda L, d: L.ones(2).to(d),
    "to_device_object": lambda L, d: L.ones(2).to(L.device(d)),
    "to_with_grad": lambda L, d: L.ones(2, requires_grad=True).to(d),
}


@no_gpu
@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize("spec", UNAVAILABLE)
def test_unavailable_devices_fail_like_torchs_cpu_build(spec, maker):
    def call(L):
        return MAKERS[maker](L, spec)

    expected = _outcome(call, torch)
    assert expected[0] != "ok"
    got = _outcome(call, ember)
    assert got[0] is expected[0]
    # PyTorch appends build-specific advice to a few of these; the first sentence is the
    # error. Which internal op it names (`aten::empty_strided` ...) varies by entry point.
    first = re.sub(r"aten::[\w.]+", "aten::op", got[1].split(". ")[0])
    assert re.sub(r"aten::[\w.]+", "aten::op", expected[1]).startswith(first)


CUDA_CALLS = {
    "cuda()": lambda L: L.ones(2).cuda(),
    "cuda(1)": lambda L: L.ones(2).cuda(1),
    "cuda('cuda:1')": lambda L: L.ones(2).cuda("cuda:1"),
    "cuda('cpu')": lambda L: L.ones(2).cuda("cpu"),
    "xpu()": lambda L: L.ones(2).xpu(),
    "to(0)": lambda L: L.ones(2).to(0),
    "ones(device=0)": lambda L: L.ones(2, device=0),
    "device(0)": lambda L: L.device(0),
    "module.cuda()": lambda L: L.nn.Linear(2, 2).cuda(),
    "module.to(mps)": lambda L: L.nn.Linear(2, 2).to("mps"),
    "Linear(device=cuda)": lambda L: L.nn.Linear(2, 2, device="cuda"),
    "Generator(cuda)": lambda L: L.Generator(device="cuda"),
    "pin_memory": lambda L: L.ones(2).pin_memory(),
    "ones(pin_memory)": lambda L: L.ones(2, pin_memory=True),
    "zeros(pin_memory)": lambda L: L.zeros(2, pin_memory=True),
    "empty(pin_memory)": lambda L: L.empty(2, pin_memory=True),
    "empty_strided(pin_memory)": lambda L: L.empty_strided((2,), (1,), pin_memory=True),
    "tensor(pin_memory)": lambda L: L.tensor([1.0], pin_memory=True),
    "meta(pin_memory)": lambda L: L.zeros(2, device="meta", pin_memory=True).shape,
    "is_pinned": lambda L: L.ones(2).is_pinned(),
    "is_cuda": lambda L: L.ones(2).is_cuda,
    "is_mps": lambda L: L.ones(2).is_mps,
    "is_xpu": lambda L: L.ones(2).is_xpu,
    "is_available": lambda L: L.cuda.is_available(),
    "device_count": lambda L: L.cuda.device_count(),
    "is_initialized": lambda L: L.cuda.is_initialized(),
    "synchronize": lambda L: L.cuda.synchronize(),
    "synchronize(0)": lambda L: L.cuda.synchronize(0),
    "manual_seed": lambda L: L.cuda.manual_seed(1),
    "manual_seed_all": lambda L: L.cuda.manual_seed_all(1),
    "seed": lambda L: L.cuda.seed(),
    "empty_cache": lambda L: L.cuda.empty_cache(),
    "get_device_name": lambda L: L.cuda.get_device_name(),
    "get_device_name(0)": lambda L: L.cuda.get_device_name(0),
    "get_device_capability": lambda L: L.cuda.get_device_capability(),
    "get_device_properties": lambda L: L.cuda.get_device_properties(0),
    "current_device": lambda L: L.cuda.current_device(),
    "init": lambda L: L.cuda.init(),
    "initial_seed": lambda L: L.cuda.initial_seed(),
    "memory_allocated": lambda L: L.cuda.memory_allocated(),
    "max_memory_allocated": lambda L: L.cuda.max_memory_allocated(),
    "memory_reserved": lambda L: L.cuda.memory_reserved(),
    "mps.is_available": lambda L: L.mps.is_available(),
    "mps.device_count": lambda L: L.mps.device_count(),
    "mps.synchronize": lambda L: L.mps.synchronize(),
    "mps.manual_seed": lambda L: L.mps.manual_seed(1),
    "backends.mps.is_available": lambda L: L.backends.mps.is_available(),
    "backends.mps.is_built": lambda L: L.backends.mps.is_built(),
    "backends.cuda.is_built": lambda L: L.backends.cuda.is_built(),
    "xpu.is_available": lambda L: L.xpu.is_available(),
    "xpu.device_count": lambda L: L.xpu.device_count(),
    "xpu.synchronize": lambda L: L.xpu.synchronize(),
    "xpu.manual_seed_all": lambda L: L.xpu.manual_seed_all(1),
    "accelerator.is_available": lambda L: L.accelerator.is_available(),
    "accelerator.current_accelerator": lambda L: L.accelerator.current_accelerator(),
}


@no_gpu
@pytest.mark.parametrize("name", list(CUDA_CALLS))
def test_device_calls_without_a_gpu_like_torchs_cpu_build(name):
    expected, got = _outcome(CUDA_CALLS[name], torch), _outcome(CUDA_CALLS[name], ember)
    if expected[0] == "ok":
        assert got == expected
    else:
        assert got[0] is expected[0]
        assert expected[1].startswith(got[1])


@pytest.mark.parametrize("spec", ["mps", "xpu:1", "hpu", "xla", "privateuseone", "lazy",
                                  "tpu", "npu", "Cuda"])
def test_every_device_type_torch_knows_parses(spec):
    e, t = _outcome(lambda L: L.device(spec), ember), _outcome(lambda L: L.device(spec), torch)
    if t[0] == "ok":
        assert (e[1].type, e[1].index, repr(e[1])) == (t[1].type, t[1].index, repr(t[1]))
    else:
        assert e == t


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
    # (torch's words for meta beside cpu: tests/core/test_meta_beside_cpu.py has the rest)
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected "
                                           "device meta!"):
        ember.zeros(2, device="meta") + ember.zeros(2)
