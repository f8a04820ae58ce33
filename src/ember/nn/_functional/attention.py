"""Multi-head attention, functional form (PyTorch's `multi_head_attention_forward`).

Inputs are (L, N, E) (or unbatched (L, E)). Boolean masks mean "True = masked out"
and are turned into additive -inf masks, as PyTorch does; with `need_weights` the
attention weights are computed explicitly (and returned, averaged over heads by
default), otherwise the call goes through `scaled_dot_product_attention`.
"""

from __future__ import annotations

import math
import warnings

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ...ops._common import c_type_name
from .layers import dropout, linear, scaled_dot_product_attention

__all__ = ["multi_head_attention_forward"]


def canonical_mask(mask: Tensor | None, name: str, dtype, other: Tensor | None = None,
                   other_name: str = "") -> Tensor | None:
    """A boolean mask as an additive float mask (-inf where True); float masks pass through.

    With `other` (a second mask), warns as PyTorch does when the two dtypes differ."""
    if mask is None:
        return None
    if other is not None and mask.dtype is not other.dtype and (
            mask.dtype is E.bool or mask.dtype.is_floating_point):
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      "type for both instead.", stacklevel=user_stacklevel())
    if mask.dtype is E.bool:
        return E.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str,
                    target_type, check_other: bool = True) -> Tensor | None:
    """PyTorch's private helper under its own name and signature (layers copied from
    torch.nn call it): a bool mask as an additive `target_type` mask (-inf where True), a
    float mask unchanged; warns when `other_type` (a second mask's dtype) differs."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not E.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=2)
    if is_float:
        return mask
    return E.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))


def _none_or_dtype(input: Tensor | None):
    """`input`'s dtype, or None for None (PyTorch's private helper, for `_canonical_mask`)."""
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def fused_masks(attn_mask: Tensor | None, key_padding_mask: Tensor | None, query: Tensor,
                num_heads: int) -> tuple[Tensor | None, Tensor | None]:
    """The masks PyTorch's fused inference kernels see, as boolean (attn_mask, key_padding_mask).

    Those kernels (`_native_multi_head_attention`, `_transformer_encoder_layer_fwd`) take one
    mask merged as `MultiheadAttention.merge_masks` does for a batch-first (N, L, E) query: a
    padding mask alone stays (N, L) ("mask type 1"); an attention mask is viewed as
    (N, H, L, L), plus the padding mask viewed as (N, 1, 1, L) ("mask type 2"). They read any
    nonzero value as masked and check only these shapes, so a misshapen mask that the unfused
    path rejects may pass (reinterpreted by `view`) or fail with the kernel's own message."""
    if attn_mask is None and key_padding_mask is None:
        return None, None
    n, length = query.shape[0], query.shape[1]
    if attn_mask is None:
        merged = key_padding_mask
        if merged.dim() == 2:
            if tuple(merged.shape) != (n, length):
                raise RuntimeError("For mask_type == 1 mask shape should be (B, L)")
            return None, merged if merged.dtype is E.bool else merged != 0
    else:
        if attn_mask.dim() == 3:
            merged = attn_mask.view(n, -1, length, length)
        else:
            merged = attn_mask.view(1, 1, length, length).expand(n, num_heads, -1, -1)
        if key_padding_mask is not None:
            kpm = key_padding_mask.view(n, 1, 1, length).expand(-1, num_heads, -1, -1)
            merged = merged | kpm if merged.dtype is E.bool and kpm.dtype is E.bool \
                else merged + kpm
    if tuple(merged.shape) != (n, num_heads, length, length):
        raise RuntimeError("For mask_type == 2 mask shape should match input shape")
    merged = merged if merged.dtype is E.bool else merged != 0
    return merged.reshape(n * num_heads, length, length), None


def fused_autocast_input(x: Tensor) -> Tensor:
    """The input of a fused inference kernel as CPU autocast hands it over.

    PyTorch's fast-path checks ask `torch.is_autocast_enabled()`, which names CUDA, so under
    CPU autocast those kernels still run; autocast lists them as lower-precision ops, so they
    take the input (and weights) in its dtype and return that dtype. As everywhere in
    autocast, only float32 is cast (a float64 input then meets low-precision weights)."""
    if E.is_autocast_enabled("cpu") and x.dtype is E.float32:
        return x.to(E.get_autocast_dtype("cpu"))
    return x


