"""mx.fft.stft / mx.fft.istft against MLX 0.32.4.

Shapes, dtypes and errors (type and message) must be equal. Values are compared at a
relative tolerance of 1e-5 of the largest magnitude: the framing, windowing and
overlap-add are MLX's ops in MLX's order, but the transforms are different codes (NumPy's
pocketfft in double precision, rounded, against MLX's single-precision pocketfft, whose
vectorised loops group the butterflies their own way), so each spectrum or frame differs
in its last bits. Gradients likewise, at the same tolerance.
"""

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")

RNG = np.random.default_rng(11)
DATA = {
    "x": RNG.standard_normal(64).astype(np.float32),
    "h": (np.hanning(16) + 0.05).astype(np.float32),
    "b": RNG.standard_normal((2, 3, 40)).astype(np.float32),
    "z": (RNG.standard_normal(64) + 1j * RNG.standard_normal(64)).astype(np.complex64),
    "Z": (RNG.standard_normal((9, 17)) + 1j * RNG.standard_normal((9, 17))).astype(np.complex64),
    "F": (RNG.standard_normal((16, 17)) + 1j * RNG.standard_normal((16, 17))).astype(np.complex64),
    "B": (RNG.standard_normal((2, 3, 9, 5)) + 1j * RNG.standard_normal((2, 3, 9, 5))
          ).astype(np.complex64),
}


def _run(expr: str, module):
    """("ok", dtype name, shape, values) or (exception type, message)."""
    scope = {"mx": module, "np": np, "S": module.fft.stft, "I": module.fft.istft,
             **{k: module.array(v) for k, v in DATA.items()}}
    try:
        r = eval(expr, scope)
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)
    return "ok", repr(r.dtype), r.shape, np.array(r)


def _same(expr: str) -> None:
    ours, theirs = _run(expr, mx), _run(expr, mlx)
    assert ours[:3] == theirs[:3], expr
    if ours[0] == "ok" and theirs[3].size:
        finite = np.abs(theirs[3][np.isfinite(theirs[3])])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-5 * scale,
                                   equal_nan=True, err_msg=expr)


STFT = [
    "S(x, n_fft=16)", "S(x)", "S(x, n_fft=16, hop_length=3)", "S(x, n_fft=16, win_length=10)",
    "S(x, n_fft=16, center=False)", "S(x, n_fft=16, pad_mode='constant')",
    "S(x, n_fft=16, pad_mode='edge')", "S(x, n_fft=16, pad_mode='symmetric')",
    "S(x, n_fft=16, norm='ortho')", "S(x, n_fft=16, norm='forward')",
    "S(x, n_fft=16, onesided=False)", "S(x, n_fft=15)",
    "S(x, n_fft=15, hop_length=4, win_length=7)",
    "S(x, n_fft=16, window=h)", "S(x, n_fft=16, window=h[:9])",
    "S(x, n_fft=16, window=h[:9], win_length=100)", "S(x, n_fft=16, hop_length=40)",
    # reflect / symmetric padding wider than the signal reflects again, as np.pad does
    "S(x[:5], n_fft=16)", "S(x[:1], n_fft=16)", "S(x[:2], n_fft=16, pad_mode='symmetric')",
    "S(x[:5], n_fft=16, pad_mode='edge')", "S(x[:16], n_fft=16, center=False)",
    "S(b, n_fft=8)", "S(b[:0], n_fft=8)", "S(mx.ones((0, 3)), n_fft=8)",
    "S(z, n_fft=16)", "S(z, n_fft=16, onesided=True)", "S(z, n_fft=16, window=h * 1j)",
    "S(x.astype(mx.float16), n_fft=16, window=h.astype(mx.float16))",
    "S(x.astype(mx.bfloat16), n_fft=16)", "S(x.astype(mx.int32), n_fft=16)",
    "S(x.astype(mx.float64), n_fft=16, window=h.astype(mx.float64))",
    "S(x, n_fft=16, window=h.astype(mx.complex64) * (1 + 1j))",
    "S(x, n_fft=16, window=mx.ones(16, mx.bool_))", "S(x > 0, n_fft=16, window=h > 0.5)",
    "S(x, n_fft=16, win_length=0)",
    # errors, in MLX's order of checks
    "S(x, n_fft=0)", "S(x, n_fft=-1)", "S(x, n_fft=3)", "S(x, n_fft=16, hop_length=0)",
    "S(x, n_fft=16, win_length=17)", "S(x, n_fft=16, window=mx.ones(17))",
    "S(x, n_fft=16, window=mx.ones((4, 4)))", "S(x, n_fft=16, win_length=-3)",
    "S(x, n_fft=16, pad_mode='circular')", "S(x, n_fft=16, pad_mode='circular', center=False)",
    "S(x, n_fft=16, norm='x')", "S(x, n_fft=16, norm='ORTHO')", "S(x[:5], n_fft=16, center=False)",
    "S(mx.array(1.0), n_fft=16)", "S(mx.ones(0), n_fft=16)", "S(mx.ones((3, 0)), n_fft=16)",
    "S(mx.ones((0, 3)), n_fft=8, center=False)", "S(x, n_fft=0, norm='x')",
    "S(mx.array(1.0), n_fft=0)", "S(mx.array(1.0), n_fft=8, hop_length=0)",
    "S(mx.ones(0), n_fft=8, hop_length=0)", "S(mx.ones(0), n_fft=8, pad_mode='x')",
    "S(mx.ones(3), n_fft=8, center=False, pad_mode='x')",
    "S(x, n_fft=8, win_length=-3, window=mx.ones((2, 2)))",
    "S(x, n_fft=8, win_length=-3, pad_mode='x')",
]


