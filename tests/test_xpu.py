"""ember.xpu, ember.mps, the backends' availability and the Tensor device flags answer as
PyTorch's CPU build does."""

import pytest
import torch

import ember

from helpers import same_error

QUERIES = [
    lambda L: L.xpu.is_available(), lambda L: L.xpu.device_count(),
    lambda L: L.xpu.is_initialized(), lambda L: L.xpu.is_bf16_supported(),
    lambda L: L.xpu.memory_allocated(), lambda L: L.xpu.max_memory_allocated(),
    lambda L: L.xpu.manual_seed(0), lambda L: L.xpu.manual_seed_all(0),
    lambda L: L.xpu.empty_cache(), lambda L: L.xpu.seed(),
    lambda L: L.mps.is_available(), lambda L: L.mps.device_count(),
    lambda L: L.mps.manual_seed(0),
    lambda L: L.backends.mps.is_available(), lambda L: L.backends.mps.is_built(),
    lambda L: L.backends.cudnn.is_available(), lambda L: L.backends.cuda.is_built(),
    lambda L: L.cuda.is_available(), lambda L: L.cuda.device_count(),
    lambda L: L.is_inference(L.ones(2)),
]


@pytest.mark.parametrize("query", QUERIES)
def test_queries_answer_as_torch_cpu_build(query):
    assert query(ember) == query(torch)


@pytest.mark.parametrize("call", [
    lambda L: L.xpu.current_device(), lambda L: L.xpu.synchronize(),
    lambda L: L.xpu.set_device(0), lambda L: L.xpu.get_device_name(),
    lambda L: L.xpu.init(), lambda L: L.xpu.get_rng_state(),
    lambda L: L.mps.synchronize(), lambda L: L.mps.empty_cache(), lambda L: L.mps.seed(),
    lambda L: L.mps.current_allocated_memory(), lambda L: L.mps.get_rng_state(),
    lambda L: L.is_inference(3), lambda L: L.is_inference(None),
])
def test_device_calls_raise_as_torch_cpu_build(call):
    same_error(call)


@pytest.mark.parametrize("flag", ["is_xpu", "is_mps", "is_ipu", "is_mtia", "is_maia",
                                  "is_vulkan", "is_xla", "is_mkldnn", "is_nested", "is_cpu",
                                  "is_cuda", "is_meta"])
def test_tensor_device_flags(flag):
    assert getattr(ember.ones(2), flag) is getattr(torch.ones(2), flag)
    assert getattr(ember.ones(2, device="meta"), flag) is getattr(torch.ones(2, device="meta"),
                                                                  flag)


def test_is_inference():
    for L in (torch, ember):
        with L.inference_mode():
            made = L.ones(2)
        assert L.is_inference(made) and made.is_inference()
        assert not L.is_inference(L.ones(2))


def test_modules_import_as_torchs_do():
    import ember.mps
    import ember.xpu

    assert ember.xpu.is_available() is False and ember.mps.is_available() is False
