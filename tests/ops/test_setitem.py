"""setitem.py against torch: `x[key] = tensor` of another dtype converts the values as
PyTorch's copy does (a double to float16 / bfloat16 through float, a bfloat16 to an integer
through float with C's wrap-around), whatever NumPy's and ml_dtypes' own casts give."""

import numpy as np
import pytest
import torch

import ember

# 1 + 2^-8 + 2^-40 and 1 + 2^-11 + 2^-40 round to 1 through float32 (a tie there, to even)
# and up when rounded once; 2^24 + 2^16 + 1 is a float32 tie that rounds down to bfloat16's 2^24
_DOUBLES = [1 + 2**-8 + 2**-40, 1 + 2**-11 + 2**-40, 0.1, -70000.5, 1e39, 65520.0, -3.3]
_INT64 = [2**24 + 2**16 + 1, 2049, 257, -(2**40) - 1]


def _assign(lib, dst_dtype: str, src, src_dtype: str, key=slice(None)):
    """A zero tensor of `dst_dtype` with `src` (of `src_dtype`) written at `key`."""
    x = lib.zeros(len(src) + 1, dtype=getattr(lib, dst_dtype))
    x[key] = lib.tensor(src, dtype=getattr(lib, src_dtype))
    return x


@pytest.mark.parametrize("key", [slice(1, None), (slice(1, None),), (Ellipsis, slice(1, None))],
                         ids=["slice", "tuple", "ellipsis"])
@pytest.mark.parametrize("dst, src, src_dtype", [
    ("bfloat16", _DOUBLES, "float64"), ("float16", _DOUBLES, "float64"),
    ("bfloat16", _INT64, "int64"), ("float16", _INT64, "int64"),
    ("bfloat16", _DOUBLES, "float32")])
def test_values_of_another_dtype_round_as_torch_copies(dst, src, src_dtype, key):
    got, want = (_assign(L, dst, src, src_dtype, key) for L in (ember, torch))
    # (one conversion each: bit for bit)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("dst", ["uint8", "int8", "int16", "int32"])
def test_bfloat16_values_into_integers_wrap_as_torch(dst):
    # (bfloat16 -> float -> integer: C's conversion, which wraps -2.7 to 254 in uint8)
    vals = [-2.7, 300.5, -130.2, 70000.0, 1.5]
    got, want = (_assign(L, dst, vals, "bfloat16", slice(1, None)) for L in (ember, torch))
    assert got.tolist() == want.tolist()
