"""NumPy scalars as operands, against torch: PyTorch's argument parser reads a NumPy scalar
as the Python number it holds (`_dtype.py_number`): an integer as an int, np.float64 and
np.complex128 as the float and complex they are, every other kind (bool_, float16, float32,
complex64) through `float()`. So `x + np.bool_(True)` adds 1.0 and promotes as a float, and
`x * np.complex64(1j)` drops the imaginary part (with NumPy's ComplexWarning) - in binary
ops, comparisons, clamp, where, fill_ / full / masked_fill, result_type and the
corrections of the spread reductions alike."""

import warnings

import numpy as np
import torch

import ember

from helpers import assert_same, raised

SCALARS = [np.bool_(True), np.bool_(False), np.int8(3), np.int64(-2), np.uint8(200),
           np.float16(1.5), np.float32(2.5), np.float64(-0.75), np.complex64(2 + 1j),
           np.complex128(1j)]

# `fn(L, s)`: one call of the public API with the NumPy scalar `s`
CALLS = {
    "add_int": lambda L, s: L.add(L.tensor([1, 2]), s),
    "radd_int8": lambda L, s: s + L.tensor([1, 2], dtype=L.int8),
    "sub_float": lambda L, s: L.tensor([1.0, 2.0]) - s,
    "mul_half": lambda L, s: L.tensor([1.0, 2.0], dtype=L.float16) * s,
    "mul_bool": lambda L, s: L.tensor([True, False]) * s,
    "div_int": lambda L, s: L.tensor([3, 4]) / s,
    "pow_float": lambda L, s: L.tensor([2.0, 3.0]).pow(s),
    "mul_inplace": lambda L, s: L.tensor([1.0, 2.0]).mul_(s),
    "add_complex": lambda L, s: L.tensor([1.0, 2.0], dtype=L.complex64) + s,
    "eq_int": lambda L, s: L.tensor([1, 3]) == s,
    "lt_float": lambda L, s: L.tensor([1.0, 3.0]) < s,
    "clamp_int": lambda L, s: L.tensor([1, 5], dtype=L.int32).clamp(min=s),
    "where_int": lambda L, s: L.where(L.tensor([True, False]), L.tensor([7, 8]), s),
    "where_two": lambda L, s: L.where(L.tensor([True, False]), s, np.int64(1)),
    "full": lambda L, s: L.full((2,), s),
    "fill_": lambda L, s: L.zeros(2).fill_(s),
    "masked_fill": lambda L, s: L.zeros(2).masked_fill(L.tensor([True, False]), s),
    "result_type": lambda L, s: L.result_type(L.tensor([1], dtype=L.int8), s),
    "std_correction": lambda L, s: L.tensor([1.0, 2.0, 4.0]).std(correction=s),
    "index": lambda L, s: L.arange(6).reshape(3, 2)[s],
}


def test_numpy_scalars_are_read_as_python_numbers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (NumPy's ComplexWarning, in both)
        for name, call in CALLS.items():
            for s in SCALARS:
                want = raised(call, torch, s)
                if want is not None:
                    got = raised(call, ember, s)
                    assert got is not None and got[0] is want[0], (name, s, got, want)
                    continue
                got, want = call(ember, s), call(torch, s)
                if getattr(want, "dtype", None) is torch.complex32:
                    continue  # (half with a complex number: ember has no complex32)
                if isinstance(want, torch.dtype):
                    assert str(got).split(".")[1] == str(want).split(".")[1], (name, s)
                else:
                    assert_same(got, want)
