"""ember.utils.memory: bytes held by CPU tensors, each buffer once, and the peak since
reset_peak, checked against the sizes the tensors declare and against a walk of the live
tensors; torch.cuda's functions keep the CPU-only build's answers."""

import gc

import numpy as np
import pytest
import torch

import ember
from ember import _memory
from ember.utils import memory


@pytest.fixture
def measuring():
    """reset_peak's tracker, stopped again after the test (it stays on in a program)."""
    yield
    if memory.counters._measuring[0]:
        _memory.tracker.stop()
        memory.counters._measuring[0] = False


def test_allocated_counts_new_tensors_once():
    gc.collect()
    before = memory.allocated()
    x = ember.ones(1000)  # 4000 bytes
    y = x.view(10, 100)  # a view: no new bytes
    z = x[::2]  # another view
    w = ember.tensor(np.zeros(250, np.float64))  # 2000 bytes, made from data
    assert memory.allocated() - before == x.nbytes + w.nbytes == 6000
    del x, y, z, w
    gc.collect()
    assert memory.allocated() == before


def test_peak_follows_allocations_and_frees(measuring):
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


def test_tracked_count_agrees_with_a_walk_of_live_tensors(measuring):
    memory.reset_peak()
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(), ember.nn.Linear(16, 2))
    loss = model(ember.randn(4, 8)).sum()
    loss.backward()
    ember.optim.SGD(model.parameters(), lr=0.1).step()
    del loss
    gc.collect()
    assert memory.allocated() == sum(a.nbytes for a in memory.live_buffers())
    assert memory.max_allocated() >= memory.allocated()


def test_torch_cuda_memory_stays_the_cpu_builds():
    x = ember.ones(1000)
    assert ember.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert ember.cuda.max_memory_allocated() == torch.cuda.max_memory_allocated() == 0
    del x
