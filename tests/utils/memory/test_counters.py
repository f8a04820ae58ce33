"""ember.utils.memory: bytes held by CPU tensors, each buffer once, and the peak since
reset_peak, checked against the sizes the tensors declare and against a walk of the live
tensors; torch.cuda's functions keep the CPU-only build's answers.

The counting cases run in a fresh child (tests/fresh_process.py: `call_in_child`): their
walks of the live objects and full collections take seconds in a test worker's heap."""

import gc

import numpy as np
import pytest
import torch

import ember
from ember.utils import memory
from fresh_process import call_in_child


@pytest.mark.parametrize("case", ["allocated_counts_new_tensors_once",
                                  "peak_follows_allocations_and_frees",
                                  "tracked_count_agrees_with_a_walk_of_live_tensors"])
def test_counters(case):
    assert call_in_child(__file__, "_" + case) == "checked"


def _allocated_counts_new_tensors_once():
    gc.collect()
    before = memory.allocated()
    x = ember.ones(1000)  # 4000 bytes
    y = x.view(10, 100)  # a view: no new bytes
    z = x[::2]  # another view
    w = ember.tensor(np.zeros(250, np.float64))  # 2000 bytes, made from data
    # (a copy keeping NumPy's strides of its size-1 dims, as torch's: 800 bytes, once)
    v = ember.tensor(np.zeros((25, 4, 1, 1)).transpose(0, 2, 3, 1))
    assert memory.allocated() - before == x.nbytes + w.nbytes + v.nbytes == 6800
    del x, y, z, w, v
    gc.collect()
    assert memory.allocated() == before
    return "checked"


def _peak_follows_allocations_and_frees():
    gc.collect()
    memory.reset_peak()
    base = memory.allocated()
    assert memory.max_allocated() == base
    a = ember.ones(1000)  # 4000
    b = a * 2  # 4000
    del b
    c = ember.zeros(500)  # 2000, after b's 4000 went
    assert memory.allocated() == base + 6000
    assert memory.max_allocated() == base + 8000
    del a, c
    assert memory.allocated() == base
    assert memory.max_allocated() == base + 8000
    memory.reset_peak()
    assert memory.max_allocated() == base
    return "checked"


def _tracked_count_agrees_with_a_walk_of_live_tensors():
    memory.reset_peak()
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(), ember.nn.Linear(16, 2))
    loss = model(ember.randn(4, 8)).sum()
    loss.backward()
    ember.optim.SGD(model.parameters(), lr=0.1).step()
    del loss
    gc.collect()
    assert memory.allocated() == sum(a.nbytes for a in memory.live_buffers())
    assert memory.max_allocated() >= memory.allocated()
    return "checked"


def test_torch_cuda_memory_stays_the_cpu_builds():
    x = ember.ones(1000)
    assert ember.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert ember.cuda.max_memory_allocated() == torch.cuda.max_memory_allocated() == 0
    del x