@pytest.mark.parametrize("expr", STFT)
def test_stft_same_as_mlx(expr):
    _same(expr)


ISTFT = [
    "I(Z)", "I(Z, n_fft=16)", "I(Z, n_fft=16, hop_length=3)",
    "I(Z, n_fft=16, hop_length=5, win_length=10)", "I(Z, n_fft=16, window=h)",
    "I(Z, n_fft=16, window=h[:11], hop_length=3)", "I(Z, n_fft=16, center=False)",
    "I(Z, n_fft=16, norm='ortho')", "I(Z, n_fft=16, norm='forward')", "I(Z, n_fft=15)",
    "I(Z, n_fft=20)", "I(Z, n_fft=8)", "I(Z, n_fft=16, hop_length=20)",
    "I(F, onesided=False)", "I(F, n_fft=8, onesided=False)", "I(F, n_fft=20, onesided=False)",
    "I(F, n_fft=16, onesided=True)", "I(B, n_fft=16)", "I(B.transpose(1, 0, 2, 3), n_fft=16)",
    "I(Z.T.T, n_fft=16)", "I(mx.zeros((0, 9, 17), mx.complex64), n_fft=16)",
    "I(Z[:, :1], n_fft=16)",
    # `length` trims (a negative one counts from the end) or zero-pads
    "I(Z, n_fft=16, length=64)", "I(Z, n_fft=16, length=70)", "I(Z, n_fft=16, length=100)",
    "I(Z, n_fft=16, length=0)", "I(Z, n_fft=16, length=-1)", "I(Z, n_fft=16, length=-20)",
    "I(Z, n_fft=16, hop_length=3, length=-1)",
    "I(Z, n_fft=16, hop_length=3, length=-10, center=False)",
    "I(Z, n_fft=16, hop_length=3, length=-1, center=False)",
    "I(Z, n_fft=16, center=False, length=-5)",
    # input and window dtypes (the window's promotes the result; its square keeps its own)
    "I(mx.real(Z), n_fft=16)", "I(mx.real(Z).astype(mx.float16), n_fft=16)",
    "I(mx.real(Z).astype(mx.int32), n_fft=16)", "I(Z, n_fft=16, window=mx.zeros(16))",
    "I(Z, n_fft=16, window=mx.zeros(16, mx.float16))",
    "I(Z, n_fft=16, window=h.astype(mx.float16))", "I(Z, n_fft=16, window=h.astype(mx.float64))",
    "I(Z, n_fft=16, window=mx.full(16, 20, mx.int8))",
    "I(Z, n_fft=16, window=mx.full(16, 20, mx.uint8))", "I(Z, n_fft=16, window=h > 0.3)",
    "I(Z, n_fft=16, window=h * 1e-5)", "I(Z, n_fft=16, window=h.astype(mx.complex64) * (1 + 0.5j))",
    "I(Z, n_fft=16, window=h.astype(mx.complex64) * 1j)", "I(Z, n_fft=16, win_length=0)",
    "I(Z, n_fft=16, win_length=8)",
    # errors
    "I(Z[:, 0], n_fft=16)", "I(Z[0, 0], n_fft=16)", "I(Z, n_fft=16, hop_length=0)", "I(Z, n_fft=0)",
    "I(Z[:0], hop_length=4)", "I(Z[:1], hop_length=4)", "I(Z[:1], onesided=False)",
    "I(Z, n_fft=16, norm='x')", "I(Z, n_fft=16, win_length=17)",
    "I(Z, n_fft=16, window=mx.ones((4, 4)))", "I(Z, n_fft=16, window=mx.ones(20))",
    "I(Z[:, :0], n_fft=16)", "I(mx.zeros((2, 0, 17), mx.complex64), n_fft=16)",
    "I(Z, n_fft=16, win_length=-3)", "I(Z[0, 0], norm='x')", "I(Z[0, 0], n_fft=0)", "I(Z, n_fft=3)",
    "I(Z[:, :0], n_fft=16, win_length=17)",
]