def _shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                 attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the call is batched (3-D query) or not (2-D), checking the other ranks."""
    kind = {3: "batched (3-D)", 2: "unbatched (2-D)"}.get(query.dim())
    if kind is None:
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    n = query.dim()
    if key.dim() != n or value.dim() != n:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {n}-D but "
                             f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != n - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{n - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.dim()}-D tensor instead")
        want = (num_heads, query.shape[0], key.shape[0])
        if n == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != want:
            raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                 f"{attn_mask.shape}")
    return n == 3


def _check_mask_shape(attn_mask: Tensor, bsz: int, num_heads: int, tgt_len: int,
                      src_len: int) -> Tensor:
    """A 2-D (L, S) or 3-D (N * heads, L, S) mask, checked and made 3-D."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _static(given: Tensor | None, name: str, computed: Tensor, n: int, head_dim: int) -> Tensor:
    """Keys or values given as (N * heads, S, head_dim), or the projected ones split by head."""
    if given is None:
        return computed.reshape(computed.shape[0], n, head_dim).transpose(0, 1)
    if given.size(0) != n:
        raise AssertionError(f"expecting {name}.size(0) of {n}, but got {given.size(0)}")
    if given.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {given.size(2)}")
    return given


def _check_separate_proj(query: Tensor, key: Tensor, value: Tensor, weights, biases) -> None:
    """torch's checks on separate q/k/v projections (kdim/vdim differ from embed_dim): each
    weight maps its input's last dim to the query's, each bias has the query's width."""
    e = query.size(-1)
    for name, x, w in zip(("query", "key", "value"), (query, key, value), weights):
        if tuple(w.shape) != (e, x.size(-1)):
            raise AssertionError(f"expecting {name} weights shape of {(e, x.size(-1))}, but got "
                                 f"{w.shape}")
    for name, b in zip(("query", "key", "value"), biases):
        if b is not None and tuple(b.shape) != (e,):
            raise AssertionError(f"expecting {name} bias shape of {(e,)}, but got {b.shape}")


def _project(query, key, value, in_w, in_b, q_w, k_w, v_w, e: int):
    b_q, b_k, b_v = in_b.chunk(3) if in_b is not None else (None, None, None)
    if in_w is not None:
        w_q, w_k, w_v = in_w.chunk(3)
    else:
        w_q, w_k, w_v = q_w, k_w, v_w
        _check_separate_proj(query, key, value, (w_q, w_k, w_v), (b_q, b_k, b_v))
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """Append one zero column (for the extra key added by bias_k or add_zero_attn)."""
    if mask is None:
        return None
    zeros = E.zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype)
    return E.cat([mask, zeros], -1)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k=None, static_v=None,
        average_attn_weights: bool = True, is_causal: bool = False):
    """Attention of `query` over `key`/`value` with `num_heads` heads; returns (output,
    weights or None)."""
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", query.dtype,
                                      attn_mask, "attn_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention applies the causal mask itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", query.dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight and key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                             f"value's {value.shape[:2]}")
    if not use_separate_proj_weight and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight and in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
        if use_separate_proj_weight and w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is "
                                 "None")
    q, k, v = _project(query, key, value, None if use_separate_proj_weight else in_proj_weight,
                       in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, embed_dim)
    if attn_mask is not None:
        attn_mask = _check_mask_shape(attn_mask, bsz, num_heads, tgt_len, src_len)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            which = "key" if static_k is not None else "value"
            raise AssertionError(f"bias cannot be added to static {which}.")
        k = E.cat([k, bias_k.repeat(1, bsz, 1)])
        v = E.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static(static_k, "static_k", k, bsz * num_heads, head_dim)
    v = _static(static_v, "static_v", v, bsz * num_heads, head_dim)
    if add_zero_attn:
        k = E.cat([k, E.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)], 1)
        v = E.cat([v, E.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype)], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        for dim, want in ((0, bsz), (1, src_len)):
            if key_padding_mask.shape[dim] != want:
                raise AssertionError(f"Expected key_padded_mask.shape[{dim}] to be {want}, but "
                                     f"got {key_padding_mask.shape[dim]}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / float(head_dim))).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            if attn_mask.dtype is not q.dtype:  # (torch adds it by baddbmm, which checks)
                raise RuntimeError("Input dtypes must be the same, got: input "
                                   f"{c_type_name(attn_mask.dtype)}, batch1: "
                                   f"{c_type_name(q.dtype)}, batch2: {c_type_name(k.dtype)}")
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.matmul(v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    return (out if batched else out.squeeze(1)), None
