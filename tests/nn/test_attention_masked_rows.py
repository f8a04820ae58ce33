"""scaled_dot_product_attention on rows whose every key is masked (a left-padded batch, a
query before any key under a mask): PyTorch's fused kernel and its composite (`_safe_softmax`)
both give such a row zero weights, so a zero output and zero gradients, not a softmax's NaN.
"""

import pytest
import torch
import torch.nn.functional as F

import ember
import ember.nn.functional as EF

from helpers import assert_same

KEEP = [[True, False, True], [False, False, False], [True, True, False]]  # row 1: nothing


def _inputs(lib, shape, dtype, mask_kind):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(shape, generator=g).to(getattr(torch, dtype))
    q = q if lib is torch else ember.tensor(q.float().numpy()).to(getattr(ember, dtype))
    q.requires_grad_(dtype != "bfloat16")
    keep = lib.tensor(KEEP)
    if mask_kind == "bool":
        return q, keep
    return q, lib.zeros(3, 3, dtype=q.dtype).masked_fill(keep.logical_not(), float("-inf"))


def _attend(lib, shape, dtype, mask_kind, **kw):
    q, mask = _inputs(lib, shape, dtype, mask_kind)
    F_ = F if lib is torch else EF
    out = F_.scaled_dot_product_attention(q, q, q, attn_mask=mask, **kw)
    if q.requires_grad:
        (out * lib.arange(out.numel()).reshape(out.shape).to(out.dtype)).sum().backward()
    return out, q.grad


# (4-D without dropout: PyTorch's fused kernel; 3-D: its composite)
@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 4)], ids=["fused", "composite"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("mask_kind", ["bool", "additive"])
def test_a_fully_masked_row_gives_zeros(shape, dtype, mask_kind):
    # (products, exp and sums: float tolerance; the masked rows are exactly zero)
    out, grad = _attend(ember, shape, dtype, mask_kind)
    want, want_grad = _attend(torch, shape, dtype, mask_kind)
    assert_same(out, want, rtol=1e-2 if dtype == "bfloat16" else 1e-5)
    assert (out[..., 1, :] == 0).all()
    if want_grad is not None:
        assert_same(grad, want_grad, rtol=1e-5)


def test_a_fully_masked_row_under_dropout_is_zero_too():
    # dropout takes the composite path; the masked row is zero whatever is dropped
    q, mask = _inputs(ember, (1, 2, 3, 4), "float32", "bool")
    out = EF.scaled_dot_product_attention(q, q, q, attn_mask=mask, dropout_p=0.3)
    assert (out[..., 1, :] == 0).all()
    out.sum().backward()
    assert bool(q.grad.isfinite().all())
