"""Composite kernels over csrc/math_maps.c's loops (ops/_math_loops.py) beside their NumPy
kernels: elu / selu / celu (expm1), softplus, mish, log_sigmoid and the binary
cross-entropies (log1p).

The two kernels evaluate expm1 / log1p by different approximations (the C library's and
ember_math.h's, each within an ulp or two), so they agree to a few ulps of the result, not
bit for bit; NaN, infinities and signed zeros come out the same. Against torch (Sleef's
functions) the twin is as near as the NumPy kernel is."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import _cpu, native
from ember.ops import _math_loops, loss_ops
from ember.ops import activation as A
from native._differential import numpy_float32_excess, ulps

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, -100.0, 100.0, 1e-30, -1e-30, -1e-7, 1e-7]


def _inputs(dtype) -> np.ndarray:
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(20_000) * 5, rng.standard_normal(2_000) * 1e-4])
    return np.concatenate([SPECIALS, x]).astype(dtype)


# (name, member, params, torch's function, ulps from the NumPy kernel, ulps from torch).
# The bounds: expm1 / log1p within 1 ulp in each kernel, then one or two roundings of the
# composite (selu's scale, mish's tanh over a sum), seen at most 1-3 ulps on 22,000 inputs;
# float32 allows NumPy's own loops' excess on this CPU more (`numpy_float32_excess`)
UNARY = [
    ("elu", A.elu_p, dict(alpha=1.0, scale=1.0, input_scale=1.0),
     torch.nn.functional.elu, 1, 1),
    ("selu", A.elu_p, dict(alpha=A.SELU_ALPHA, scale=A.SELU_SCALE, input_scale=1.0),
     torch.selu, 2, 2),
    ("celu", A.celu_p, dict(alpha=2.0, scale=1.0, input_scale=0.5),
     lambda t: torch.celu(t, 2.0), 2, 2),
    ("softplus", A.softplus_p, dict(beta=1.0, threshold=20.0),
     torch.nn.functional.softplus, 1, 3),
    ("softplus_beta", A.softplus_p, dict(beta=2.0, threshold=5.0),
     lambda t: torch.nn.functional.softplus(t, 2.0, 5.0), 1, 3),
    ("mish", A.mish_p, {}, torch.nn.functional.mish, 6, 6),
    ("logsigmoid", A.logsigmoid_p, {}, torch.nn.functional.logsigmoid, 2, 2),
]


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,member,params,theirs,bound,from_torch", UNARY,
                         ids=[u[0] for u in UNARY])
def test_unary_twin_agrees_with_the_numpy_kernel(name, member, params, theirs, bound,
                                                 from_torch, dtype, n_threads):
    from native._differential import threads

    x = _inputs(dtype)
    lib = native.library("math_maps")
    with threads(n_threads), np.errstate(all="ignore"):
        got = member.kernel.native(lib, x, **params)
        want = member.kernel.numpy(x, **params)
    assert got.dtype == x.dtype and got.shape == x.shape
    extra = numpy_float32_excess() if dtype == np.float32 else 0
    assert ulps(got, want).max() <= bound + extra
    # NaN, +-inf and +-0: the same values and zero signs
    np.testing.assert_array_equal(got[:5], want[:5])
    np.testing.assert_array_equal(np.signbit(got[:5]), np.signbit(want[:5]))
    # (in ulps where torch's result is a normal number: mish(-100) is a subnormal float32
    # that each side rounds from a different product)
    ref = theirs(torch.tensor(x)).numpy()
    normal = ~(np.abs(ref) < np.finfo(dtype).tiny)
    assert ulps(got, ref)[normal].max() <= from_torch


def test_eager_runs_the_twin_on_every_layout_and_size(monkeypatch):
    from native._differential import layouts

    monkeypatch.setitem(_math_loops.NATIVE_MIN, "n", 0)
    lib = native.library("math_maps")
    x = _inputs(np.float32)
    for n in (0, 1, 17, 1001):
        a = x[:2 * n].reshape(n, 2)
        want = A.elu_p.kernel.native(lib, np.ascontiguousarray(a), alpha=1.0, scale=1.0,
                                     input_scale=1.0)
        for view in layouts(a).values():  # (the chooser eager calls: the twin)
            got = A.elu_p.kernel(view, alpha=1.0, scale=1.0, input_scale=1.0)
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(ember.nn.functional.elu(ember.tensor(a)).numpy(), want)
    # (and not NumPy's: the two differ somewhere in these inputs)
    with np.errstate(all="ignore"):
        numpy_bits = A.softplus_p.kernel.numpy(x, beta=1.0, threshold=20.0)
    eager = ember.nn.functional.softplus(ember.tensor(x)).numpy()
    assert not np.array_equal(eager, numpy_bits)
    np.testing.assert_array_equal(
        eager, A.softplus_p.kernel.native(lib, x, beta=1.0, threshold=20.0))


def test_the_gate_sends_small_or_vectorised_numpy_calls_to_numpy(monkeypatch):
    x = _inputs(np.float32)
    with np.errstate(all="ignore"):
        numpy_bits = A.softplus_p.kernel.numpy(x, beta=1.0, threshold=20.0)
    monkeypatch.setitem(_math_loops.NATIVE_MIN, "n", x.size + 1)
    np.testing.assert_array_equal(ember.nn.functional.softplus(ember.tensor(x)).numpy(),
                                  numpy_bits)
    # where NumPy runs its AVX-512 loops the twins are never tried, elsewhere always
    monkeypatch.undo()
    expected = 1 << 62 if _cpu.numpy_vector_math() else 1
    assert _math_loops.NATIVE_MIN["n"] == expected


def test_sixteen_bit_floats_stay_on_the_numpy_kernel():
    lib = native.library("math_maps")
    h = _inputs(np.float16)
    assert A.mish_p.kernel.native(lib, h) is NotImplemented
    got = ember.nn.functional.mish(ember.tensor(h)).numpy()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, A.mish_p.kernel.numpy(h))


# The losses: (1 - t) x - log_sigmoid(x) cancels where t is near 1 and x large, so a loss
# near 0 can sit more ulps of itself from the other kernel's (or torch's): the bound
# compares against the terms' size instead
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
def test_loss_twins_agree_with_the_numpy_kernel_and_torch(name, dtype):
    rng = np.random.default_rng(7)
    t = rng.random(20_000).astype(dtype)
    if name == "binary_cross_entropy":
        x = np.concatenate([[0.0, 1.0, 1e-30, 1 - 1e-7], rng.random(19_996)]).astype(dtype)
        member = loss_ops.bce_p
    else:
        x = (np.concatenate([SPECIALS[1:], rng.standard_normal(20_000 - 10) * 8])).astype(dtype)
        member = loss_ops.bce_logits_p
    lib = native.library("math_maps")
    got = member.kernel.native(lib, x, t, reduction="none")
    want = member.kernel.numpy(x, t, reduction="none")
    if name == "binary_cross_entropy" and dtype == np.float64:
        # (float64 stays on NumPy's log1p, the C library's, as torch's: its bits)
        assert got is NotImplemented
        got = want
    else:
        scale = np.abs(x) + 1
        eps = np.finfo(dtype).eps
        finite = np.isfinite(want)
        np.testing.assert_array_equal(np.isfinite(got), finite)
        assert (np.abs(got - want)[finite] <= 4 * eps * scale[finite]).all()
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t),
                                                reduction="none").numpy()
    finite = np.isfinite(theirs)
    assert (np.abs(got - theirs)[finite] <= 4 * np.finfo(dtype).eps
            * (np.abs(x) + 1)[finite]).all()
    # reduced: the same kernel, then the sum in order
    mean = member.kernel.native(lib, x[finite], t[finite], reduction="mean")
    if mean is not NotImplemented:
        np.testing.assert_allclose(mean, got[finite].mean(), rtol=4 * np.finfo(dtype).eps)


def test_loops_write_into_a_strided_out():
    m = _math_loops.native_loops(native.library("math_maps"))
    x = np.linspace(-3, 3, 64).astype(np.float32)
    out = np.zeros((64, 2), np.float32)[:, 0]  # (every other float: not contiguous)
    assert m.log1p(np.abs(x), out=out) is out
    np.testing.assert_array_equal(out, m.log1p(np.abs(x)))
    assert ulps(out, np.log1p(np.abs(x))).max() <= 1
    # a dtype the loops lack goes to NumPy's own ufunc
    ints = np.arange(5)
    np.testing.assert_array_equal(m.expm1(ints), np.expm1(ints))
