"""`with ember.device(...)` and `set_default_device` choose where factories given no
device create tensors, as torch's DeviceContext does (_device.py, _runtime.py)."""

import numpy as np
import pytest
import torch

import ember

FACTORIES = {
    "zeros": lambda L: L.zeros(2),
    "empty": lambda L: L.empty(2, 3),
    "full": lambda L: L.full((2,), 3.0),
    "tensor": lambda L: L.tensor([1.0, 2.0]),
    "as_tensor": lambda L: L.as_tensor([1]),
    "arange": lambda L: L.arange(3),
    "linspace": lambda L: L.linspace(0, 1, 3),
    "eye": lambda L: L.eye(2),
    "randn": lambda L: L.randn(2),
    "randint": lambda L: L.randint(0, 3, (2,)),
    "explicit cpu": lambda L: L.ones(1, device="cpu"),
    "empty_like cpu": lambda L: L.empty_like(L.ones(1, device="cpu")),
    "from_numpy": lambda L: L.from_numpy(np.ones(2)),
    "Linear weight": lambda L: L.nn.Linear(2, 3).weight,
    "BatchNorm buffer": lambda L: L.nn.BatchNorm1d(2).num_batches_tracked,
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_meta_context_places_factories_as_torch(name):
    got = []
    for L in (ember, torch):
        with L.device("meta"):
            t = FACTORIES[name](L)
        got.append((str(t.device), tuple(t.shape)))
    assert got[0] == got[1]


def test_context_returns_the_device_nests_and_restores():
    got = []
    for L in (ember, torch):
        with L.device("meta") as d:
            inner = []
            with L.device("cpu"):
                inner.append(str(L.zeros(1).device))
            seen = (str(d), str(L.get_default_device()), inner, str(L.zeros(1).device))
        got.append((seen, str(L.zeros(1).device), str(L.get_default_device())))
    assert got[0] == got[1]
    assert got[0][0][3] == "meta" and got[0][1] == "cpu"


def test_meta_context_draws_nothing_from_the_generator():
    got = []
    for L in (ember, torch):
        L.manual_seed(0)
        with L.device("meta"):
            L.nn.Linear(8, 8)
            L.randn(4)
        got.append(L.rand(3).tolist())
    assert got[0] == got[1]


def test_a_context_left_by_an_exception_is_restored():
    with pytest.raises(ValueError):
        with ember.device("meta"):
            raise ValueError
    assert ember.zeros(1).device.type == "cpu"


def test_set_default_device_meta_and_back():
    got = []
    for L in (ember, torch):
        L.set_default_device("meta")
        try:
            seen = [str(L.zeros(1).device), str(L.get_default_device())]
            with L.device("cpu"):
                seen.append(str(L.zeros(1).device))
        finally:
            L.set_default_device(None)
        got.append((seen, str(L.zeros(1).device), str(L.get_default_device())))
    assert got[0] == got[1]


def test_meta_module_materialized_by_to_empty_then_initialized():
    got = []
    for L in (ember, torch):
        L.manual_seed(1)
        with L.device("meta"):
            m = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2))
        m = m.to_empty(device="cpu")
        with L.no_grad():
            L.nn.init.xavier_uniform_(m[0].weight)
        m[1].reset_parameters()
        got.append((m[0].weight.tolist(), m[1].running_var.tolist(),
                    m[1].num_batches_tracked.item(), str(m[0].weight.device)))
    assert got[0] == got[1]


CPU_WORK = {
    "one_hot": lambda L, x, t, lin: L.nn.functional.one_hot(t),
    "interpolate": lambda L, x, t, lin: L.nn.functional.interpolate(x[None], scale_factor=2),
    "cross_entropy": lambda L, x, t, lin: L.nn.functional.cross_entropy(lin(x), t),
    "adam step": lambda L, x, t, lin: (lambda o: (o.step(), o.state[lin.weight]["step"])[1])(
        L.optim.Adam(lin.parameters())),
    "bool index": lambda L, x, t, lin: x[x > 0],
}


@pytest.mark.parametrize("name", list(CPU_WORK))
def test_cpu_work_inside_a_meta_context_stays_on_the_cpu(name):
    got = []
    for L in (ember, torch):
        L.manual_seed(0)
        x, t, lin = L.randn(4, 3), L.tensor([0, 1, 1, 0]), L.nn.Linear(3, 2)
        lin(x).sum().backward()
        with L.device("meta"):
            out = CPU_WORK[name](L, x, t, lin)
        got.append((str(out.device), tuple(out.shape)))
    assert got[0] == got[1]
    assert got[0][0] == "cpu"


@pytest.mark.parametrize("dev", ["cuda:0", "xpu:1"])
def test_an_absent_device_with_an_index_is_refused_by_the_first_factory(dev):
    """With an index PyTorch records the device and its first factory fails."""
    from helpers import raised

    def run(L):
        try:
            return (raised(L.set_default_device, dev), raised(L.zeros, 1),
                    str(L.get_default_device()))
        finally:
            L.set_default_device(None)

    assert run(ember) == run(torch)
    assert str(ember.get_default_device()) == "cpu"


def test_an_absent_device_without_an_index_is_refused_at_once():
    """Without an index PyTorch asks the backend for its current device at once and fails
    there (not compared in-process: torch then keeps a default it can neither read back nor
    reset)."""
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        ember.set_default_device("cuda")
    assert str(ember.get_default_device()) == "cpu"
