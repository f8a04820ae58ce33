"""MLX's argument checks for `mx.fast.scaled_dot_product_attention`, in MLX's order (its
binding's, then its C++ function's) and with its messages. Without them ember would
unpack a wrong rank into a Python error, accept mismatched batches or head counts, and
compute with integer inputs or a mask wider than the output's type."""

from __future__ import annotations

from . import _dtypes as D
from ._array import array
from ._binding import bad_call
from ._dtypes import Dtype
from ._errors import check_broadcast
from ._indexing import shape_text
from ._product_checks import check_operands

_NAME = "[scaled_dot_product_attention]"
SIGNATURE = ("scaled_dot_product_attention(q: array, k: array, v: array, *, scale: float,  "
             "mask: None | str | array = None, sinks: array | None = None, force_fused: bool "
             "= False, stream: StreamOrDevice = None) -> array")


def check_attention(q: array, k: array, v: array, scale, mask, sinks,
                    force_fused: bool) -> Dtype:
    """The type the attention computes in (the promotion of q, k and v), after every
    check MLX makes on its arguments."""
    if not (mask is None or isinstance(mask, str | array)):
        raise bad_call("scaled_dot_product_attention", SIGNATURE, (q, k, v),
                       {"scale": scale, "mask": mask})
    if isinstance(mask, str) and mask != "causal":
        raise ValueError(f"{_NAME} invalid mask option '{mask}'. Must be 'causal', or an "
                         "array.")
    for x in (q, k, v):
        if x.ndim != 4:
            raise ValueError(f"{_NAME} input with shape {shape_text(x.shape)} expected to be "
                             "rank 4")
    if isinstance(mask, array) and mask.ndim > 4:
        raise ValueError(f"{_NAME} the mask with shape {shape_text(mask.shape)} expected to "
                         "have at most rank 4.")
    for x in (k, v):
        if x.shape[0] != q.shape[0]:
            raise ValueError(f"{_NAME} mismatching batch dimension for input with shape "
                             f"{shape_text(x.shape)}.")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{_NAME} query, keys expected to have matching last dimension; "
                         f"found query shape {shape_text(q.shape)} for keys shape "
                         f"{shape_text(k.shape)}.")
    if k.shape[1] != v.shape[1]:
        raise ValueError(f"{_NAME} keys, values expected to have matching n_kv_heads; found "
                         f"keys with n_heads {k.shape[1]} for values with n_heads "
                         f"{v.shape[1]}.")
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"{_NAME} n_heads must be a multiple of n_kv_heads, found n_heads "
                         f"{q.shape[1]} for n_kv_heads {k.shape[1]}.")
    dt = D.promote_types(D.promote_types(q.dtype, k.dtype), v.dtype)
    if dt.kind != "f":
        raise ValueError(f"{_NAME} Received unsupported type {dt.name}.")
    if isinstance(mask, array):
        if D.promote_types(mask.dtype, dt) is not dt:
            raise ValueError(f"{_NAME} Mask type must promote to output type {dt.name}.")
        check_broadcast(mask.shape, (*q.shape[:-1], k.shape[-2]))
    if sinks is not None:
        if D.promote_types(sinks.dtype, dt) is not dt:
            raise ValueError(f"{_NAME} Type of sinks must promote to output type {dt.name}.")
        if sinks.ndim != 1 or sinks.shape[0] != q.shape[1]:
            raise ValueError(f"{_NAME} Received invalid shape for sinks "
                             f"{shape_text(sinks.shape)}.")
    if force_fused:
        raise ValueError(f"{_NAME} force_fused=True but no fused kernel is available in CPU "
                         "backend.")
    if k.shape[2] != v.shape[2]:  # (MLX's error from its product of the weights and v)
        n_kv, rep = k.shape[1], q.shape[1] // k.shape[1]
        weights = (q.shape[0], *((n_kv, rep) if rep > 1 else (n_kv,)), q.shape[2], k.shape[2])
        values = (v.shape[0], *((n_kv, 1) if rep > 1 else (n_kv,)), *v.shape[2:])
        check_operands("matmul", weights, values)
    return dt
