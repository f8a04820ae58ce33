"""MLX's structured matmuls: `gather_mm` (with the index handling `gather_qmm` shares),
`block_masked_mm` and `segmented_mm`, with their argument checks in MLX's order and words
(mlx/ops.cpp) and the results of MLX's CPU kernels (mlx/backend/cpu/masked_mm.cpp).

NOTE: MLX's CPU kernels for `gather_mm` and `block_masked_mm` compute float32 alone and
raise RuntimeError for any other result type when the product is evaluated; ember raises
the same error at the call, after the argument checks.

NOTE: MLX casts the indices to uint32 and its CPU kernels locate a batch by unravelling
the index over the operand's batch shape with a remainder at every axis, so an index past
the batch wraps round it (index 5 of a batch of 4 reads matrix 1) instead of raising;
ember takes each index modulo the batch size the same way. (A negative index becomes a
large uint32 there, which MLX reads from outside the array; ember wraps that too.)"""

from __future__ import annotations

import math

import ember as E

from ..._core.dispatch import transform_active
from ..._core.primitive import defbatch
from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array
from ._shapes import broadcast_shapes


def _arr(x) -> array:
    return x if isinstance(x, array) else array(x)


def _text(shape: tuple) -> str:
    return "(" + ",".join(str(d) for d in shape) + ")"


# -- the transforms MLX's primitives lack ----------------------------------------------------
#
# MLX 0.32.4 has no jvp or vmap rule for GatherMM, BlockMaskedMM and SegmentedMM, and no vjp
# for SegmentedMM: `mx.jvp` / `mx.vmap` (and `mx.grad` for segmented_mm) through them raise
# ValueError("[Primitive::<rule>] Not implemented for <Primitive>.") when the transform is
# built. ember composes these products from other ops, so under a transform it first passes
# each input through `_NoRule`: an identity whose missing rules raise MLX's error.

class _NoRule(E.autograd.Function):
    """The identity on one tensor, standing for MLX primitive `name` under transforms:
    forward mode and vmap refuse, reverse mode refuses when `vjp` is False (else the
    cotangent passes through)."""

    @staticmethod
    def forward(t, name, vjp):
        return t.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.name, ctx.has_vjp = inputs[1], inputs[2]

    @staticmethod
    def backward(ctx, cotangent):
        if not ctx.has_vjp:
            raise ValueError(f"[Primitive::vjp] Not implemented for {ctx.name}.")
        return cotangent, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        raise ValueError(f"[Primitive::jvp] Not implemented for {ctx.name}.")



def _no_vmap(args, dims, **params):
    raise ValueError(f"[Primitive::vmap] Not implemented for {args[1]}.")


defbatch(_NoRule._prim, _no_vmap)  # (ember's own Functions batch by their primitive's rule)


def _guarded(name: str, arrays: list, vjp: bool = True) -> list:
    """`arrays` (None kept) passed through `_NoRule` when a transform could reach them."""
    present = [x for x in arrays if x is not None]
    if not (transform_active() or any(x._t._requires_grad for x in present)):
        return arrays
    return [None if x is None else _wrap(_NoRule.apply(x._t, name, vjp), x._dtype)
            for x in arrays]


def index_shape(tag: str, indices, a: array) -> tuple:
    """MLX's checks of a gathered operand `a` (at least 2-d) and its integer `indices`;
    the shape of the indices (the operand's batch shape when there are none)."""
    if a.ndim < 2:
        raise ValueError(f"{tag} Input must have at least two dimensions but got input "
                         f"with shape {_text(a.shape)}.")
    if indices is None:
        return a.shape[:-2]
    indices = _arr(indices)
    if indices.dtype.kind not in "iu":
        raise ValueError(f"{tag} Got indices with invalid dtype. Indices must be integral.")
    return indices.shape


def gather_batches(a: array, indices) -> array:
    """`a`'s matrices at `indices` over its flattened batch axes (wrapping round the batch
    as MLX's CPU kernels do); `a` itself when there are no indices."""
    if indices is None:
        return a
    total = math.prod(a.shape[:-2])
    flat = O.reshape(a, (total, *a.shape[-2:]))
    wrapped = _arr(indices).astype(D.uint32) % total if total else _arr(indices)
    return O.take(flat, wrapped, 0)


