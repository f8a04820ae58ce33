"""mx.quantize / dequantize / quantized_matmul / gather_qmm against MLX 0.32.4.

Packed words, scales and biases must equal MLX's bit for bit (ember reproduces the CPU
kernel's float32 operation order), and so must `dequantize` (a multiply, then an add,
in the scales' type, as MLX's CPU graph). Products are compared within a tolerance:
MLX's CPU kernel sums each dot product element by element, ember dequantizes and calls
`matmul`, so the float32 sums differ in their last bits. Errors: same type and message.
"""

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")

RNG = np.random.default_rng(0)
DTYPES = ["float32", "float16", "bfloat16"]
AFFINE_BITS = [1, 2, 3, 4, 5, 6, 8]


def _np(a) -> np.ndarray:
    """Values as NumPy (bfloat16 widened to float32, exactly)."""
    if a.dtype in (mx.bfloat16, mlx.bfloat16):
        a = a.astype(mx.float32 if isinstance(a, mx.array) else mlx.float32)
    return np.array(a)


def _identical(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert repr(a.dtype) == repr(b.dtype) and a.shape == b.shape
        np.testing.assert_array_equal(_np(a), _np(b))


def _weights(shape, seed=0) -> np.ndarray:
    """Normal weights at mixed magnitudes per row, with an all-zero group, a constant
    group and a group of exact grid points (round-half-even ties)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 40.0], (*shape[:-1], 1))
    w = w.reshape(-1, shape[-1])
    w[0, :32] = 0.0
    w[1, :32] = 1.5
    w[2, :32] = np.arange(32) * 0.25 - 4.0
    return w.reshape(shape).astype(np.float32)


def _both(dtype: str, w: np.ndarray) -> tuple:
    return mx.array(w).astype(getattr(mx, dtype)), mlx.array(w).astype(getattr(mlx, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bits", AFFINE_BITS)
@pytest.mark.parametrize("group_size", [32, 64, 128])
def test_affine_quantize_and_dequantize_bit_for_bit(dtype, bits, group_size):
    ours_w, theirs_w = _both(dtype, _weights((2, 5, 256), seed=bits + group_size))
    ours = mx.quantize(ours_w, group_size, bits)
    theirs = mlx.quantize(theirs_w, group_size, bits)
    _identical(ours, theirs)
    _identical([mx.dequantize(*ours, group_size, bits)],
               [mlx.dequantize(*theirs, group_size, bits)])


def test_affine_defaults_and_out_dtype():
    ours_w, theirs_w = _both("float32", _weights((4, 128)))
    _identical(mx.quantize(ours_w), mlx.quantize(theirs_w))
    q, s, b = mx.quantize(ours_w)
    tq, ts, tb = mlx.quantize(theirs_w)
    _identical([mx.dequantize(q, s, b, dtype=mx.float16)],
               [mlx.dequantize(tq, ts, tb, dtype=mlx.float16)])
    # scales and biases of two types: MLX's promotion, multiply then add
    _identical([mx.dequantize(q, s.astype(mx.float16), b)],
               [mlx.dequantize(tq, ts.astype(mlx.float16), tb)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["mxfp4", "mxfp8", "nvfp4"])
def test_floating_point_modes_bit_for_bit(dtype, mode):
    w = _weights((6, 128), seed=7)
    w[3, :32] = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0] * 4) * 4  # e2m1 ties
    ours_w, theirs_w = _both(dtype, w)
    ours, theirs = mx.quantize(ours_w, mode=mode), mlx.quantize(theirs_w, mode=mode)
    _identical(ours, theirs)
    for out in [None, "float32", "float16"]:
        _identical([mx.dequantize(*ours, mode=mode, dtype=out and getattr(mx, out))],
                   [mlx.dequantize(*theirs, mode=mode, dtype=out and getattr(mlx, out))])


def test_mx_scales_round_up_to_a_power_of_two():
    # NOTE: 0.32.4 rounds amax / 6 up to the next power of two (exponent + 1 when the
    # mantissa is non-zero), not to the nearest as the 0.32.2 source's graph does.
    amax = np.float32(6 * 2.0**20) * np.float32(1 + 2.0**-23)
    w = np.zeros((3, 32), np.float32)
    w[0, 0], w[1, 0], w[2, 0] = amax, 7.0, 6.0
    _identical(mx.quantize(mx.array(w), mode="mxfp4"), mlx.quantize(mlx.array(w), mode="mxfp4"))


def test_nvfp4_global_scale():
    w = _weights((4, 64), seed=3)
    g = float(np.abs(w).max())
    ours = mx.quantize(mx.array(w), mode="nvfp4", global_scale=mx.array(g))
    theirs = mlx.quantize(mlx.array(w), mode="nvfp4", global_scale=mlx.array(g))
    _identical(ours, theirs)
    _identical([mx.dequantize(*ours, mode="nvfp4", global_scale=mx.array(g))],
               [mlx.dequantize(*theirs, mode="nvfp4", global_scale=mlx.array(g))])


def _close(a, b) -> None:
    """Equal up to float32 summation order: the error of a sum is bounded relative to its
    terms' magnitudes, not its value (rows reach |w| ~ 100 and cancel), hence an atol of
    1e-5 times the output's largest magnitude."""
    a, b = _np(a), _np(b)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(b).max()))


