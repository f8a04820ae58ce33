"""The ops PyTorch's CPU kernels compute as fused multiply-adds (ops/_multiply_add.py):
`add` / `sub` with `alpha=`, `addcmul` and `lerp`, out of place and in place, give torch's
bits. Each is one rounding of an exact expression (fma(b, alpha, a), fma(value * t1, t2, x),
fma(w, end - start, start) or fma(-(end - start), 1 - w, end)), so no CPU's vector path
changes them. Rounding the product before the sum, as ember did, differs in the last bit of
10-30% of the elements. (This file runs in both kernel modes: the C kernels and NumPy's
emulation give the same bits.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import TORCH_VECTOR_KERNELS

N = 10_007  # (not a multiple of any vector width: torch's tails are fused too)
FLOATS = ["float32", "float64"]


def _pair(dtype: str, seed: int = 0, n: int = N):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(n, generator=g).to(getattr(torch, dtype))
    return t, ember.tensor(t.float().numpy()).to(getattr(ember, dtype))


def _same(t: torch.Tensor, e) -> None:
    """Bit for bit where torch runs its vectorised kernels (the fused ones); its scalar
    build (ATEN_CPU_CAPABILITY=default) rounds the product first: an ulp of the terms
    (all of about unit size here), more of a result that cancels."""
    a, b = t.double().numpy(), e.double().numpy()
    same = (a == b) | np.isnan(a) & np.isnan(b)
    if not TORCH_VECTOR_KERNELS:
        same |= np.abs(a - b) <= 4 * torch.finfo(t.dtype).eps * np.maximum(np.abs(a), 1)
    assert same.all(), f"{(~same).sum()} of {a.size} differ, first at {np.argwhere(~same)[0]}"
    assert str(t.dtype)[6:] == str(e.dtype)[6:]  # ("torch." against "ember.")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("alpha", [0.1, -0.37, 3.0])
def test_add_and_sub_with_alpha(dtype, alpha):
    (ta, ea), (tb, eb) = _pair(dtype, 0), _pair(dtype, 1)
    _same(torch.add(ta, tb, alpha=alpha), ember.add(ea, eb, alpha=alpha))
    _same(torch.sub(ta, tb, alpha=alpha), ember.sub(ea, eb, alpha=alpha))
    _same(ta.add(tb[::2].repeat(2)[:N], alpha=alpha), ea.add(eb[::2].repeat(2)[:N], alpha=alpha))
    _same(torch.add(ta[::3], tb[1::3], alpha=alpha), ember.add(ea[::3], eb[1::3], alpha=alpha))
    _same(torch.add(ta.view(-1, 1)[:100], tb[:7], alpha=alpha),  # broadcast
          ember.add(ea.view(-1, 1)[:100], eb[:7], alpha=alpha))


@pytest.mark.parametrize("dtype", FLOATS)
def test_in_place_add_and_sub_with_alpha(dtype):
    (ta, ea), (tb, eb) = _pair(dtype, 0), _pair(dtype, 1)
    ta.add_(tb, alpha=-0.01)
    ea.add_(eb, alpha=-0.01)
    _same(ta, ea)
    ta.sub_(ta, alpha=0.3)  # (the operand is the destination itself)
    ea.sub_(ea, alpha=0.3)
    _same(ta, ea)
    ta[1::2].add_(tb[::2][:N // 2], alpha=0.7)  # (a strided destination)
    ea[1::2].add_(eb[::2][:N // 2], alpha=0.7)
    _same(ta, ea)


@pytest.mark.parametrize("dtype", FLOATS + ["float16", "bfloat16"])
@pytest.mark.parametrize("value", [1, 0.3, -2.5])
def test_addcmul(dtype, value):
    (tx, ex), (t1, e1), (t2, e2) = _pair(dtype, 0), _pair(dtype, 1), _pair(dtype, 2)
    _same(torch.addcmul(tx, t1, t2, value=value), ember.addcmul(ex, e1, e2, value=value))
    tx.addcmul_(t1, t1, value=value)
    ex.addcmul_(e1, e1, value=value)
    _same(tx, ex)


@pytest.mark.parametrize("dtype", FLOATS + ["float16", "bfloat16"])
@pytest.mark.parametrize("weight", [0.1, 0.3, 0.5, 0.7, 1.0, -0.2, 1.3])
def test_lerp_with_a_number_weight(dtype, weight):
    (ts, es), (te, ee) = _pair(dtype, 0), _pair(dtype, 1)
    _same(torch.lerp(ts, te, weight), ember.lerp(es, ee, weight))
    ts.lerp_(te, weight)
    es.lerp_(ee, weight)
    _same(ts, es)


@pytest.mark.parametrize("dtype", FLOATS + ["float16", "bfloat16"])
def test_lerp_with_a_tensor_weight(dtype):
    (ts, es), (te, ee) = _pair(dtype, 0), _pair(dtype, 1)
    tw = (torch.rand(N, generator=torch.Generator().manual_seed(3)) * 1.6 - 0.3).to(ts.dtype)
    ew = ember.tensor(tw.float().numpy()).to(es.dtype)
    _same(torch.lerp(ts, te, tw), ember.lerp(es, ee, ew))
    _same(torch.lerp(ts[:50, None], te[:9], tw[:9]), ember.lerp(es[:50, None], ee[:9], ew[:9]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_values(dtype):
    v = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, -1.0, 1e30]
    t = torch.tensor(v, dtype=getattr(torch, dtype))
    a, b = t.repeat_interleave(len(v)), t.repeat(len(v))
    ea, eb = ember.tensor(a.numpy()), ember.tensor(b.numpy())
    for torch_fn, ember_fn in ((lambda x, y: torch.add(x, y, alpha=-0.5),
                                lambda x, y: ember.add(x, y, alpha=-0.5)),
                               (lambda x, y: torch.addcmul(x, y, x, value=0.25),
                                lambda x, y: ember.addcmul(x, y, x, value=0.25)),
                               (lambda x, y: torch.lerp(x, y, 0.25),
                                lambda x, y: ember.lerp(x, y, 0.25)),
                               (lambda x, y: torch.lerp(x, y, 0.75),
                                lambda x, y: ember.lerp(x, y, 0.75))):
        want, got = torch_fn(a, b).numpy(), ember_fn(ea, eb).numpy()
        same = (want == got) & (np.signbit(want) == np.signbit(got)) | \
            np.isnan(want) & np.isnan(got)
        if not TORCH_VECTOR_KERNELS:  # (see `_same`)
            same |= np.abs(want - got) <= 4 * np.finfo(want.dtype).eps * np.abs(want)
        assert same.all(), list(zip(a.numpy()[~same], b.numpy()[~same], got[~same]))


def test_integers_and_complex_numbers_multiply_then_add():
    a, b = torch.arange(-5, 5), torch.arange(10) * 7
    assert torch.equal(torch.add(a, b, alpha=3), torch.tensor(ember.add(
        ember.tensor(a.numpy()), ember.tensor(b.numpy()), alpha=3).numpy()))
    x = torch.tensor([1 + 2j, -3 + 0.5j], dtype=torch.complex64)
    got = ember.lerp(ember.tensor(x.numpy()), ember.tensor((x * 2).numpy()), 0.25)
    np.testing.assert_allclose(got.numpy(), torch.lerp(x, x * 2, 0.25).numpy(), rtol=1e-6)


def test_gradients_are_unchanged():
    a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = ember.tensor([0.5, -1.0, 4.0], requires_grad=True)
    (ember.add(a, b, alpha=0.5) * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0, 3.0] and b.grad.tolist() == [0.5, 1.0, 1.5]
    a.grad = b.grad = None
    ember.lerp(a, b, 0.25).sum().backward()
    assert a.grad.tolist() == [0.75] * 3 and b.grad.tolist() == [0.25] * 3


def test_lerp_promotes_a_zero_dim_weight_tensor_as_torch():
    cases = [(lambda lib: lib.lerp(lib.ones(3), lib.zeros(3), lib.tensor(0.5, dtype=lib.float64))),
             (lambda lib: lib.lerp(lib.ones(3), lib.zeros(3), lib.tensor(1))),
             (lambda lib: lib.lerp(lib.ones(3), lib.zeros(3), lib.tensor(0.5 + 0j))),
             (lambda lib: lib.lerp(lib.tensor(1.0), lib.tensor(0.0),
                                   lib.tensor(0.5, dtype=lib.float64))),
             (lambda lib: lib.ones(3).lerp_(lib.zeros(3), lib.tensor(0.25, dtype=lib.float64))),
             (lambda lib: lib.ones(3).lerp_(lib.zeros(3), lib.tensor(0.25 + 0j))),
             (lambda lib: lib.lerp(lib.ones(3), lib.zeros(3), lib.full((3,), 0.5,
                                                                      dtype=lib.float64)))]
    for case in cases:
        got = []
        for lib in (torch, ember):
            try:
                r = case(lib)
                got.append((str(r.dtype)[6:], r.tolist()))
            except RuntimeError as e:
                got.append(("RuntimeError", str(e)))
        assert got[0] == got[1]


def _layout_operands(lib, form: str):
    """A per-channel operand (broadcast) and a channels-last batch, or a row vector and a
    transposed matrix: the broadcast operand first, so the other decides the layout."""
    g = lib.Generator().manual_seed(0)
    if form == "cl":
        x = lib.randn(2, 3, 4, 5, generator=g).contiguous(memory_format=lib.channels_last)
        return lib.randn(1, 3, 1, 1, generator=g), x
    return lib.randn(1, 3, generator=g), lib.randn(3, 10, generator=g).t()


@pytest.mark.parametrize("form", ["cl", "t2"])
def test_fused_results_keep_the_layout_torch_gives(form):
    """Regression: the C kernels broadcast their operands row-major and wrote a row-major
    result, so `addcmul(bias, x_channels_last, scale)` (batch norm in eval) lost the
    channels-last layout that torch's TensorIterator (and the NumPy twin) keep."""
    calls = {
        "addcmul": lambda L, s, x: L.addcmul(s, x, s, value=0.5),
        "addcdiv": lambda L, s, x: L.addcdiv(s, x, s.exp()),
        "lerp": lambda L, s, x: L.lerp(s.expand_as(x).contiguous(), x, 0.25),
        "lerp_tensor": lambda L, s, x: L.lerp(s.expand_as(x).contiguous(), x, s.sigmoid()),
        "add_alpha": lambda L, s, x: L.add(s, x, alpha=2),
        "sub_alpha": lambda L, s, x: L.sub(s, x, alpha=0.5),
    }
    for name, fn in calls.items():
        got = fn(ember, *_layout_operands(ember, form))
        want = fn(torch, *_layout_operands(torch, form))
        assert got.stride() == want.stride(), name
        # (the values are the other tests' subject: addcdiv's quotient may differ in a bit)
        torch.testing.assert_close(torch.tensor(got.numpy()), want, rtol=1e-6, atol=1e-7)
