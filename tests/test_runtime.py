"""Process-level settings: threads, and what importing ember leaves alone."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.ops import _parallel


def test_set_num_threads_sizes_the_kernel_pool():
    before = ember.get_num_threads()
    x = ember.arange(1 << 18, dtype=ember.float32)
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1 and _parallel.thread_pool()[0] is None
        one = (x * 3 + 1).numpy()
        ember.set_num_threads(2)
        assert ember.get_num_threads() == 2 and _parallel.thread_pool()[0] is not None
        two = (x * 3 + 1).numpy()
    finally:
        ember.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, np.arange(1 << 18, dtype=np.float32) * 3 + 1)


@pytest.mark.parametrize("bad, message", [(0, "a positive integer"), (-1, "a positive integer"),
                                          (1.5, "an int, but got float"),
                                          (True, "an int, but got bool")])
def test_set_num_threads_refuses_what_torch_refuses(bad, message):
    import torch

    with pytest.raises(RuntimeError, match=message):
        torch.set_num_threads(bad)
    with pytest.raises(RuntimeError, match=message):
        ember.set_num_threads(bad)


def test_import_does_not_touch_the_c_allocator():
    code = ("import ctypes\nloaded = []\nreal = ctypes.CDLL\n"
            "class Spy(real):\n    def __init__(self, name, *a, **k):\n"
            "        loaded.append(str(name)); super().__init__(name, *a, **k)\n"
            "ctypes.CDLL = Spy\nimport ember\nember.ones(3).sum()\n"
            "print([n for n in loaded if 'libc' in n])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_set_default_tensor_type_warns_once_as_torch():
    from fresh_process import with_server

    code = ("import warnings\nimport {m} as t\nwarnings.simplefilter('always')\n"
            "t.set_default_tensor_type(t.DoubleTensor)\nt.set_default_tensor_type(t.FloatTensor)\n"
            "print(t.ones(1).dtype)\n")
    got = []
    for m in ("ember", "torch"):
        r = with_server(m).run_code(code.format(m=m))  # (a fresh process each)
        assert r.returncode == 0, r.stderr
        got.append((r.stdout.split(".")[-1], r.stderr.count("set_default_tensor_type() is "
                                                            "deprecated as of PyTorch 2.1")))
    assert got[0] == got[1] == ("float32\n", 1)


def test_the_default_thread_count_follows_omp_num_threads_as_torch():
    import subprocess
    import sys

    code = "import ember, torch; print(ember.get_num_threads(), torch.get_num_threads())"
    for value in ("1", "2"):
        env = {**__import__("os").environ, "OMP_NUM_THREADS": value}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        assert out[0] == out[1], (value, out)


def test_first_compile_turns_distribution_validation_off_as_torch():
    # PyTorch's first torch.compile (not disable=True) sets the distributions' default
    # validation off for the whole process (TorchPatcher.patch): a fresh process per library
    code = """
import {m} as torch
D = torch.distributions.Distribution
torch.compile(lambda x: x + 1, disable=True)
print(D._validate_args)
f = torch.compile(lambda x: x + 1)
print(D._validate_args, torch.distributions.Normal(0.0, -1.0).scale)
D.set_default_validate_args(True)
torch.nn.Linear(2, 2).compile()
try:
    torch.distributions.Normal(0.0, -1.0)
except ValueError:
    print("checked again: the patch runs once")