def _products(mode: str, kwargs: dict) -> tuple:
    w = _weights((16, 128), seed=11)
    ours, theirs = mx.quantize(mx.array(w), mode=mode, **kwargs), mlx.quantize(
        mlx.array(w), mode=mode, **kwargs)
    return ours, theirs


MODES = [("affine", {"bits": 4, "group_size": 64}), ("affine", {"bits": 3, "group_size": 32}),
         ("affine", {"bits": 8, "group_size": 128}), ("mxfp4", {}), ("mxfp8", {}),
         ("nvfp4", {})]


@pytest.mark.parametrize(("mode", "kwargs"), MODES)
@pytest.mark.parametrize("transpose", [True, False])
def test_quantized_matmul_and_its_x_gradient(mode, kwargs, transpose):
    # NOTE: within `_close`: MLX's kernel sums element by element, ember calls matmul.
    ours, theirs = _products(mode, kwargs)
    x = RNG.standard_normal((2, 3, 128 if transpose else 16)).astype(np.float32)

    def f(m, q, x):
        return m.quantized_matmul(x, q[0], *q[1:], transpose=transpose, mode=mode, **kwargs)

    a, b = f(mx, ours, mx.array(x)), f(mlx, theirs, mlx.array(x))
    assert a.shape == b.shape and repr(a.dtype) == repr(b.dtype)
    _close(a, b)
    ga = mx.grad(lambda x: f(mx, ours, x).sum())(mx.array(x))
    gb = mlx.grad(lambda x: f(mlx, theirs, x).sum())(mlx.array(x))
    _close(ga, gb)


def test_quantized_matmul_scale_and_bias_gradients():
    ours, theirs = _products("affine", {"group_size": 32})
    x = RNG.standard_normal((5, 128)).astype(np.float32)

    def f(m, q, x):
        return lambda s, b: (m.quantized_matmul(x, q[0], s, b, group_size=32) ** 2).sum()

    ga = mx.grad(f(mx, ours, mx.array(x)), argnums=(0, 1))(ours[1], ours[2])
    gb = mlx.grad(f(mlx, theirs, mlx.array(x)), argnums=(0, 1))(theirs[1], theirs[2])
    for a, b in zip(ga, gb):
        _close(a, b)


def test_quantized_matmul_dtypes():
    ours, theirs = _products("affine", {})
    x = RNG.standard_normal((3, 128)).astype(np.float32)
    for dt in ["float16", "int32"]:
        a = mx.quantized_matmul(mx.array(x).astype(getattr(mx, dt)), *ours)
        b = mlx.quantized_matmul(mlx.array(x).astype(getattr(mlx, dt)), *theirs)
        assert repr(a.dtype) == repr(b.dtype)
    half = [ours[0], ours[1].astype(mx.float16), ours[2].astype(mx.float16)]
    a = mx.quantized_matmul(mx.array(x).astype(mx.float16), *half)
    assert a.dtype == mx.float16


