"""native/kernels.py's chooser: which twin an eager call runs. The choice is made per call
from live settings (the size gate, the mode, the arrays' dtype, the thread count), so a
setting changed between two calls of the same op on the same shape takes effect at once;
the C kernel runs where it ran before the size gate moved into the chooser.

A family's libraries, one per dtype: a float32 program builds only the float32 one, the
float64 one comes with the first float64 call, and a float64 library that cannot be built
leaves that dtype on the NumPy kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

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
    assert entries.count("sgd_step_f32") == 2 * 2  # every size in C (the first step makes
    entries.clear()  # the buffers)
    monkeypatch.setitem(native_update, "min_size", 1 << 16)
    got = _sgd_run()
    assert not any(e.startswith("sgd_step") for e in entries)  # 64 and 4 elements: NumPy
    for g, w in zip(got, want):
        assert_bits(g, w)
    monkeypatch.setitem(native_update, "min_size", 0)
    with threads(2):
        got = _sgd_run()
    assert entries.count("sgd_step_f32") == 2 * 2
    for g, w in zip(got, want):
        assert_bits(g, w)


# --- one library per dtype (each case in a fresh process with a cache folder of its own) ---

SRC = os.path.join(os.path.dirname(ember.__file__), os.pardir)

CHILD = textwrap.dedent("""
    import json, os, sys, warnings
    import numpy as np
    import ember
    from ember.native import kernels, toolchain
    from ember.ops.softmax import softmax_p
    if sys.argv[1] == "no-f64":  # the float64 build fails as a missing compiler would
        real = toolchain.try_build
        toolchain.try_build = lambda name, src, **kw: (
            None if name.endswith("-f64") else real(name, src, **kw))
    folder = os.environ["EMBER_CACHE_DIR"]
    built = lambda: sorted(f.rsplit("-", 1)[0] for f in os.listdir(folder) if f.endswith(".so"))
    x = np.random.default_rng(0).standard_normal((8, 300))
    numpy_k = kernels.twins(softmax_p)[0]
    out = {}
    y32 = ember.softmax(ember.tensor(x.astype(np.float32)), 1).numpy()
    out["after_f32"] = built()
    out["f32_diff"] = float(np.abs(y32 - numpy_k(x.astype(np.float32), dim=1, log=False)).max())
    with warnings.catch_warnings(record=True):
        y64 = ember.softmax(ember.tensor(x), 1).numpy()
    out["after_f64"] = built()
    out["f64_same_as_numpy"] = bool(np.array_equal(y64, numpy_k(x, dim=1, log=False)))
    out["f64_diff"] = float(np.abs(y64 - numpy_k(x, dim=1, log=False)).max())
    print(json.dumps(out))
""")


def _run(tmp_path, mode: str) -> dict:
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), PYTHONPATH=os.path.abspath(SRC))
    env.pop("EMBER_KERNELS", None)
    res = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


# the children below set their own EMBER_KERNELS: the NumPy line of `make test` would run
# the same children again
children_choose = pytest.mark.skipif(os.environ.get("EMBER_KERNELS") == "numpy",
                                     reason="the children choose their kernels: run in the "
                                            "native line")


@children_choose
def test_float32_program_builds_only_the_float32_library(tmp_path):
    out = _run(tmp_path, "both")
    assert out["after_f32"] == ["runtime", "softmax-f32"]
    assert out["after_f64"] == ["runtime", "softmax-f32", "softmax-f64"]
    # the native kernels sum in another order than NumPy's: a few ulps (see test_softmax)
    assert out["f32_diff"] < 1e-6 and out["f64_diff"] < 1e-14


@children_choose
def test_float64_library_that_fails_to_build_leaves_float64_on_numpy(tmp_path):
    out = _run(tmp_path, "no-f64")
    assert out["after_f64"] == ["runtime", "softmax-f32"]
    assert out["f64_same_as_numpy"]
