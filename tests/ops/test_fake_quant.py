"""fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine against torch: values,
gradients, node names and argument errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import E2T, raised

# values at and next to rounding ties (x / scale = k + 0.5), beyond both ends, NaN and inf
X = np.array([-1.0, 0.26, 0.3, 0.05, 0.15, 0.25, 2.0, -0.35, 0.45, 12.7, -13.0, 0.0, -0.0,
              np.nan, np.inf, -np.inf], np.float32)


def _pair(a, dtype=ember.float32, grad=False):
    e = ember.tensor(a).to(dtype).requires_grad_(grad)
    return e, torch.tensor(a).to(E2T[dtype]).requires_grad_(grad)


def assert_bits(e, t):
    # exact, sign of zero included: one multiply by a float32 reciprocal, a round half to
    # even and one product rounded once, the same single-rounded steps as torch's kernel
    assert e.dtype == {v: k for k, v in E2T.items()}[t.dtype]
    a, b = e.detach().double().numpy(), t.detach().double().numpy()
    assert np.array_equal(a, b, equal_nan=True) and (np.signbit(a) == np.signbit(b)).all()


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16],
                         ids=str)
@pytest.mark.parametrize("scale,zp,lo,hi", [(0.1, 0, -128, 127), (0.1, 3, -8, 7),
                                            (0.05, 128, 0, 255), (0.37, -2, -5, 5)])
def test_per_tensor_values_and_gradient(dtype, scale, zp, lo, hi):
    e, t = _pair(X, dtype, grad=True)
    fe = ember.fake_quantize_per_tensor_affine(e, scale, zp, lo, hi)
    ft = torch.fake_quantize_per_tensor_affine(t, scale, zp, lo, hi)
    assert_bits(fe, ft)
    assert type(fe.grad_fn).__name__ == ft.grad_fn.name()
    w = np.arange(len(X), dtype=np.float32)
    (fe * ember.tensor(w).to(dtype)).sum().backward()
    (ft * torch.tensor(w).to(E2T[dtype])).sum().backward()
    assert_bits(e.grad, t.grad)


def test_per_tensor_with_tensor_qparams():
    e, t = _pair(X, grad=True)
    for zp in (0, 3, 0.7, -0.7, 300):  # a float zero point truncates; no range check here
        fe = ember.fake_quantize_per_tensor_affine(e, ember.tensor(0.1), ember.tensor(zp), -8, 7)
        ft = torch.fake_quantize_per_tensor_affine(t, torch.tensor(0.1), torch.tensor(zp), -8, 7)
        assert_bits(fe, ft)
        assert type(fe.grad_fn).__name__ == ft.grad_fn.name()
    fe.sum().backward()
    ft.sum().backward()
    assert_bits(e.grad, t.grad)
    with ember.no_grad():
        assert ember.fake_quantize_per_tensor_affine(e, 0.1, 0, -8, 7).grad_fn is None


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16], ids=str)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("zp_dtype", [ember.int32, ember.float32, ember.float16], ids=str)
def test_per_channel_values_and_gradient(dtype, axis, zp_dtype):
    x = (np.random.default_rng(axis).standard_normal((3, 4)) * 2).astype(np.float32)
    x[0, 0] = 0.35  # a tie at scale 0.1
    e, t = _pair(x, dtype, grad=True)
    n = x.shape[axis]
    scale = np.array([0.1, 0.2, 0.3, 0.05][:n], np.float32)
    zp = np.array([0, 1, -1, 2][:n])
    se, st = ember.tensor(scale), torch.tensor(scale)
    ze, zt = ember.tensor(zp).to(zp_dtype), torch.tensor(zp).to(E2T[zp_dtype])
    fe = ember.fake_quantize_per_channel_affine(e, se, ze, axis, -8, 7)
    ft = torch.fake_quantize_per_channel_affine(t, st, zt, axis, -8, 7)
    assert_bits(fe, ft)
    assert type(fe.grad_fn).__name__ == ft.grad_fn.name()
    fe.pow(2).sum().backward()
    ft.pow(2).sum().backward()
    assert_bits(e.grad, t.grad)


def _errors(lib):
    x = lib.ones(2, 3)
    s3, z3 = lib.ones(3) * 0.1, lib.zeros(3, dtype=lib.int32)
    return [
        lambda: lib.fake_quantize_per_tensor_affine(x, 0.1, 0, 10, -10),
        lambda: lib.fake_quantize_per_tensor_affine(x, 0.1, 20, -10, 10),
        lambda: lib.fake_quantize_per_tensor_affine(x, lib.tensor(0.1), lib.tensor(0), 5, 1),
        lambda: lib.fake_quantize_per_tensor_affine(x.int(), 0.1, 0, -10, 10),
        lambda: lib.fake_quantize_per_tensor_affine(x, 1, 0.5, -10, 10),
        lambda: lib.fake_quantize_per_tensor_affine(x, lib.ones(2), lib.tensor(0), -10, 10),
        lambda: lib.fake_quantize_per_tensor_affine(
            x, lib.tensor(0.1, requires_grad=True), lib.tensor(0), -10, 10),
        lambda: lib.fake_quantize_per_channel_affine(x, s3, z3, 0, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x, s3.double(), z3, 1, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x, s3, z3.long(), 1, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x, s3[None], z3[None], 1, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x, s3[:2], z3, 1, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x, s3, z3, 1, 9, 1),
        lambda: lib.fake_quantize_per_channel_affine(x, s3, z3 - 1, 1, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x.T, s3, z3, -2, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x, s3, z3, 2, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(x.int(), s3, z3, 1, 0, 255),
        lambda: lib.fake_quantize_per_channel_affine(lib.tensor(1.0), s3[:1], z3[:1], 0, 0, 9),
    ]


@pytest.mark.parametrize("i", range(len(_errors(torch))))
def test_errors_like_torch(i):
    want = raised(_errors(torch)[i])
    assert want is not None and raised(_errors(ember)[i]) == want


def test_gradient_under_func_grad_like_torch():
    x = np.array([-1.0, 0.26, 0.3, 2.0, -0.0], np.float32)

    def per_tensor(lib):
        return lambda v: lib.fake_quantize_per_tensor_affine(v, 0.1, 0, -8, 7).pow(2).sum()

    def per_channel(lib):
        return lambda v: lib.fake_quantize_per_channel_affine(
            v, lib.tensor([0.1, 0.2]), lib.tensor([0, 1], dtype=lib.int32), 0, -8, 7).sum()

    assert_bits(ember.func.grad(per_tensor(ember))(ember.tensor(x)),
                torch.func.grad(per_tensor(torch))(torch.tensor(x)))
    assert_bits(ember.func.grad(per_channel(ember))(ember.tensor(x[:4]).reshape(2, 2)),
                torch.func.grad(per_channel(torch))(torch.tensor(x[:4]).reshape(2, 2)))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16], ids=str)
@pytest.mark.parametrize("zp_dtype", [ember.int32, ember.float32], ids=str)
def test_per_channel_levels_beyond_int64_become_quant_min(dtype, zp_dtype):
    # torch's per-channel kernel converts the level to int64 before clamping: inf and levels
    # past 2**63 become INT64_MIN (x86), hence quant_min; per tensor they clamp to quant_max
    x = np.array([[np.inf, -np.inf, np.nan, 1.0, 1e30, -1e30, 3e9, 1e19]], np.float32).T
    e, t = _pair(x, dtype, grad=True)
    se, st = ember.full((8,), 0.3), torch.full((8,), 0.3)
    ze, zt = ember.ones(8).to(zp_dtype), torch.ones(8).to(E2T[zp_dtype])
    fe = ember.fake_quantize_per_channel_affine(e, se, ze, 0, -8, 7)
    ft = torch.fake_quantize_per_channel_affine(t, st, zt, 0, -8, 7)
    assert_bits(fe, ft)
    fe.sum().backward()
    ft.sum().backward()
    assert_bits(e.grad, t.grad)
    assert_bits(ember.fake_quantize_per_tensor_affine(e, 0.3, 1, -8, 7),
                torch.fake_quantize_per_tensor_affine(t, 0.3, 1, -8, 7))
