"""`mx.fast.gated_delta_update`: the gated delta rule of linear-attention layers (Gated
DeltaNet, as Qwen3-Next's), one time step after another, as MLX's CPU build computes it.

For each step t, with the key / query heads repeated to the value heads' count:

    S = S * gamma_t                       (per head, or per key feature when gamma has a
                                           feature axis)
    S = S + k_t (beta_t (v_t - S k_t))^T  (the delta rule: correct what S recalls for k_t)
    y_t = S q_t

S is (B, Hv, Dv, Dk), zero unless `initial_state` is given; a step whose `mask` entry is
false keeps the state it had and outputs zeros. MLX's CPU build composes this from its
array ops, so the shapes it accepts (and the broadcasts and errors it gives for others)
are those of the composition; it is written here in the same order for the same reason.
"""

from __future__ import annotations

from . import _dtypes as D
from . import _ops as ops
from ._array import array
from ._dtypes import float32

SIGNATURE = (
    "gated_delta_update(q: mlx.core.array, k: mlx.core.array, v: mlx.core.array, gamma: "
    "mlx.core.array, beta: mlx.core.array, initial_state: mlx.core.array | None = None, "
    "mask: mlx.core.array | None = None, stream: mlx.core.Stream | mlx.core.ThreadLocalStream "
    "| mlx.core.Device | mlx.core.DeviceType | None = None) -> list[mlx.core.array]")


def _at(x: array, t: int) -> array:
    """Step t of a (B, T, ...) input, its time axis squeezed away (MLX's slice + squeeze:
    too few axes is squeeze's IndexError, a time axis too short its ValueError)."""
    return ops.squeeze(x[:, t:t + 1] if x.ndim >= 2 else x, 1)


def gated_delta_update(q: array, k: array, v: array, gamma: array, beta: array,
                       initial_state: array | None = None, mask: array | None = None
                       ) -> list[array]:
    """`[y, state]`: the outputs (B, T, Hv, Dv) in the type q and k promote to (float32 for
    integer or bool queries and keys) and the final state (B, Hv, Dv, Dk), kept in that
    type widened to at least float32."""
    if q.ndim < 4 or v.ndim < 4:
        raise IndexError("SmallVector out of range.")  # (MLX reads q's and v's dims)
    B, T, Hk, Dk = q.shape[:4]
    Hv, Dv = v.shape[2], v.shape[3]
    qk = D.promote_types(q.dtype, k.dtype)
    work = D.promote_types(qk, float32)
    out = qk if qk.kind in "fc" else work
    cast = (lambda a: a if a.dtype is work else a.astype(work))
    q, k, v, gamma, beta = (cast(a) for a in (q, k, v, gamma, beta))
    state = ops.zeros((B, Hv, Dv, Dk), work) if initial_state is None else cast(initial_state)
    repeats = Hv // Hk
    if repeats != 1:
        q, k = ops.repeat(q, repeats, axis=2), ops.repeat(k, repeats, axis=2)
    per_feature = gamma.ndim != 3  # (B, T, Hv, Dk): a decay for each key feature
    ys = []
    for t in range(T):
        q_t, k_t, v_t, g_t, b_t = (_at(a, t) for a in (q, k, v, gamma, beta))
        old = state
        decay = ops.expand_dims(g_t, -2) if per_feature else ops.expand_dims(g_t, (-1, -2))
        state = state * decay
        k_row = ops.expand_dims(k_t, -2)
        recalled = ops.sum(state * k_row, axis=-1)
        delta = (v_t - recalled) * ops.expand_dims(b_t, -1)
        state = state + k_row * ops.expand_dims(delta, -1)
        y = ops.sum(state * ops.expand_dims(q_t, -2), axis=-1)
        if mask is not None:
            m = _at(mask, t)
            state = ops.where(ops.expand_dims(m, (-1, -2, -3)), state, old)
            y = ops.where(ops.expand_dims(m, (-1, -2)), y, ops.zeros_like(y))
        ys.append(y)
    return [ops.stack(ys, axis=1).astype(out), state]