def test_gather_qmm():
    w = RNG.standard_normal((4, 16, 64)).astype(np.float32)
    ours, theirs = mx.quantize(mx.array(w), 32, 4), mlx.quantize(mlx.array(w), 32, 4)
    x = RNG.standard_normal((5, 1, 64)).astype(np.float32)
    cases = [(None, np.array([3, 0, 1, 1, 2], np.uint32)),
             (np.array([[0, 1], [2, 4]], np.uint32), np.array([[3], [0]], np.uint32)),
             (None, None)]
    for lhs, rhs in cases:
        x = x[:4] if lhs is None and rhs is None else x  # (no indices: batches broadcast)
        def args(m, lhs=lhs, rhs=rhs):
            return (None if lhs is None else m.array(lhs)), (None if rhs is None else m.array(rhs))
        a = mx.gather_qmm(mx.array(x), *ours, *args(mx), group_size=32, bits=4)
        b = mlx.gather_qmm(mlx.array(x), *theirs, *args(mlx), group_size=32, bits=4)
        assert a.shape == b.shape
        _close(a, b)


def _run(expr: str, module):
    env = {"mx": module, "np": np}
    env["w"] = module.array(np.ones((8, 64), np.float32))
    env["q"], env["s"], env["b"] = module.quantize(env["w"])
    env["x"] = module.array(np.ones((3, 64), np.float32))
    try:
        out = eval(expr, env)
        outs = out if isinstance(out, list | tuple) else [out]
        return "ok", [(a.shape, repr(a.dtype)) for a in outs]
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)


ERRORS = [
    "mx.quantize(w, 32, 7)",
    "mx.quantize(w, 16)",
    "mx.quantize(w, 256)",
    "mx.quantize(w, mode='foo')",
    "mx.quantize(w[0])",
    "mx.quantize(w.astype(mx.int32))",
    "mx.quantize(w[:, :48], 32)",
    "mx.quantize(w, mode='mxfp4', bits=8)",
    "mx.quantize(w, 64, mode='mxfp4')",
    "mx.quantize(w, mode='nvfp4', global_scale=mx.array([1.0, 2.0]))",
    "mx.quantize(w, global_scale=mx.array(1.0))",
    "mx.dequantize(q, s)",
    "mx.dequantize(q, s, b, bits=3)",
    "mx.dequantize(q.astype(mx.int32), s, b)",
    "mx.dequantize(q[0], s[0], b[0])",
    "mx.dequantize(q, s, b, dtype=mx.int32)",
    "mx.dequantize(q, s.astype(mx.int32), b.astype(mx.int32))",
    "mx.dequantize(q, s, b, group_size=0)",
    "mx.dequantize(q, s, b, mode='mxfp4')",
    "mx.dequantize(q, s.astype(mx.uint8), b, mode='mxfp4')",
    "mx.dequantize(q, s.astype(mx.uint8), mode='mxfp4')",
    "mx.dequantize(q, s.astype(mx.uint8), mode='mxfp4', group_size=64)",
    "mx.dequantize(q, s[None], b)",
    "mx.quantized_matmul(x, q, s, b)",
    "mx.quantized_matmul(x, q, s)",
    "mx.quantized_matmul(x[:, :32], q, s, b)",
    "mx.quantized_matmul(x, q, s, b, transpose=False)",
    "mx.quantized_matmul(x, q.astype(mx.int32), s, b)",
    "mx.quantized_matmul(x, q, s, b, bits=8)",
    "mx.quantized_matmul(x, q, s, b[:, :0])",
    "mx.quantized_matmul(x, q, s, mode='mxfp4')",
    "mx.quantized_matmul(x, q, s.astype(mx.uint8), mode='mxfp4')",
    "mx.quantized_matmul(x, q[None], s, b)",
    "mx.quantized_matmul(x.astype(mx.int32), q, s.astype(mx.int32), b.astype(mx.int32))",
    # a weight of fewer than 2 dimensions fails MLX's batch-shape check; a 0-d input or
    # 0-d scales its C++ read of the last dimension
    "mx.quantized_matmul(x, q[0], s[0], b[0])",
    "mx.quantized_matmul(x, q[0, 0], s, b)",
    "mx.gather_qmm(x, q[0], s[0], b[0])",
    "mx.quantized_matmul(mx.array(1.0), q, s, b)",
    "mx.quantized_matmul(x, q, s[0, 0], b[0, 0])",
]