@pytest.mark.parametrize("expr", ISTFT)
def test_istft_same_as_mlx(expr):
    _same(expr)


@pytest.mark.parametrize("expr", ["S(x, n_fft=8.0)", "I(Z, n_fft=16.0)", "I(Z, length=2.5)"])
def test_sizes_must_be_ints(expr):
    assert _run(expr, mx)[0] == _run(expr, mlx)[0] == "TypeError"


def test_round_trip_of_a_batch():
    x = np.random.default_rng(1).standard_normal((2, 3000)).astype(np.float32)
    w = np.hanning(256).astype(np.float32)
    for module in (mx, mlx):
        spec = module.fft.stft(module.array(x), n_fft=256, hop_length=64, window=module.array(w))
        y = module.fft.istft(spec, n_fft=256, hop_length=64, window=module.array(w), length=3000)
        np.testing.assert_allclose(np.array(y), x, atol=2e-6)


def _grads(module, fn, args):
    arrays = [module.array(a) for a in args]
    return [np.array(g) for g in module.grad(fn(module), argnums=(0, 1))(*arrays)]


def test_stft_gradients():
    weights = np.random.default_rng(2).standard_normal((9, 22)).astype(np.float32)

    def loss(m):
        def f(x, w):
            spec = m.fft.stft(x, n_fft=16, hop_length=3, window=w, pad_mode="reflect")
            return (m.real(spec) * m.array(weights) + m.imag(spec) ** 2).sum()
        return f

    args = [DATA["x"], DATA["h"]]
    for ours, theirs in zip(_grads(mx, loss, args), _grads(mlx, loss, args)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5 * np.abs(theirs).max())


def test_istft_gradients():
    target = np.random.default_rng(3).standard_normal(60).astype(np.float32)

    def loss(m):
        def f(z, w):
            y = m.fft.istft(z, n_fft=16, hop_length=3, window=w, length=60)
            return (y * m.array(target) + y ** 2).sum()
        return f

    args = [DATA["Z"], DATA["h"]]
    for ours, theirs in zip(_grads(mx, loss, args), _grads(mlx, loss, args)):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5 * np.abs(theirs).max())


def test_vmap_over_signals():
    """MLX's stft has no vmap (its framing is an `as_strided`, which has no rule); ember's
    gathers map. istft maps in both."""
    x = np.random.default_rng(4).standard_normal((3, 64)).astype(np.float32)
    with pytest.raises(ValueError, match="AsStrided"):
        mlx.vmap(lambda s: mlx.fft.stft(s, n_fft=16))(mlx.array(x))
    ours = mx.vmap(lambda s: mx.fft.stft(s, n_fft=16))(mx.array(x))
    np.testing.assert_allclose(np.array(ours), np.array(mlx.fft.stft(mlx.array(x), n_fft=16)),
                               atol=1e-5)
    z = np.stack([DATA["Z"], 2 * DATA["Z"]])
    ours = mx.vmap(lambda s: mx.fft.istft(s, n_fft=16))(mx.array(z))
    theirs = mlx.vmap(lambda s: mlx.fft.istft(s, n_fft=16))(mlx.array(z))
    np.testing.assert_allclose(np.array(ours), np.array(theirs), atol=1e-5)
