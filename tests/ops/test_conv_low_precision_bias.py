"""A 16-bit convolution's bias is added in float32, before the result's one rounding, as
PyTorch's kernels do (every convolution kind, bfloat16 and float16, NumPy and native)."""

import ml_dtypes
import numpy as np
import pytest
import torch

import ember
from ember._cpu import onednn_bf16, onednn_fp16
from ember.nn import functional as F

from helpers import rand_array

# name -> (function name, x shape, weight shape, keyword arguments)
CASES = {
    "2-d patches": ("conv2d", (4, 3, 16, 16), (16, 3, 4, 4), {"stride": 4}),
    "2-d padded": ("conv2d", (2, 3, 9, 9), (8, 3, 3, 3), {"padding": 1}),
    "2-d 3x3 Winograd": ("conv2d", (2, 16, 8, 8), (16, 16, 3, 3), {"padding": 1}),
    "2-d groups": ("conv2d", (2, 4, 9, 9), (8, 2, 3, 3), {"groups": 2}),
    "2-d depthwise": ("conv2d", (2, 4, 9, 9), (4, 1, 3, 3), {"groups": 4}),
    "2-d 1x1": ("conv2d", (2, 4, 9, 9), (8, 4, 1, 1), {}),
    "1-d": ("conv1d", (2, 3, 20), (8, 3, 3), {}),
    "3-d": ("conv3d", (2, 3, 6, 6, 6), (8, 3, 3, 3, 3), {}),
    "transposed 1-d": ("conv_transpose1d", (2, 3, 6), (3, 8, 3), {"stride": 2}),
    "transposed 2-d": ("conv_transpose2d", (2, 3, 6, 6), (3, 8, 3, 3), {"stride": 2}),
    "transposed 3-d": ("conv_transpose3d", (2, 3, 4, 4, 4), (3, 8, 3, 3, 3), {"stride": 2}),
}
LOW = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}


def _operands(case, dtype):
    _, xs, ws, _ = CASES[case]
    n_out = ws[1] if CASES[case][0].startswith("conv_transpose") else ws[0]
    arrays = rand_array(xs), rand_array(ws, seed=1) * 0.3, rand_array((n_out,), seed=2) * 0.3
    # exactly representable in the 16-bit type, so both libraries start from the same values
    return [a.astype(LOW[dtype]).astype(np.float32) for a in arrays]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("case", CASES)
def test_bias_is_added_before_the_one_rounding(case, dtype):
    name, _, _, kw = CASES[case]
    x, w, b = (ember.tensor(a) for a in _operands(case, dtype))
    fn = getattr(F, name)
    low = getattr(ember, dtype)
    got = fn(x.to(low), w.to(low), b.to(low), **kw)
    # the float32 convolution of the same (16-bit) values, rounded once; without the bias
    # and rounded, then the bias added, differs in about a third of the elements
    once = fn(x, w, b, **kw).to(low)
    assert got.dtype == low
    # NOTE: the float32 sums run in a kernel's own order, which can differ from the float32
    # call's in the last bit and so round the other way: allow one element in two hundred
    assert (got != once).float().mean().item() <= 0.005


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("case", ["2-d patches", "transposed 2-d", "3-d"])
def test_16_bit_convolutions_with_a_bias_match_torch(case, dtype):
    name, _, _, kw = CASES[case]
    arrays = _operands(case, dtype)
    got = getattr(F, name)(*(ember.tensor(a).to(getattr(ember, dtype)) for a in arrays), **kw)
    want = getattr(torch.nn.functional, name)(
        *(torch.tensor(a).to(getattr(torch, dtype)) for a in arrays), **kw)
    a, b = got.float().numpy(), want.float().numpy()
    # NOTE: as above, float32 sums in another order than torch's oneDNN kernels may round a
    # rare element the other way, by one unit of the 16-bit type. Where the CPU lacks
    # oneDNN's instructions for the type (float16 on an AMD EPYC; bfloat16 too without
    # AVX-512, as on a Zen 3), torch runs a transposed 16-bit convolution in its slow
    # kernel, which rounds at every overlapping add (15-40% of elements differ from one
    # rounding): there only the tolerance holds.
    onednn = onednn_fp16() if dtype == "float16" else onednn_bf16()
    if not (case.startswith("transposed") and not onednn):
        assert (a != b).mean() <= 0.005
        np.testing.assert_allclose(a, b, rtol=2 ** -7, atol=2 ** -9)
    else:  # (up to five roundings of a partial sum, each half a 16-bit ulp of it: bfloat16's
        # ulp at the sums' magnitude, ~1-4, is 2^-7 to 2^-5)
        np.testing.assert_allclose(a, b, rtol=2 ** -6, atol=2 ** -5)
