"""bincount with weights against torch: float32 weights add up in float32, one at a time in
input order (exact: the same sequence of correctly rounded adds); other weights in float64."""

import pytest
import torch

from helpers import assert_same, to_ember


def _check(idx, w, minlength=0):
    t = torch.bincount(idx, weights=w, minlength=minlength)
    e = to_ember(idx).bincount(to_ember(w), minlength=minlength)
    assert_same(e, t, rtol=0, atol=0)


def test_float32_weights_accumulate_in_float32():
    # 20000 adds of 0.1 into one bin: float64 accumulation would round to exactly 2000.0
    _check(torch.zeros(20000, dtype=torch.long), torch.full((20000,), 0.1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "int32", "bool"])
def test_weight_dtypes(dtype):
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 7, (5000,), generator=g)
    w = (torch.randn(5000, generator=g) * 3).to(getattr(torch, dtype))
    _check(idx, w)
    _check(idx.to(torch.int32), w, minlength=10)


def test_empty_and_minlength():
    _check(torch.tensor([], dtype=torch.long), torch.tensor([]), minlength=3)
    _check(torch.tensor([], dtype=torch.long), torch.tensor([]))
    _check(torch.tensor([4, 1, 1]), torch.tensor([0.5, 0.25, 0.125]), minlength=2)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_weights_count_their_real_parts_in_float64(dtype):
    import warnings

    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 5, (300,), generator=g)
    w = torch.randn(300, dtype=getattr(torch, dtype), generator=g)
    with warnings.catch_warnings():
        # (both warn "Casting complex values to real discards the imaginary part", once a
        # process, as PyTorch's TORCH_WARN_ONCE)
        warnings.simplefilter("ignore")
        _check(idx, w)
