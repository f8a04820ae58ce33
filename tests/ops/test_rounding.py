"""Where PyTorch's kernels round (ember.ops._rounding): add / sub with `alpha=` as one node,
addcdiv scaling t1 first, and the precision a Python number is read at next to a float16 /
bfloat16 tensor. Compared bit for bit with torch where ember rounds as it does."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

from helpers import TORCH_VECTOR_KERNELS, assert_ulp

RNG = np.random.default_rng(0)
A, B, C = (RNG.standard_normal(50_000).astype(np.float32) for _ in range(3))
POS = np.abs(C) + 0.5


def _both(fn, *arrays, dtype="float32"):
    """fn(lib, *tensors) in ember and torch, as float64 NumPy arrays."""
    out = []
    for lib in (ember, torch):
        xs = [lib.tensor(a).to(getattr(lib, dtype)) for a in arrays]
        out.append(fn(lib, *xs).double().numpy())
    return out


def _bitwise(fn, *arrays, dtype="float32"):
    e, t = _both(fn, *arrays, dtype=dtype)
    np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("alpha", [0.3, -2.71828, 1e-3])
def test_add_and_sub_with_alpha_round_once_in_float32(alpha):
    # one fused multiply-add, as PyTorch's vectorised kernels (ops/_multiply_add.py); its
    # scalar build (ATEN_CPU_CAPABILITY=default) rounds the product first: an ulp off
    k = np.float32(alpha)
    once = (A.astype(np.float64) + np.float64(k) * B).astype(np.float32)  # (k b is exact
    scale = (np.abs(A) + np.abs(k * B)).astype(np.float64) * 2.0**-23  # in float64; one
    for fn, want in ((lambda m, a, b: m.add(a, b, alpha=alpha), once),  # rounding, bar the
                     (lambda m, a, b: m.sub(a, b, alpha=alpha),  # rare halfway case)
                      (A.astype(np.float64) - np.float64(k) * B).astype(np.float32)),
                     (lambda m, a, b: a.clone().add_(b, alpha=alpha), once)):
        e, t = _both(fn, A, B)
        assert (e != want).mean() < 1e-4
        if TORCH_VECTOR_KERNELS:
            np.testing.assert_array_equal(e, t)
        assert (np.abs(e - t) <= scale).all()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_add_with_alpha_on_16_bit_floats_rounds_alpha_to_the_dtype(dtype):
    # (bfloat16 raised a TypeError here before)
    low = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    for alpha, fn in ((0.3, lambda m, a, b: m.add(a, b, alpha=0.3)),
                      (2.71828, lambda m, a, b: a.clone().sub_(b, alpha=-2.71828))):
        e, t = _both(fn, A, B, dtype=dtype)
        terms = np.abs(A.astype(low)).astype(np.float64) + alpha * np.abs(B.astype(low))
        assert_ulp(e.astype(low), t.astype(low), 2, "torch fuses b * alpha + a in float32 in "
                   "its AVX2/AVX512 loops but not in their tails nor in its default build",
                   scale=terms)
        if TORCH_VECTOR_KERNELS:  # the tail of each vectorised loop: a handful of elements
            assert np.mean(e != t) < 1e-3


def test_add_with_alpha_is_one_node_with_its_gradients():
    for lib in (ember, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        r = a.sub(b, alpha=2.5)
        assert type(r.grad_fn).__name__ == "SubBackward0"
        assert all(type(f).__name__ == "AccumulateGrad" for f, _ in r.grad_fn.next_functions)
        r.sum().backward()
        assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [-2.5, -2.5]


def test_integer_and_bool_alpha_wrap_as_torch():
    for lib in (ember, torch):
        x = lib.tensor([1, 2, 250], dtype=lib.uint8)
        assert x.sub(x, alpha=3).tolist() == [254, 252, 12]
        assert lib.tensor([True, False]).add(lib.tensor([True, True]), alpha=True).tolist() \
            == [True, True]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_addcdiv_scales_t1_before_dividing(dtype):
    _bitwise(lambda m, a, b, c: m.addcdiv(a, b, c, value=0.3), A, B, POS, dtype=dtype)
    _bitwise(lambda m, a, b, c: a.clone().addcdiv_(b, c, value=-1e-2), A, B, POS, dtype=dtype)


NUMBERS = [0.3, 3.14159, -2.71828, 7]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("s", NUMBERS)
def test_mul_and_div_read_a_number_at_float32_precision(dtype, s):
    for fn in (lambda m, a: a * s, lambda m, a: s * a, lambda m, a: a / s,
               lambda m, a: s / a, lambda m, a: a.clone().mul_(s),
               lambda m, a: a.clone().div_(s), lambda m, a: m.floor_divide(a, s),
               lambda m, a: m.div(a, s, rounding_mode="trunc"),
               lambda m, a: a.clone().div_(s, rounding_mode="floor")):
        _bitwise(fn, A * 8, dtype=dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("s", NUMBERS)
def test_other_ops_round_a_number_to_the_tensor_dtype_first(dtype, s):
    for fn in (lambda m, a: a + s, lambda m, a: a - s, lambda m, a: m.remainder(a, s),
               lambda m, a: m.fmod(a, s), lambda m, a: a.abs() ** s,
               lambda m, a: abs(s) ** a.clamp(-3, 3), lambda m, a: a > s):
        _bitwise(fn, A * 8, dtype=dtype)


def test_a_number_out_of_float16_range_becomes_infinity_or_stays_in_float32():
    for lib in (ember, torch):
        x = lib.tensor([1.0, -2.0], dtype=lib.float16)
        assert (x + 1e6).tolist() == [float("inf"), float("inf")]  # rounded to float16 first
        # 1e5 read at float32 (not inf): 1e-3 rounds to 0.0010004 in float16, times 1e5
        # is 100.04, which rounds to 100.0625 in float16
        assert (lib.tensor([1e-3], dtype=lib.float16) * 1e5).tolist() == [100.0625]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("zero_d", ["float32", "float64"])
@pytest.mark.parametrize("s", [0.3, -2.285])
def test_a_0d_tensor_second_is_read_as_a_number_first_as_a_tensor(dtype, zero_d, s):
    # mul / div read a 0-d tensor second at float32 precision, as a number (seed 20261244)
    def zd(m):
        return m.tensor(s, dtype=getattr(m, zero_d))

    for fn in (lambda m, a: a * zd(m), lambda m, a: a / zd(m),
               lambda m, a: m.div(a, zd(m), rounding_mode="trunc"),
               lambda m, a: a.clone().mul_(zd(m)),
               # first, it is rounded to the tensor's dtype
               lambda m, a: zd(m) * a, lambda m, a: a + zd(m)):
        _bitwise(fn, A * 8, dtype=dtype)


def test_pow_in_place_computes_in_the_common_dtype():
    # a float32 exponent is not rounded to self's bfloat16 first: (-1.34) ** 2.997 is NaN,
    # where (-1.34) ** 3.0 would not be (seed 20261242)
    for lib in (ember, torch):
        a = lib.tensor([-1.3359375, 2.0], dtype=lib.bfloat16)
        out = a.pow_(lib.tensor([2.997, 0.3]))
        assert np.isnan(out[0].item()) and out[1].item() == 1.234375
        assert out.dtype == lib.bfloat16


@pytest.mark.parametrize("op", ["mul", "div", "mul_", "floor_divide"])
@pytest.mark.parametrize("scalar", [np.float16, np.float32, np.float64])
def test_numpy_number_beside_16_bit_tensor_warns_nothing(op, scalar):
    # (a float16 number once read float32's bounds as float16: an overflow RuntimeWarning)
    import warnings

    outs = []
    for lib in (ember, torch):
        x = lib.tensor([0.7, 1.3, -2.5], dtype=lib.float16)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            calls = {"mul": lambda y: y * scalar(1.3), "div": lambda y: y / scalar(1.3),
                     "mul_": lambda y: y.clone().mul_(scalar(1.3)),
                     "floor_divide": lambda y: y // scalar(0.7)}
            outs.append(calls[op](x))
    e, t = outs
    # (one correctly rounded float32 op, then one rounding to float16: bit for bit)
    assert e.tolist() == t.tolist()
    assert str(e.dtype).split(".")[1] == "float16" == str(t.dtype).split(".")[1]
