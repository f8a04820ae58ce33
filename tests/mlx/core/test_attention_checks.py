"""mx.fast.scaled_dot_product_attention checks its arguments as MLX 0.32.4 does (its
binding's checks, then its function's, in that order, with its messages), computes in the
type q, k and v promote to, and fills a boolean mask's excluded places with the type's
lowest value (a row that sees nothing averages every value, where -inf gave NaN)."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("sdpa = mx.fast.scaled_dot_product_attention\n"
         "def z(*shape, dtype=None):\n    return mx.zeros(shape, dtype or mx.float32)")


@pytest.mark.parametrize("call", [
    "sdpa(z(2, 3, 8), z(2, 3, 8), z(2, 3, 8), scale=1.0)",
    "sdpa(z(2, 3, 8), z(2, 3, 8), z(2, 3, 8), scale=1.0, mask='causl')",  # the mask first
    "sdpa(z(1, 2, 3, 8), z(2, 3, 8), z(1, 2, 3, 8), scale=1.0)",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(2, 3, 8), scale=1.0)",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0, mask=3)",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0, mask=z(1, 2, 2, 3, 3))",
    "sdpa(z(1, 2, 3, 8), z(2, 2, 3, 8), z(2, 2, 3, 8), scale=1.0)",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 4), z(1, 2, 3, 8), scale=1.0)",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 1, 3, 8), scale=1.0)",
    "sdpa(z(1, 3, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0)",
    "sdpa(z(1, 2, 3, 8, dtype=mx.int32), z(1, 2, 3, 8, dtype=mx.int32),"
    " z(1, 2, 3, 8, dtype=mx.int32), scale=1.0)",
    "sdpa(z(1, 2, 3, 8, dtype=mx.float16), z(1, 2, 3, 8, dtype=mx.float16),"
    " z(1, 2, 3, 8, dtype=mx.float16), scale=1.0, mask=z(3, 3))",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0, mask=z(4, 3))",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0, sinks=z(3))",
    "sdpa(z(1, 2, 3, 8, dtype=mx.float16), z(1, 2, 3, 8, dtype=mx.float16),"
    " z(1, 2, 3, 8, dtype=mx.float16), scale=1.0, sinks=z(2))",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0, force_fused=True)",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 4, 8), z(1, 2, 3, 8), scale=1.0)",  # keys and values
    "sdpa(z(1, 4, 3, 8), z(1, 2, 4, 8), z(1, 2, 3, 8), scale=1.0)",
])
def test_errors_are_mlxs(call):
    assert outcome(call, mx, SETUP) == outcome(call, mlx, SETUP)


@pytest.mark.parametrize("call", [
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8, dtype=mx.float16), z(1, 2, 3, 8), scale=1.0).dtype",
    "sdpa(z(1, 2, 3, 8, dtype=mx.float16), z(1, 2, 3, 8, dtype=mx.bfloat16), z(1, 2, 3, 8,"
    " dtype=mx.float16), scale=1.0).dtype",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0,"
    " mask=z(3, 3, dtype=mx.int32)).dtype",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 8), scale=1.0,"
    " sinks=z(2, dtype=mx.int32)).dtype",
    "sdpa(z(1, 2, 3, 8), z(1, 2, 3, 8), z(1, 2, 3, 4), scale=1.0).shape",
])
def test_types_and_shapes_are_mlxs(call):
    assert outcome(call, mx, SETUP) == outcome(call, mlx, SETUP)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("heads", [(2, 2), (4, 2)])
def test_a_row_that_sees_nothing_averages_the_values(dtype, heads):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, h, 3, 8)).astype(np.float32)
               for h in (heads[0], heads[1], heads[1]))
    mask = np.array([[True, False, False], [False, False, False], [True, True, True]])
    out = []
    for m in (mx, mlx):
        qkv = [m.array(a).astype(getattr(m, dtype)) for a in (q, k, v)]
        o = m.fast.scaled_dot_product_attention(*qkv, scale=0.5, mask=m.array(mask))
        out.append(np.array(o.astype(m.float32)))
    assert not np.isnan(out[0]).any()
    # NOTE: the softmax's sums and exps: float32 round-off, and the rounding to 16 bits
    tol = 1e-6 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(out[0], out[1], rtol=tol, atol=tol)