@pytest.mark.parametrize("mode", ["affine", "mxfp4"])
def test_quantize_returns_a_list_as_mlx(mode):
    w = np.ones((2, 64), np.float32)
    ours, theirs = mx.quantize(mx.array(w), mode=mode), mlx.quantize(mlx.array(w), mode=mode)
    assert type(ours) is type(theirs) is list and len(ours) == len(theirs)


@pytest.mark.parametrize("expr", ERRORS)
def test_results_and_errors_match_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


# -- qqmm / gather_qqmm ---------------------------------------------------------------------
# MLX's CPU build computes `qqmm` only for one row of x against a packed w; ember repeats
# its kernel's order of operations (x quantized and dequantized in float32, then sums in
# x's type, element by element), so those products are compared bit for bit. Everything
# else raises: MLX when the result is evaluated, ember at the call, so the expressions
# below evaluate what they build.

def _qq_row(k: int, trial: int, dtype: str) -> np.ndarray:
    """One row of x at a mixed magnitude, with the special values the kernel meets."""
    rng = np.random.default_rng(k + trial)
    x = rng.standard_normal((1, k)).astype(np.float32) * np.float32(10.0 ** (trial % 5 - 2))
    if trial == 1:  # an all-zero group holding a NaN, and a lone NaN elsewhere
        x[0, :32], x[0, 3], x[0, -5] = 0.0, np.nan, np.nan
    if trial == 2:  # infinities (an inf scale: its group turns NaN)
        x[0, 1], x[0, -1] = np.inf, -np.inf
    if trial == 3:  # subnormal maxima: the scale clamps at 2^-127 (e8m0) or 0 (e4m3)
        x[0, :] = 0.0
        x[0, 0], x[0, -1] = 1e-38, -3e-39
    if trial == 4:  # an all-NaN group, and a maximum near float16's
        x[0, :16] = np.nan
        x[0, 20] = 6e4 if dtype == "float16" else 3e38
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["nvfp4", "mxfp8", "mxfp4"])
def test_qqmm_one_row_bit_for_bit(dtype, mode):
    for k, n in [(32, 1), (64, 9), (256, 33)]:
        w = (_weights((n, k), seed=k) if n >= 3 else RNG.standard_normal((n, k))) * 0.1
        w[-1, 5] = np.inf  # (a group whose scale is infinite)
        theirs_q = mlx.quantize(mlx.array(w).astype(getattr(mlx, dtype)), mode=mode)
        ours_q = [mx.array(np.array(a)) for a in theirs_q]  # (the same bytes: only qqmm)
        for trial in range(5):
            x = _qq_row(k, trial, dtype)
            ours_x, theirs_x = _both(dtype, x)
            for shape in [(1, k), (k,), (1, 1, k)]:
                _identical([mx.qqmm(ours_x.reshape(shape), *ours_q, mode=mode)],
                           [mlx.qqmm(theirs_x.reshape(shape), *theirs_q, mode=mode)])


def test_qqmm_kernel_reads_raw_bytes():
    # MLX's kernel picks its layout from bits and group size alone and reads w and the
    # scales as bytes: float32 scales, an mxfp4 w under mode="nvfp4", even an affine w
    # (its scales' bytes read as e4m3 or e8m0 codes) give what the bytes say; the global
    # scales are checked, then unused.
    w = _weights((16, 128), seed=2)
    x = RNG.standard_normal((1, 128)).astype(np.float32)
    cases = [  # (quantize's arguments, qqmm's, scales cast to float32)
        ({"mode": "nvfp4"}, {"mode": "nvfp4"}, True),
        ({"mode": "mxfp4"}, {"mode": "nvfp4", "group_size": 32}, False),
        ({"mode": "nvfp4"}, {"global_scale_x": 2.0, "global_scale_w": 3.0}, False),
        ({"group_size": 64, "bits": 4}, {"mode": "affine", "group_size": 64, "bits": 4}, False),
        ({"group_size": 32, "bits": 8}, {"mode": "affine", "group_size": 32, "bits": 8}, False),
    ]
    for qkw, kw, as_float in cases:
        out = []
        for m in (mx, mlx):
            q, s = m.quantize(m.array(w), **qkw)[:2]
            s = s.astype(m.float32) if as_float else s
            kw_m = {k: m.array(v) if k.startswith("global") else v for k, v in kw.items()}
            out.append(m.qqmm(m.array(x), q, s, **kw_m))
        _identical(out[:1], out[1:])


