"""`mx.fast.gated_delta_update` (ember.mlx.core._gated_delta) against MLX 0.32.4: outputs,
final state and their types; the broadcasts and errors of MLX's composed CPU path for
shapes it does not expect; gradients through the recurrence."""

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")
from mlx_oracle import outcome  # noqa: E402

RNG = np.random.default_rng(1)
B, T, HK, DK, HV, DV = 2, 6, 2, 8, 4, 6
ARRAYS = {
    "q": RNG.standard_normal((B, T, HK, DK)),
    "k": RNG.standard_normal((B, T, HK, DK)) / 3,
    "v": RNG.standard_normal((B, T, HV, DV)),
    "g": RNG.uniform(0.5, 1, (B, T, HV)),
    "g_vec": RNG.uniform(0.5, 1, (B, T, HV, DK)),
    "beta": RNG.uniform(0, 1, (B, T, HV)),
    "state": RNG.standard_normal((B, HV, DV, DK)),
}
MASK = np.array([[1, 1, 0, 1, 1, 1], [0, 1, 1, 1, 0, 1]], bool)


def _run(m, dtype: str, gamma: str = "g", state: bool = False, mask: bool = False):
    a = {n: m.array(x.astype(np.float32)).astype(getattr(m, dtype)) for n, x in ARRAYS.items()}
    y, s = m.fast.gated_delta_update(a["q"], a["k"], a["v"], a[gamma], a["beta"],
                                     a["state"] if state else None,
                                     m.array(MASK) if mask else None)
    return y, s


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("kw", [{}, {"gamma": "g_vec"}, {"state": True, "mask": True}],
                         ids=["per-head decay", "per-feature decay", "state and mask"])
def test_gated_delta_matches_mlx(dtype, kw):
    (y1, s1), (y2, s2) = _run(mx, dtype, **kw), _run(mlx, dtype, **kw)
    assert (str(y1.dtype), str(s1.dtype), y1.shape, s1.shape) == \
        (str(y2.dtype), str(s2.dtype), y2.shape, s2.shape)
    # NOTE: float32 sums over the key features round in another order than MLX's (a few
    # ulps); half-precision outputs are rounded from those and came out identical
    for a, b in ((y1, y2), (s1, s2)):
        np.testing.assert_allclose(np.array(a.astype(mx.float32)),
                                   np.array(b.astype(mlx.float32)), rtol=1e-5, atol=1e-6)


def test_masked_steps_keep_the_state_and_output_zeros():
    y, s = _run(mx, "float32", state=True, mask=True)
    y_np = np.array(y)
    assert (y_np[0, 2] == 0).all() and (y_np[1, 0] == 0).all() and (y_np[1, 4] == 0).all()


SETUP = ("z = lambda *s, dt=mx.float32: mx.ones(s, dt) * 0.5;"
         "q, k, v, g, b = z(1, 3, 2, 4), z(1, 3, 2, 4), z(1, 3, 4, 5), z(1, 3, 4), z(1, 3, 4);"
         "f = mx.fast.gated_delta_update")


def _types(out):
    return [(str(o.dtype), o.shape) for o in out]


@pytest.mark.parametrize("expr", [
    "f(q, k, v, g, b)",
    "f(q.astype(mx.float16), k.astype(mx.float16), v, g, b)",     # out: q and k's type
    "f(q.astype(mx.float16), k, v, g, b)",
    "f(q, k, v.astype(mx.float64), g, b)",                         # v cast to the work type
    "f(q.astype(mx.float64), k, v, g, b)",
    "f(q.astype(mx.int32), k.astype(mx.int32), v, g, b)",          # integers: float32
    "f(*(a.astype(mx.bfloat16) for a in (q, k, v, g, b)), z(1, 4, 5, 4, dt=mx.float16))",
    "f(*(a.astype(mx.bool_) for a in (q, k, v, g, b)))",
    "f(q[0], k[0], v[0], g[0], b[0])",                             # 3-d: SmallVector
    "f(q, k, v[..., 0], g, b)",
    "f(q, k[..., :3], v, g, b)",                                   # broadcast errors
    "f(q, k, v[:, :, :3], g[..., :3], b[..., :3])",
    "f(q, k, v[:, :, :1], g[..., :1], b[..., :1])",                # Hv // Hk == 0 heads
    "f(q, k, v[:, :2], g, b)",                                     # a step past v's end
    "f(q, k, v, g, b, None, mx.ones((1, 2), mx.bool_))",
    "f(q, k, v, g, b, None, mx.ones((3,), mx.bool_))",
    "f(q, k, v, mx.array(0.5), b)",
    "f(q, k, v, z(1, 3, 4, 3), b)",
    "f(q, k, v, z(1, 3), b)",                                      # per-feature, broadcast
    "f(q, k, v, z(1, 3, 4, 4, 1), b)",
    "f(q, k, v, g, z(1, 3, 4, 1))",                                # extra axes broadcast
    "f(q, k, v, g, b, None, mx.ones((1, 3, 1), mx.bool_))",
    "f(q, k, v, g, b, z(4, 5, 4))",
    "f(q, k, v, g, b, z(1, 4, 4, 5))",
    "f(q[:, :0], k[:, :0], v[:, :0], g[:, :0], b[:, :0])",         # no steps: stack refuses
    "f(q[:0], k[:0], v[:0], g[:0], b[:0])",
    "f(q, k, v, g, b, None, None, None)",
    "f([1.0], k, v, g, b)",
    "f(q, k, v, g, b, stream=mx.gpu)",
])
def test_gated_delta_shapes_and_errors_as_mlx(expr):
    assert outcome(expr, mx, SETUP, _types) == outcome(expr, mlx, SETUP, _types)


def test_gradient_through_the_recurrence_matches_mlx():
    def grads(m):
        a = {n: m.array(x.astype(np.float32)) for n, x in ARRAYS.items()}

        def loss(q, k, v, beta):
            y, s = m.fast.gated_delta_update(q, k, v, a["g"], beta, a["state"])
            return (y * y).sum() + s.sum()
        return m.grad(loss, argnums=(0, 1, 2, 3))(a["q"], a["k"], a["v"], a["beta"])

    # NOTE: the reverse pass sums in another order than MLX's: a few float32 ulps
    for a, b in zip(grads(mx), grads(mlx)):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-4, atol=1e-5)