def gather_mm(a, b, /, lhs_indices=None, rhs_indices=None, *,
              sorted_indices: bool = False) -> array:
    """`a[lhs_indices] @ b[rhs_indices]`, the indices running over the flattened batch
    axes of each operand (a missing index set takes the operand's batch as it is) and
    broadcasting against each other. `sorted_indices` only selects a kernel in MLX.

    NOTE: MLX's CPU kernel computes float32 alone and raises RuntimeError for any other
    result type when the product is evaluated; ember raises it at the call."""
    a, b = _arr(a), _arr(b)
    if lhs_indices is None and rhs_indices is None:
        return O.matmul(a, b)
    a2, b2, dt = _operands("gather_mm", a, b)
    lhs = index_shape("[gather_mm]", lhs_indices, a2)
    rhs = index_shape("[gather_mm]", rhs_indices, b2)
    broadcast_shapes(lhs, rhs)
    _float32_only("GatherMM", dt)
    a2, b2, lhs_indices, rhs_indices = _guarded("GatherMM", [
        a2, b2, None if lhs_indices is None else _arr(lhs_indices),
        None if rhs_indices is None else _arr(rhs_indices)])
    out = O.matmul(gather_batches(a2.astype(dt), lhs_indices),
                   gather_batches(b2.astype(dt), rhs_indices))
    return _unexpanded(out, a, b)