def test_qqmm_refuses_what_would_read_past_its_buffers():
    # (MLX reads past the end of the scales here and returns whatever it finds)
    q, s, _ = mx.quantize(mx.array(_weights((8, 64))).astype(mx.float16), 64, 4)
    with pytest.raises(RuntimeError, match="kernel reads 256 bytes of weights and 32"):
        mx.qqmm(mx.ones((1, 64)), q, s, mode="affine", group_size=64, bits=4)


def test_fp8_codes_0x7f_and_0xff_are_nan():
    # NOTE: the 0.32.4 wheel decodes e4m3 0x7f / 0xff as NaN (the 0.32.2 source: 480)
    q = np.full((2, 8), 0x7F7F_7F7F, np.uint32)
    q[1] = 0x3C3C_FFFF
    for mode, s in [("mxfp8", np.array([[127], [1]], np.uint8)),
                    ("nvfp4", np.array([[127, 255, 126, 255], [1, 2, 3, 4]], np.uint8))]:
        _identical([mx.dequantize(mx.array(q), mx.array(s), mode=mode, dtype=mx.float32)],
                   [mlx.dequantize(mlx.array(q), mlx.array(s), mode=mode, dtype=mlx.float32)])


QQ_SETUP = ("x1 = mx.array(np.linspace(-2, 2, 64, dtype=np.float32)[None]);"
            "w = mx.array(np.cos(np.arange(512, dtype=np.float32)).reshape(8, 64));"
            "q, s = mx.quantize(w, mode='nvfp4'); q8, s8 = mx.quantize(w, mode='mxfp8')")

QQ_CASES = [
    # what the CPU build refuses: several rows, a float w, any gather
    "mx.qqmm(mx.concatenate([x1, x1]), q, s)",
    "mx.qqmm(mx.concatenate([x1, x1])[:, None], q, s)",
    "mx.qqmm(mx.zeros((0, 64)), q, s)",
    "mx.qqmm(x1, w)",
    "mx.qqmm(x1, w, mode='mxfp8')",
    "mx.qqmm(x1, w, s)",
    "mx.qqmm(x1, w, group_size=32)",
    "mx.gather_qqmm(x1, w)",
    "mx.gather_qqmm(x1, q, s)",
    "mx.gather_qqmm(x1[None], w[None], None, mx.array([0, 0]), mx.array([0]))",
    "mx.gather_qqmm(mx.zeros((2, 3, 5, 64)), mx.zeros((4, 8, 64)), None, mx.array([[1], [2]]))",
    "mx.gather_qqmm(x1.astype(mx.float64), w.astype(mx.int32))",
    "mx.gather_qqmm(x1, w, global_scale_x=mx.array([1.0, 2.0]))",
    # argument checks, in MLX's order
    "mx.qqmm(x1, q, s, mode='foo')",
    "mx.qqmm(x1, q)",
    "mx.qqmm(x1, q[None], s[None])",
    "mx.qqmm(x1.astype(mx.float64), q, s)",
    "mx.qqmm(mx.zeros((1, 64), mx.int32), q, s)",
    "mx.qqmm(x1, w.astype(mx.float64))",
    "mx.qqmm(x1, q.astype(mx.int32), s)",
    "mx.qqmm(x1, q, s, global_scale_x=mx.array(1.0))",
    "mx.qqmm(x1, q8, s8, mode='mxfp8', global_scale_x=mx.array(1.0))",
    "mx.qqmm(x1, q, s, global_scale_x=mx.array([1.0, 2.0]), global_scale_w=mx.array(2.0))",
    "mx.qqmm(x1, q, s, global_scale_x=mx.array(1.0, mx.float16), global_scale_w=mx.array(2.0))",
    "mx.qqmm(x1, q, s[:, :2])",
    "mx.qqmm(x1[:, :32], q, s)",
    "mx.qqmm(x1, q, s, bits=8)",
    "mx.qqmm(x1[:, :32], w)",
    "mx.qqmm(mx.array(1.0), q, s)",
    "mx.qqmm(x1, q, s, stream=mx.gpu)",
    "mx.gather_qqmm(x1, w, mode='foo')",
    "mx.gather_qqmm(x1[0], w)",
    "mx.gather_qqmm(x1, w[0])",
    "mx.gather_qqmm(x1[None], w[None], None, mx.array([0.5]))",
    "mx.gather_qqmm(x1, w, None, None, mx.array([True]))",
    "mx.gather_qqmm(x1[None], w[None], None, mx.array([0, 0, 0]), mx.array([0, 0]))",
    "mx.gather_qqmm(x1, q, s[:, :2])",
    "mx.gather_qqmm(x1[:, :32], q, s)",
    "mx.gather_qqmm(x1[:, :32], w)",
    # transforms: the vjp for x needs w's scales, for a float w the general case; no jvp,
    # no vmap
    "mx.grad(lambda x: mx.qqmm(x, q, s).sum())(x1)",
    "mx.grad(lambda x: mx.qqmm(x, q, s).sum())(x1[0])",
    "mx.grad(lambda w: mx.qqmm(x1, w).sum())(w)",
    "mx.vjp(lambda x: mx.qqmm(x, q, s), [x1], [mx.ones((1, 8))])",
    "mx.jvp(lambda x: mx.qqmm(x, q, s), [x1], [mx.ones((1, 64))])",
    "mx.vmap(lambda x: mx.qqmm(x, q, s))(mx.concatenate([x1, x1]))",
    # and what computes: shapes and dtypes
    "mx.qqmm(x1[None, None], q, s)",
    "mx.qqmm(x1.astype(mx.bfloat16), q, s, stream=mx.cpu)",
    "mx.qqmm(x1, q, s, global_scale_x=mx.array(1.0), global_scale_w=mx.array(2.0))",
]