print(f(torch.ones(1)))
"""
    from fresh_process import with_server

    outs = [with_server(m).run_code(code.format(m=m)).stdout for m in ("torch", "ember")]
    assert outs[0] and outs[1] == outs[0]


# --- debug modes ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["default", "warn", "error", 0, 1, 2])
def test_deterministic_debug_mode_sets_the_flags_as_torch(mode):
    import torch

    def flags(L):
        before = L.get_deterministic_debug_mode()
        try:
            L.set_deterministic_debug_mode(mode)
            return (L.get_deterministic_debug_mode(), L.are_deterministic_algorithms_enabled(),
                    L.is_deterministic_algorithms_warn_only_enabled())
        finally:
            L.set_deterministic_debug_mode(before)
    assert flags(ember) == flags(torch)


def test_deterministic_debug_mode_refusals():
    from helpers import same_message

    same_message(lambda L: L.set_deterministic_debug_mode("loud"))
    same_message(lambda L: L.set_deterministic_debug_mode(3))
    same_message(lambda L: L.set_deterministic_debug_mode(1.0), TypeError)


def _meshgrid_warnings(L) -> int:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            L.meshgrid(L.arange(2), L.arange(3))
    return sum("indexing argument" in str(w.message) for w in caught)


def test_warn_always_repeats_the_once_per_process_warnings():
    import torch

    for L in (ember, torch):
        assert not L.is_warn_always_enabled()
        L.set_warn_always(True)
        try:
            assert L.is_warn_always_enabled()
            assert _meshgrid_warnings(L) == 3
        finally:
            L.set_warn_always(False)
    _meshgrid_warnings(ember)
    assert _meshgrid_warnings(ember) == 0  # once again, as in torch


def test_anomaly_mode_at_the_top_level():
    import torch

    for L in (ember, torch):
        assert not L.is_anomaly_enabled()
        L.set_anomaly_enabled(True, False)
        try:
            assert L.is_anomaly_enabled()
            assert not L.is_anomaly_check_nan_enabled()
        finally:
            L.set_anomaly_enabled(False)
        assert not L.is_anomaly_enabled() and L.is_anomaly_check_nan_enabled()


def _denormal_reads(L) -> tuple:
    """What a program sees of denormals with flushing on, then off again (restored)."""
    ok = L.set_flush_denormal(True)
    try:
        on = (L.tensor([1e-40]).item(), L.tensor([1e-323], dtype=L.float64).item(),
              (L.tensor([2e-38]) / 4).item(), str(L.tensor([1e-40])))
    finally:
        back = L.set_flush_denormal(False)
    off = (L.tensor([1e-40]).item(), (L.tensor([2e-38]) / 4).item())
    return ok, back, on, off


def test_set_flush_denormal_flushes_on_the_calling_thread_as_torch():
    import torch

    if not ember.set_flush_denormal(False):  # (EMBER_KERNELS=numpy or no C compiler)
        pytest.skip("no compiled switch here: ember answers False and keeps denormals")
    # exact: a denormal flushed reads 0.0 in both, and unflushed values are single
    # correctly rounded conversions and divisions by 4 (exact in binary)
    got, want = _denormal_reads(ember), _denormal_reads(torch)
    assert got == want
    assert want[2][0] == want[2][2] == 0.0 and want[3][0] != 0


def test_set_flush_denormal_refuses_a_non_bool():
    from helpers import same_message

    same_message(lambda L: L.set_flush_denormal(1))


# --- inter-op threads, matmul precision, deterministic flags --------------------------------

def test_set_num_interop_threads_is_allowed_once_a_process():
    from fresh_process import with_server

    code = ("import {m} as t\nfor n in (3, 2):\n    try:\n        t.set_num_interop_threads(n)\n"
            "    except RuntimeError as e:\n        print(e)\nprint(t.get_num_interop_threads())\n")
    outs = [with_server(m).run_code(code.format(m=m)).stdout for m in ("torch", "ember")]
    assert "cannot set number of interop threads" in outs[0] and outs[1] == outs[0]


@pytest.mark.parametrize("bad", [0, -2, 1.5])
def test_set_num_interop_threads_refusals(bad):
    from helpers import same_message

    same_message(lambda L: L.set_num_interop_threads(bad))


def test_unknown_matmul_precision_warns_and_changes_nothing():
    import warnings

    import torch

    for L in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.set_float32_matmul_precision("fastest")
        assert [w.category for w in caught] == [UserWarning]
        assert str(caught[0].message).startswith(
            "fastest is not one of 'highest', 'high', or 'medium'; the currentset")
        assert L.get_float32_matmul_precision() == "highest"


def test_matmul_precision_refuses_a_non_str():
    from helpers import same_message

    same_message(lambda L: L.set_float32_matmul_precision(1))


@pytest.mark.parametrize("call", [lambda L: L.use_deterministic_algorithms("yes"),
                                  lambda L: L.use_deterministic_algorithms(1),
                                  lambda L: L.use_deterministic_algorithms(None),
                                  lambda L: L.use_deterministic_algorithms(True, warn_only=1)])
def test_use_deterministic_algorithms_wants_bools(call):
    from helpers import same_message

    same_message(call, TypeError)
    assert not ember.are_deterministic_algorithms_enabled()


def test_grad_scaler_is_amps():
    assert ember.GradScaler is ember.amp.GradScaler
