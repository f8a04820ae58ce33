"""native/kernels.py's chooser: which twin an eager call runs. The choice is made per call
from live settings (the size gate, the mode, the arrays' dtype, the thread count), so a
setting changed between two calls of the same op on the same shape takes effect at once;
the C kernel runs where it ran before the size gate moved into the chooser."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember.native import calls
from ember.ops import activation
from ember.optim.optimizer import native_update
from native._differential import assert_bits, threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")


@pytest.fixture
def entries(monkeypatch):
    """The names of the C entry points called while the test runs."""
    seen: list[str] = []
    real = calls.entry

    def spy(lib, name, argtypes, restype=None):
        seen.append(name)
        return real(lib, name, argtypes, restype)

    monkeypatch.setattr(calls, "entry", spy)
    return seen


def _x(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_a_lowered_gate_takes_effect_on_the_next_call(entries, monkeypatch):
    x = _x((64, 128))  # 8192 elements: under ReLU's gate
    want = np.maximum(x, 0)
    assert_bits(ember.relu(ember.tensor(x)).numpy(), want)
    assert entries == []
    monkeypatch.setattr(activation, "_NATIVE_MIN", 0)
    assert_bits(ember.relu(ember.tensor(x)).numpy(), want)
    assert entries == ["relu_f32"]
    monkeypatch.setattr(activation, "_NATIVE_MIN", 1 << 16)
    ember.relu(ember.tensor(x))
    assert entries == ["relu_f32"]


def test_large_calls_run_the_c_kernels_forward_and_backward(entries):
    x = ember.tensor(_x((256, 256)), requires_grad=True)  # 64K elements: at the gate
    g = _x((256, 256), seed=1)  # (contiguous: sum()'s expanded gradient stays with NumPy)
    ember.relu(x).backward(ember.tensor(g))
    assert entries == ["relu_f32", "threshold_backward_f32"]
    assert_bits(x.grad.numpy(), np.where(x.detach().numpy() > 0, g, np.float32(0)))
    entries.clear()
    s = ember.softmax(ember.tensor(_x((4, 256))), dim=1)  # softmax's gate: 1024 elements
    assert entries == ["softmax_forward_f32"]
    np.testing.assert_allclose(s.sum(1).numpy(), np.ones(4, np.float32), rtol=1e-6)


def test_the_mode_is_read_per_call(entries):
    x = _x((256, 256))
    ember.relu(ember.tensor(x))
    assert entries == ["relu_f32"]
    with native.use("numpy"):  # after the library is loaded: NumPy all the same
        out = ember.relu(ember.tensor(x))
    assert entries == ["relu_f32"]
    assert_bits(out.numpy(), np.maximum(x, 0))
    ember.relu(ember.tensor(x))
    assert entries == ["relu_f32", "relu_f32"]


def test_dtype_threads_and_determinism_change_nothing_stale(entries):
    x = _x((256, 256), np.float64)
    assert_bits(ember.relu(ember.tensor(x)).numpy(), np.maximum(x, 0))
    assert entries == ["relu_f64"]
    h = x.astype(np.float16)  # no C kernel for float16: NumPy's, through the same chooser
    assert_bits(ember.relu(ember.tensor(h)).numpy(), np.maximum(h, 0))
    assert entries == ["relu_f64"]
    with threads(2):
        assert_bits(ember.relu(ember.tensor(x)).numpy(), np.maximum(x, 0))
    with threads(1):
        assert_bits(ember.relu(ember.tensor(x)).numpy(), np.maximum(x, 0))
    old = ember.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(True)
    try:
        assert_bits(ember.relu(ember.tensor(x)).numpy(), np.maximum(x, 0))
    finally:
        ember.use_deterministic_algorithms(old)
    assert entries == ["relu_f64"] * 4


def _sgd_run(n_steps=3, momentum=0.9):
    """Parameters after a few SGD steps of a small linear model."""
    ember.manual_seed(0)
    model = ember.nn.Linear(16, 4)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
    x = ember.tensor(_x((8, 16), seed=1))
    for _ in range(n_steps):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def test_the_optimizers_gate_is_read_per_step(entries, monkeypatch):
    want = _sgd_run()
    assert not any(e.startswith("sgd_step") for e in entries)  # 64 and 4 elements: NumPy
    monkeypatch.setitem(native_update, "min_size", 0)
    got = _sgd_run()
    assert entries.count("sgd_step_f32") == 2 * 2  # (the first step makes the buffers)
    for g, w in zip(got, want):
        assert_bits(g, w)
    entries.clear()
    with threads(2):
        got = _sgd_run()
    assert entries.count("sgd_step_f32") == 2 * 2
    for g, w in zip(got, want):
        assert_bits(g, w)