@pytest.mark.parametrize("expr", QQ_CASES)
def test_qqmm_results_and_errors_match_mlx(expr):
    from mlx_oracle import outcome

    def run(m):
        return outcome(f"(lambda r: (mx.eval(r), r)[1])({expr})", m, QQ_SETUP,
                       lambda r: (r.shape, repr(r.dtype)))

    assert run(mx) == run(mlx), expr



# (expression with x and the quantized w as q, x's shape, w's shape, group size, bits)
HALF_PRODUCTS = {
    "transposed": ("mx.quantized_matmul(x, *q, True, gs, bits)", (2, 3, 128), (48, 128),
                   32, 4),
    "plain": ("mx.quantized_matmul(x, *q, False, gs, bits)", (3, 48), (48, 128), 64, 8),
    "one_row": ("mx.quantized_matmul(x, *q, True, gs, bits)", (128,), (8, 128), 128, 3),
    "batched_weight": ("mx.quantized_matmul(x, *q, True, gs, bits)", (2, 4, 64),
                       (2, 16, 64), 32, 6),
    "gathered": ("mx.gather_qmm(x, *q, rhs_indices=mx.array([1, 0, 1]), group_size=gs, "
                 "bits=bits)", (3, 1, 64), (2, 16, 64), 64, 4),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", list(HALF_PRODUCTS))
def test_half_products_sum_in_the_half_type_as_mlx(case, dtype):
    # MLX's kernel keeps each dot product's running sum in float16 / bfloat16; a float32
    # matmul rounded once would differ by several units of the 16-bit type. Exact.
    expr, xs, ws, gs, bits = HALF_PRODUCTS[case]
    x = RNG.standard_normal(xs).astype(np.float32)
    w = (RNG.standard_normal(ws) * 2).astype(np.float32)

    def run(m):
        dt = getattr(m, dtype)
        q = m.quantize(m.array(w).astype(dt), gs, bits)
        return eval(expr, {"mx": m, "x": m.array(x).astype(dt), "q": q, "gs": gs,
                           "bits": bits})

    ours, theirs = run(mx), run(mlx)
    assert repr(ours.dtype) == repr(theirs.dtype) and ours.shape == theirs.shape
    np.testing.assert_array_equal(_np(ours), _np(theirs))


@pytest.mark.parametrize("case", ["plain", "batched_weight", "gathered"])
def test_half_products_taken_in_slices_of_k_sum_as_one(case, monkeypatch):
    """A large product is summed in slices of K (memory stays bounded), the running sum
    carried into each slice: still MLX's bits."""
    from ember.mlx.core import _quantize

    monkeypatch.setattr(_quantize, "_SUM_ELEMENTS", 40)  # a few K per slice
    test_half_products_sum_in_the_half_type_as_mlx(case, "float16")