def _operands(op: str, a: array, b: array) -> tuple:
    """MLX's operand checks shared by `gather_mm` and `block_masked_mm`: no 0-d operand,
    a vector made a matrix (a row for `a`, a column for `b`), matching inner sizes and a
    real floating result; the two matrices and the result type."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"[{op}] Got 0 dimension input. Inputs must have at least one "
                         "dimension.")
    a2 = O.expand_dims(a, 0) if a.ndim == 1 else a
    b2 = O.expand_dims(b, 1) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"[{op}] Last dimension of first input with shape "
                         f"{_text(a2.shape)} must match second to last dimension of second "
                         f"input with shape {_text(b2.shape)}.")
    return a2, b2, _real_float(op, a, b)


def _real_float(op: str, a: array, b: array):
    """The product's result type, refused (in MLX's words) unless a real float."""
    dt = D.promote_types(a._dtype, b._dtype)
    if dt.kind != "f":
        raise ValueError(f"[{op}] Only real floating point types are supported but "
                         f"{a._dtype.name} and {b._dtype.name} were provided which results "
                         f"in {dt.name}, which is not a real floating point type.")
    return dt


def _float32_only(kernel: str, dt) -> None:
    if dt is not D.float32:
        raise RuntimeError(f"[{kernel}::eval] Currently only supports float32.")


def _unexpanded(out: array, a: array, b: array) -> array:
    """`out` without the row / column a vector operand was given."""
    axes = [out.ndim - 2] * (a.ndim == 1) + [out.ndim - 1] * (b.ndim == 1)
    return O.squeeze(out, axes) if axes else out


def _blocks(mask: array, block: int, rows: int, cols: int) -> array:
    """A block mask spread over the `rows` x `cols` elements it covers."""
    return O.repeat(O.repeat(mask, block, -2), block, -1)[..., :rows, :cols]


def _masked(x: array, mask: array | None, block: int) -> array:
    """`x` with its blocks masked as MLX's kernel masks them: a false bool block zeroed
    (whatever it held), a float block scaled by its value."""
    if mask is None:
        return x
    spread = _blocks(mask, block, *x.shape[-2:])
    if mask.dtype is D.bool_:
        return O.where(spread, x, O.zeros((), x._dtype))
    return O.multiply(x, spread)


def block_masked_mm(a, b, /, block_size: int = 64, mask_out=None, mask_lhs=None,
                    mask_rhs=None) -> array:
    """`a @ b` with `block_size` square blocks of the operands and of the output masked:
    a mask holds one entry per block (batch axes broadcasting), false bool entries drop a
    block and float entries scale it. The operand masks share one type: bool only when
    both are bool (a missing one counts as all true)."""
    a, b = _arr(a), _arr(b)
    masks = [None if m is None else _arr(m) for m in (mask_out, mask_lhs, mask_rhs)]
    if all(m is None for m in masks):
        return O.matmul(a, b)
    if block_size not in (32, 64):
        raise ValueError("[block_masked_mm] Only block_sizes 32, 64 are supported.Got block "
                         f"size {block_size}.")
    a2, b2, dt = _operands("block_masked_mm", a, b)
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    (m, k), n = a2.shape[-2:], b2.shape[-1]
    tm, tn, tk = (-(-d // block_size) for d in (m, n, k))
    out_mask, lhs_mask, rhs_mask = masks
    if out_mask is not None:
        if a.ndim == 1 or b.ndim == 1:
            out_mask = O.expand_dims(out_mask, [-2] * (a.ndim == 1) + [-1] * (b.ndim == 1))
        out_mask = O.broadcast_to(out_mask.astype(D.bool_ if out_mask.dtype is D.bool_
                                                  else dt), (*batch, tm, tn))
    if lhs_mask is not None or rhs_mask is not None:
        ones = O.ones((1,), D.bool_)
        lhs_mask = ones if lhs_mask is None else lhs_mask
        rhs_mask = ones if rhs_mask is None else rhs_mask
        mdt = D.bool_ if lhs_mask.dtype is D.bool_ and rhs_mask.dtype is D.bool_ else dt
        if a.ndim == 1:
            lhs_mask = O.expand_dims(lhs_mask, -2)
        if b.ndim == 1:
            rhs_mask = O.expand_dims(rhs_mask, -1)
        lhs_mask = O.broadcast_to(lhs_mask.astype(mdt), (*batch, tm, tk))
        rhs_mask = O.broadcast_to(rhs_mask.astype(mdt), (*batch, tk, tn))
    _float32_only("BlockMaskedMM", dt)
    a2, b2, out_mask, lhs_mask, rhs_mask = _guarded(
        "BlockMaskedMM", [a2, b2, out_mask, lhs_mask, rhs_mask])
    a2 = _masked(O.broadcast_to(a2.astype(dt), (*batch, m, k)), lhs_mask, block_size)
    b2 = _masked(O.broadcast_to(b2.astype(dt), (*batch, k, n)), rhs_mask, block_size)
    return _unexpanded(_masked(O.matmul(a2, b2), out_mask, block_size), a, b)


def segmented_mm(a, b, /, segments) -> array:
    """For each [start, end) pair in `segments` (..., 2), `a[:, start:end] @
    b[start:end]`: one (M, N) result per pair, zero for an empty segment."""
    a, b, seg = _arr(a), _arr(b), _arr(segments)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("[segmented_mm] Batched matmul not supported")
    if seg.ndim < 1 or seg.shape[-1] != 2:
        raise ValueError(f"[segmented_mm] The segments should have shape (..., 2) but "
                         f"{_text(seg.shape)} was provided.")
    dt = _real_float("segmented_mm", a, b)
    if seg.dtype.kind not in "iu":
        raise ValueError("[segmented_mm] Got segments with invalid dtype. Segments must be "
                         "integral.")
    a, b, seg = _guarded("SegmentedMM", [a, b, seg.astype(D.uint32)], vjp=False)
    k = O.arange(a.shape[-1])
    lo, hi = O.expand_dims(seg[..., 0], -1), O.expand_dims(seg[..., 1], -1)
    inside = O.logical_and(O.greater_equal(k, lo), O.less(k, hi))  # (..., K)
    zero = O.zeros((), dt)
    a_in = O.where(O.expand_dims(inside, -2), a.astype(dt), zero)  # (..., M, K)
    b_in = O.where(O.expand_dims(inside, -1), b.astype(dt), zero)  # (..., K, N)
    return O.matmul(a_in, b_in)


__all__ = ["block_masked_mm", "gather_mm", "segmented_mm"]
