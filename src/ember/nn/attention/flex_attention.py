"""torch.nn.attention.flex_attention: attention whose scores a user function rewrites
(`score_mod(score, b, h, q_idx, kv_idx)`) and whose mask a user predicate decides
(`mask_mod(b, h, q_idx, kv_idx)`, carried by a `BlockMask`), run eagerly on the CPU.

PyTorch, without torch.compile, computes flex attention by its reference path: the full
score matrix, the user functions vmapped over the (b, h, q_idx, kv_idx) grid, a softmax
that gives zeros for fully masked rows. ember evaluates the user functions once on
broadcast index tensors (b of shape (B,1,1,1), h (1,H,1,1), q_idx (1,1,Q,1), kv_idx
(1,1,1,KV)), which gives the vmapped values for the element-wise torch code these
functions hold (comparisons, `where`, arithmetic, indexing of captured tables), and lets
autograd reach tensors they capture. As PyTorch's CPU path, it reads only the block mask's
mask_mod (not its block tables), and refuses q/k/v that require grad.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple, TypedDict

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from .._functional.layers import _safe_softmax
from ..functional import pad
from ._block_mask import (
    _DEFAULT_SPARSE_BLOCK_SIZE,
    _LARGE_SPARSE_BLOCK_SIZE,
    BlockMask,
    _dense_to_ordered,
    _sliced_mask_mod_error,
    noop_mask,
)

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]

# as PyTorch's debug switch: True silences the "called without torch.compile" warning
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False
_WARNINGS_SHOWN: set[str] = set()
_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")


def _warn_once(warning_id: str, message: str, category: type[Warning] = UserWarning) -> None:
    """Warn the first time only, per process, and not while being compiled (which still
    counts as the first time), as PyTorch's."""
    if warning_id not in _WARNINGS_SHOWN:
        if not E.compiler.is_compiling():
            warnings.warn(message, category, stacklevel=user_stacklevel())
        _WARNINGS_SHOWN.add(warning_id)


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of the fused kernels (read only for validation here)."""

    BACKEND: str
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs requested (None when not)."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class _ModificationType(Enum):
    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn: Callable) -> _ModificationType:
    """A score_mod takes 5 positional arguments (without defaults), a mask_mod 4."""
    if hasattr(fn, "__code__"):
        count = fn.__code__.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        count = sum(1 for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty)
    if count not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {count}")
    return _ModificationType.SCORE_MOD if count == 5 else _ModificationType.MASK_MOD


def _grid(B: int, H: int, Q: int, KV: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """int64 index tensors of b, h, q_idx, kv_idx, each along its own dim of (B,H,Q,KV)."""
    return (E.arange(B).view(B, 1, 1, 1), E.arange(H).view(1, H, 1, 1),
            E.arange(Q).view(1, 1, Q, 1), E.arange(KV).view(1, 1, 1, KV))


def _on_grid(fn: Callable, args: tuple, shape: tuple[int, ...]) -> Tensor:
    """fn's value at every point of the grid: a function that ignores some index (or
    returns a 0-d constant, as noop_mask) is broadcast to the full shape, as vmap gives."""
    out = fn(*args)
    if not isinstance(out, Tensor):
        out = E.tensor(out)
    return out.expand(shape)


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The mask_mod that keeps a score when any of mask_mods keeps it."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_zeros((), dtype=E.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The mask_mod that keeps a score when all of mask_mods keep it."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_ones((), dtype=E.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def create_mask(mod_fn: Callable, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int,
                device=None) -> Tensor:
    """The dense (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod, or of a score_mod
    (kept where it does not give -inf from a zero score)."""
    B, H = B or 1, H or 1
    shape = (B, H, Q_LEN, KV_LEN)
    grid = _grid(*shape)
    if _get_mod_type(mod_fn) is _ModificationType.SCORE_MOD:
        out = _on_grid(mod_fn, (E.zeros(shape),) + grid, shape)
        return E.where(E.isneginf(out), False, True)
    return _on_grid(mod_fn, grid, shape).contiguous()


def _convert_mask_to_block_mask(mask: Tensor, Q_BLOCK_SIZE: int, KV_BLOCK_SIZE: int,
                                separate_full_blocks: bool) -> tuple[Tensor, Tensor | None]:
    """int8 grids of the partly kept blocks (and apart, with separate_full_blocks, the
    fully kept ones) of a (B, H, Q, KV) boolean mask padded to whole blocks."""
    if mask.dtype != E.bool:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    mask = pad(mask, (0, -mask.shape[-1] % KV_BLOCK_SIZE, 0, -mask.shape[-2] % Q_BLOCK_SIZE))
    B, H, Q, KV = mask.shape
    blocks = mask.view(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE,
                       KV_BLOCK_SIZE).permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if separate_full_blocks:
        whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
        partial = (blocks > 0) & (blocks < whole)
        return partial.to(E.int8), (blocks == whole).to(E.int8)
    return (blocks > 0).to(E.int8), None


def create_block_mask(mask_mod: _mask_mod_signature, B: int | None, H: int | None,
                      Q_LEN: int, KV_LEN: int, device=None,
                      BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile: bool = False, separate_full_blocks: bool = True,
                      compute_dq_write_order: bool = False,
                      dq_kv_order: bool = True) -> BlockMask:
    """The BlockMask of mask_mod over a (B, H, Q_LEN, KV_LEN) grid (B, H None: 1), in
    blocks of BLOCK_SIZE (an int, or (Q, KV) sizes)."""
    if _get_mod_type(mask_mod) is not _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B, H = B or 1, H or 1
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        # (PyTorch then compiles create_block_mask; eager gives the same mask)
        warnings.warn(
            "_compile flag on create_block_mask was originally added to work around a "
            "torch.compile limitation. That limitation has since been addressed. So, to "
            "compile create_block_mask, we suggest doing torch.compile(create_block_mask). "
            "This still works for now, but will be removed in the future.",
            DeprecationWarning, stacklevel=user_stacklevel())
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    if compute_dq_write_order:
        raise NotImplementedError("compute_dq_write_order (metadata for the deterministic "
                                  "CUDA FLASH backward) is not supported by ember")
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, q_block, kv_block, separate_full_blocks)
    num, idx = _dense_to_ordered(partial)
    full_num, full_idx = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(num, idx, full_num, full_idx,
                                    BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod,
                                    seq_lengths=(Q_LEN, KV_LEN))


def _create_empty_block_mask(query: Tensor) -> BlockMask:
    """The mask of no masking: one block spanning everything."""
    return BlockMask.from_kv_blocks(kv_num_blocks=E.ones(1, 1, 1, dtype=E.int32),
                                    kv_indices=E.zeros(1, 1, 1, 1, dtype=E.int32),
                                    BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE, seq_lengths=(1, 1))


def _identity(score: Tensor, batch: Tensor, head: Tensor, token_q: Tensor,
              token_kv: Tensor) -> Tensor:
    return score


def _check_kernel_options(kernel_options: dict | None, return_aux: AuxRequest | None) -> None:
    """PyTorch's checks of kernel_options, and its refusal of max_scores on the CPU."""
    options = dict(kernel_options or {})
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError(
            "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND "
            "supersedes the legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only "
            "specify the desired BACKEND.")
    backend = options.get("BACKEND", "AUTO")
    if backend not in _BACKENDS:
        raise ValueError(f"Invalid BACKEND value '{backend}'. Must be one of {_BACKENDS}")
    for key in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if key in options:
            raise AssertionError(f"{key} must not be in kernel_options")
    wants_max = return_aux is not None and return_aux.max_scores
    if backend == "FLASH" and wants_max:
        raise NotImplementedError(
            "Returning max scores is not supported with BACKEND='FLASH'. Use "
            "return_aux=AuxRequest(lse=True) or omit max_scores.")
    if wants_max:
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")


def _check_inputs(query: Tensor, key: Tensor, value: Tensor, enable_gqa: bool,
                  block_mask: BlockMask | None) -> None:
    """PyTorch's input checks, in its order and words."""
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            "Expected query, key, and value to have the same device type, but got "
            f"query.device: {query.device}, key.device: {key.device}, and value.device: "
            f"{value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError("Expect query and key/value to have the same embedding dimension "
                         f"but got E={query.size(-1)} and E={key.size(-1)}.")
    if query.requires_grad or key.requires_grad or value.requires_grad:
        raise NotImplementedError(
            "FlexAttention does not support backward on CPU. Please set the input "
            "requires_grad to False or use another device.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    Hq, Hkv = query.size(1), key.size(1)
    if not enable_gqa and Hq != Hkv:
        raise ValueError("Expect query and key/value to have the same number of heads but "
                         f"got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and Hq % Hkv != 0:
        raise ValueError("Expect number of query heads to be a multiple of kv heads for GQA "
                         f"but got Hq={Hq} and Hkv={Hkv}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(
                "Expect query and key/value to have the same batch size, or non-none "
                f"block_mask, but got block_mask=None, Bq={query.size(0)}, and "
                f"Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(
                "Expect query and key/value to have the same batch size, or block_mask and "
                f"query to have the same batch size, but got Bq={query.size(0)}, "
                f"Bkv={key.size(0)}, B_block_mask={block_mask.kv_num_blocks.size(0)}.")


def _check_block_mask(block_mask: BlockMask, q_len: int, kv_len: int) -> None:
    """The block mask must be made for exactly these sequence lengths."""
    if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    if tuple(block_mask.BLOCK_SIZE) == (_LARGE_SPARSE_BLOCK_SIZE,) * 2:
        return
    bq, bkv = block_mask.shape[-2], block_mask.shape[-1]
    where = (f"block_mask was created for block_mask.shape={block_mask.shape} but got "
             f"q_len={q_len} and kv_len={kv_len}. ")
    if q_len > bq or kv_len > bkv:
        raise ValueError(where + "As the block mask was created for a smaller length than "
                         "you're using it for, you likely need to create a new block mask.")
    if q_len != bq or kv_len != bkv:
        raise ValueError(
            where + "As the block mask was created for a larger length than you're using it "
            "for, you can either 1. create a new block mask with the correct length, or 2. "
            "'adjust' the existing block mask to the correct length by calling "
            "block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask to "
            "the upper left corner, which does not work for all mask_mods!")


def _math_attention(query: Tensor, key: Tensor, value: Tensor, score_mod: Callable,
                    mask_mod: Callable, scale: float) -> tuple[Tensor, Tensor]:
    """softmax(score_mod(Q K^T * scale) where mask_mod, else -inf) V, and the row
    base-2 logsumexp (-inf for a fully masked row, whose output is 0), differentiable in all
    inputs and in the tensors the mods capture.

    # NOTE: as PyTorch's reference path, scores are float64 for float64 queries and
    # float32 otherwise; the probabilities are cast to the query dtype before the product
    # with V, and the logsumexp stays in the working precision.
    """
    group = query.size(1) // key.size(1)
    if group > 1:
        key = E.repeat_interleave(key, group, dim=1)
        value = E.repeat_interleave(value, group, dim=1)
    Bq, Bkv = query.size(0), key.size(0)
    if not (Bq == Bkv or (Bq > 1 and Bkv == 1)):
        raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={Bq} and Bkv={Bkv}")
    key = key.expand(Bq, *key.shape[1:])
    value = value.expand(Bq, *value.shape[1:])
    work = E.float64 if query.dtype == E.float64 else E.float32
    scores = query.to(work) @ key.to(work).transpose(-2, -1)
    scores = (scores * scale).to(work)
    shape = tuple(scores.shape)
    grid = _grid(*shape)
    kept = _on_grid(mask_mod, grid, shape)
    modded = _on_grid(score_mod, (scores,) + grid, shape)
    scores = E.where(kept, modded, E.tensor(-math.inf, dtype=work))
    lse = scores.logsumexp(dim=-1)
    lse = E.where((scores == -math.inf).all(dim=-1), -math.inf, lse)
    out = _safe_softmax(scores).to(query.dtype) @ value.to(query.dtype)
    # NOTE: PyTorch's path gives the logsumexp in base 2 (flex_attention scales it back
    # by ln 2): the same two roundings keep its last bit
    return out, lse / math.log(2)


def _strides_in_order(shape, order: list[int]) -> list[int]:
    """Dense strides filling dims in `order`, innermost first."""
    strides, step = [0] * len(shape), 1
    for d in order:
        strides[d] = step
        step *= shape[d]
    return strides


def _with_query_layout(out: Tensor, query_strides: tuple[int, ...]) -> Tensor:
    """out laid out in memory in the dim order of the query (as PyTorch's path gives a
    query of (B, L, H, E) memory a (B, L, H, Ev) output), the last dim kept innermost."""
    # fill order: dims from innermost (smallest stride) out; equal strides keep the inner
    # dim inner
    by_stride = sorted(range(len(query_strides)), key=query_strides.__getitem__, reverse=True)
    order = list(reversed(by_stride))
    strides = _strides_in_order(out.shape, order)
    if strides[-1] != 1:
        order.remove(out.dim() - 1)
        strides = _strides_in_order(out.shape, [out.dim() - 1] + order)
    if tuple(strides) == out.stride():
        return out
    laid = E.empty_strided(tuple(out.shape), tuple(strides), dtype=out.dtype)
    return laid.copy_(out)


class FlexAttentionAutogradOp(E.autograd.Function):
    """Names the output's graph node as PyTorch's (FlexAttentionAutogradOpBackward); the
    gradient itself flows through the composite graph below it, unchanged."""

    @staticmethod
    def forward(ctx, out: Tensor, lse: Tensor) -> tuple[Tensor, Tensor]:
        return out.clone(), lse.clone()

    @staticmethod
    def backward(ctx, grad_out: Tensor, grad_lse: Tensor) -> tuple[Tensor, Tensor]:
        return grad_out, grad_lse


def flex_attention(query: Tensor, key: Tensor, value: Tensor,
                   score_mod: _score_mod_signature | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options: FlexKernelOptions | None = None, *,
                   return_aux: AuxRequest | None = None):
    """Attention of (B, Hq, L, E) queries over (B, Hkv, S, E) keys and (B, Hkv, S, Ev)
    values, with score_mod applied to each scaled score and block_mask's mask_mod deciding
    which scores are kept; returns the (B, Hq, L, Ev) output, and with return_lse (or
    return_aux=AuxRequest(lse=True)) the (B, Hq, L) logsumexp of the modified scores."""
    _check_inputs(query, key, value, enable_gqa, block_mask)
    score_mod = _identity if score_mod is None else score_mod
    block_mask = _create_empty_block_mask(query) if block_mask is None else block_mask
    _check_block_mask(block_mask, query.size(-2), key.size(-2))
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError("Expect q/k/v and block_mask to be on the same device but got "
                           f"{query.device} and {block_mask.kv_num_blocks.device}.")
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse",
                   "return_lse is deprecated and will be removed in v2.10. Please use "
                   "return_aux=AuxRequest(lse=True) instead.", category=FutureWarning)
    _check_kernel_options(kernel_options, return_aux)
    # (under torch.compile PyTorch takes its fused path, without this warning)
    if not _FLEX_ATTENTION_DISABLE_COMPILE_DEBUG and not E.compiler.is_compiling():
        _warn_once(
            "flex_attention_performance",
            "flex_attention called without torch.compile() - this will use an unfused "
            "implementation that materializes the full scores matrix instead of generating "
            "a fused kernel.\n\nSOLUTION: Use torch.compile(flex_attention)(...)\n\nIf you "
            "want to debug your score_mod/mask_mod, you can set:\n"
            "torch.nn.attention.flex_attention._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True"
            "\n\nThis will allow you to use print statements or breakpoints. Note: This "
            "doesn't work with the backwards pass and may produce incorrect results.")
    out, lse = _math_attention(query, key, value, score_mod, block_mask.mask_mod, scale)
    out = _with_query_layout(out, query.stride())
    if out.requires_grad:  # (only tensors captured by score_mod can require grad here)
        out, lse = FlexAttentionAutogradOp.apply(out, lse)
    lse = lse * math.log(2)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None, max_scores=None)
    return (out, lse) if return_lse else out

