"""Signals, FFTs and convolutions the way MLX's documentation uses them: `mx.fft` (1-d, 2-d
and n-d, real and complex, with n= / s= / axes=, half-precision inputs), spectral filtering
and convolution by FFT checked against `mx.conv1d`, complex arrays, a short-time Fourier
transform framed with `mx.as_strided` under a Hann window (and `mx.fft.stft` beside it), every
convolution (`conv1d/2d/3d`, `conv_transpose1d/2d`, `conv_general` with stride, padding pairs,
dilation, groups and `flip=True`), `mx.pad`, cumulative sums and moving averages, `mx.diff`,
`mx.convolve`, a tiny 1-d CNN denoiser trained with Adam on noisy sines, and the mistakes
users make. The same file runs on MLX and, via `python -m ember.run signal_processing.py`,
on ember.
"""

import math

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


def show(name, x):
    """One line per array: name, shape, dtype and its printed values."""
    text = str(x).replace("\n", " ")
    print(f"{name}: {tuple(x.shape)} {x.dtype} {text}")


def rnd(x, decimals=0):
    """`x` rounded, with -0 made +0 (the sign of a rounded-away FFT residue is noise)."""
    return mx.round(x, decimals) + 0


def close(name, a, b, atol=1e-4):
    """Whether two arrays agree to `atol`, with their largest difference to 2 digits."""
    err = mx.max(mx.abs(a - b)).item()
    print(f"{name}: {mx.allclose(a, b, atol=atol).item()} (max err < {atol:g}: {err < atol})")


def ffts():
    print("== fft")
    t = mx.arange(8, dtype=mx.float32)
    x = mx.sin(2 * math.pi * t / 8) + 0.5 * mx.cos(2 * math.pi * 3 * t / 8)
    X = mx.fft.fft(x)
    show("fft real", rnd(X, 4))
    show("ifft back", rnd(mx.fft.ifft(X), 4))
    show("fft n=5", rnd(mx.fft.fft(x, n=5), 3))
    show("fft n=12", rnd(mx.fft.fft(x, n=12), 3))
    show("rfft", rnd(mx.fft.rfft(x), 4))
    show("rfft n=6", rnd(mx.fft.rfft(x, n=6), 3))
    show("irfft", rnd(mx.fft.irfft(mx.fft.rfft(x)), 4))
    show("irfft n=6", rnd(mx.fft.irfft(mx.fft.rfft(x), n=6), 4))
    show("irfft n=11", rnd(mx.fft.irfft(mx.fft.rfft(x), n=11), 4))
    z = mx.array([1 + 2j, -1j, 3.0, 0.5 - 0.5j])
    show("fft complex", rnd(mx.fft.fft(z), 4))
    show("ifft complex", rnd(mx.fft.ifft(z), 4))
    m = mx.arange(12, dtype=mx.float32).reshape(3, 4)
    show("fft axis 0", rnd(mx.fft.fft(m, axis=0), 3))
    show("fft2", rnd(mx.fft.fft2(m), 3))
    show("ifft2", rnd(mx.fft.ifft2(mx.fft.fft2(m)), 3))
    show("fft2 s", rnd(mx.fft.fft2(m, s=(2, 5)), 3))
    show("rfft2", rnd(mx.fft.rfft2(m), 3))
    show("irfft2", rnd(mx.fft.irfft2(mx.fft.rfft2(m)), 3))
    show("irfft2 s", rnd(mx.fft.irfft2(mx.fft.rfft2(m), s=(3, 5)), 3))
    c = mx.arange(24, dtype=mx.float32).reshape(2, 3, 4)
    show("fftn", rnd(mx.fft.fftn(c)[:, :, :2], 2))
    show("fftn axes", rnd(mx.fft.fftn(c, axes=[0, 2])[0], 2))
    show("fftn s axes", rnd(mx.fft.fftn(c, s=[3, 2], axes=[0, 1])[..., 0], 2))
    show("ifftn", rnd(mx.fft.ifftn(mx.fft.fftn(c))[1], 3))
    show("rfftn", rnd(mx.fft.rfftn(c)[0], 2))
    show("rfftn axes", rnd(mx.fft.rfftn(c, axes=(0, 1))[:, :, 0], 2))
    show("irfftn", rnd(mx.fft.irfftn(mx.fft.rfftn(c))[1], 3))
    show("irfftn s", rnd(mx.fft.irfftn(mx.fft.rfftn(c), s=(2, 3, 6), axes=(0, 1, 2))[0], 3))
    for dt in (mx.float16, mx.bfloat16, mx.int32, mx.bool_):
        h = mx.array([1, 0, 1, 1]).astype(dt)
        print(f"fft of {dt}: -> {mx.fft.fft(h).dtype}, rfft -> {mx.fft.rfft(h).dtype}")
    show("fft f16 values", mx.fft.rfft(mx.array([0.5, 1.5, -1.0, 2.0], dtype=mx.float16)))
    show("fftfreq", mx.fft.fftfreq(6, d=0.5))
    show("rfftfreq", mx.fft.rfftfreq(7))
    show("fftshift", mx.fft.fftshift(mx.arange(6)))
    show("ifftshift", mx.fft.ifftshift(mx.arange(6)))
    energy_t = mx.sum(x * x).item()
    energy_f = (mx.sum(mx.abs(X) ** 2) / 8).item()
    print(f"parseval: {energy_t:.4f} {energy_f:.4f}")


def complex_arrays():
    print("== complex")
    z = mx.array([3 + 4j, -1 + 0j, 0 - 2j, 1 + 1j])
    show("z", z)
    show("abs", mx.abs(z))
    show("real", mx.real(z))
    show("imag", z.imag)
    show("conj", mx.conj(z))
    show("conjugate", mx.conjugate(z))
    show("angle", rnd(mx.arctan2(mx.imag(z), mx.real(z)), 4))
    w = z * (1 - 1j) + 2
    show("arith", w)
    show("div", rnd(z / (1 + 1j), 4))
    show("z*conj", z * mx.conj(z))
    show("exp", rnd(mx.exp(1j * mx.array([0.0, math.pi / 2])), 4))
    show("sum", mx.sum(z))
    show("mean", mx.mean(z))
    show("from reals", mx.array([1.0, 2.0]) + 1j * mx.array([3.0, -4.0]))
    show("astype", mx.array([1.5, -2.0]).astype(mx.complex64))
    show("to real", z.astype(mx.float32))
    show("matmul", mx.array([[1j, 1], [0, 2]]) @ mx.array([[1 + 0j], [1j]]))
    print("repr:", repr(mx.array(1 - 2.5j)))
    print("item:", mx.array([0.5 + 1j])[0].item())
    print("tolist:", (z[:2] * 2).tolist())
    print("isclose:", mx.isclose(z, z + 1e-7).tolist())


def filtering():
    print("== filtering")
    n = 64
    t = mx.arange(n, dtype=mx.float32)
    clean = mx.sin(2 * math.pi * 3 * t / n)
    noise = 0.4 * mx.sin(2 * math.pi * 20 * t / n)
    spec = mx.fft.rfft(clean + noise)
    mags = mx.abs(spec)
    top = mx.argsort(-mags)[:2]
    print("loudest bins:", sorted(top.tolist()))
    keep = (mx.arange(spec.shape[0]) < 10).astype(spec.dtype)
    filtered = mx.fft.irfft(spec * keep, n=n)
    close("low-pass recovers", filtered, clean)
    # convolution by FFT: zero-pad both to the full length, multiply, invert
    sig = mx.random.normal((20,), key=mx.random.key(1))
    ker = mx.array([0.25, 0.5, 0.25, -0.1])
    full = 20 + 4 - 1
    by_fft = mx.fft.irfft(mx.fft.rfft(sig, n=full) * mx.fft.rfft(ker, n=full), n=full)
    direct = mx.conv1d(sig.reshape(1, 20, 1), ker[::-1].reshape(1, 4, 1), padding=3)
    close("fft conv == conv1d", by_fft, direct.reshape(-1))
    close("fft conv == convolve", by_fft, mx.convolve(sig, ker))
    show("convolve same", rnd(mx.convolve(mx.arange(5.0), mx.array([1.0, 0, -1]),
                                               mode="same"), 3))
    show("convolve valid", mx.convolve(mx.arange(6.0), mx.array([1.0, 2.0]), mode="valid"))
    show("convolve full", mx.convolve(mx.array([1.0, 2.0]), mx.array([0.0, 1.0, 0.5])))
    show("convolve swap", mx.convolve(mx.array([1.0, 2.0]), mx.arange(4.0), mode="valid"))
    # circular convolution is exact in the frequency domain
    a = mx.array([1.0, 2.0, 3.0, 4.0])
    b = mx.array([0.0, 1.0, 0.0, 0.0])
    show("circular shift", rnd(mx.fft.irfft(mx.fft.rfft(a) * mx.fft.rfft(b), n=4), 4))


def stft():
    print("== stft")
    n, frame, hop = 128, 32, 16
    t = mx.arange(n, dtype=mx.float32)
    chirp = mx.sin(2 * math.pi * (4 + 8 * t / n) * t / n * 4)
    window = mx.hanning(frame)
    show("hann[:5]", rnd(window[:5], 4))
    periodic = 0.5 - 0.5 * mx.cos(2 * math.pi * mx.arange(frame) / frame)
    show("periodic hann[:3]", rnd(periodic[:3], 4))
    n_frames = 1 + (n - frame) // hop
    frames = mx.as_strided(chirp, shape=(n_frames, frame), strides=(hop, 1))
    show("frames[:, :3]", rnd(frames[:, :3], 3))
    spec = mx.fft.rfft(frames * periodic, axis=-1)
    print("stft shape:", spec.shape, spec.dtype)
    peaks = mx.argmax(mx.abs(spec), axis=-1)
    print("peak bin per frame:", peaks.tolist())
    show("power frame 0", rnd(mx.abs(spec[0, :6]) ** 2, 2))
    builtin = mx.fft.stft(chirp, n_fft=frame, hop_length=hop, window=periodic, center=False)
    print("mx.fft.stft shape:", builtin.shape, builtin.dtype)
    print("same as framed:", mx.allclose(mx.abs(builtin.T), mx.abs(spec), atol=1e-3).item())
    back = mx.fft.istft(mx.fft.stft(chirp, n_fft=frame, hop_length=hop, window=periodic),
                        n_fft=frame, hop_length=hop, window=periodic, length=n)
    close("istft round trip", back, chirp, atol=1e-3)
    strided = mx.as_strided(mx.arange(10), (3, 4), (2, 1), offset=1)
    show("as_strided offset", strided)


def convolutions():
    print("== conv")
    k = mx.random.key(3)
    k1, k2, k3 = mx.random.split(k, 3)
    x = rnd(mx.random.normal((1, 9, 2), key=k1), 1)
    w = rnd(mx.random.normal((3, 3, 2), key=k2), 1)
    show("conv1d", rnd(mx.conv1d(x, w), 3)[0, :, 0])
    show("conv1d stride", rnd(mx.conv1d(x, w, stride=2, padding=1), 3)[0, :, 1])
    show("conv1d dilation", rnd(mx.conv1d(x, w, dilation=2), 3)[0, :, 2])
    wg = rnd(mx.random.normal((4, 3, 1), key=k3), 1)
    y = mx.conv1d(x, wg, groups=2)
    show("conv1d groups", rnd(y[0, :3], 3))
    x2 = mx.arange(2 * 5 * 6 * 3, dtype=mx.float32).reshape(2, 5, 6, 3) / 50
    w2 = mx.ones((4, 2, 3, 3)) * mx.arange(4).reshape(4, 1, 1, 1) / 10
    show("conv2d", rnd(mx.conv2d(x2, w2)[0, :, 0, 1], 3))
    show("conv2d pad pair", rnd(mx.conv2d(x2, w2, stride=(2, 1), padding=(1, 0))[1, :, 0, 3],
                                     3))
    print("conv2d shapes:", mx.conv2d(x2, w2, stride=2, padding=(0, 2), dilation=(2, 1)).shape)
    x3 = mx.arange(1 * 4 * 4 * 4 * 2, dtype=mx.float32).reshape(1, 4, 4, 4, 2) / 100
    w3 = mx.ones((2, 2, 2, 2, 2)) / 8
    y3 = mx.conv3d(x3, w3, stride=(1, 2, 2))
    print("conv3d:", y3.shape, rnd(y3[0, :, 0, 0, 0], 3).tolist())
    xt = mx.array([[[1.0], [2.0], [3.0]]])
    wt = mx.array([[[1.0], [10.0], [100.0]]])
    show("conv_transpose1d", mx.conv_transpose1d(xt, wt))
    show("conv_transpose1d stride", mx.conv_transpose1d(xt, wt, stride=2, padding=1))
    show("conv_transpose1d outpad", mx.conv_transpose1d(xt, wt, stride=2, output_padding=1))
    xt2 = mx.arange(8, dtype=mx.float32).reshape(1, 2, 2, 2)
    wt2 = mx.ones((3, 2, 2, 2))
    yt2 = mx.conv_transpose2d(xt2, wt2, stride=2)
    print("conv_transpose2d:", yt2.shape, yt2[0, :, :, 0].tolist())
    yt2 = mx.conv_transpose2d(xt2, wt2, stride=(2, 1), padding=(1, 0), dilation=(1, 2))
    print("conv_transpose2d mixed:", yt2.shape, yt2[0, :, :, 2].tolist())
    g = mx.conv_general(x, w, stride=1, padding=([1], [2]))
    print("conv_general pad pair:", g.shape, rnd(g[0, :, 0], 3).tolist())
    g = mx.conv_general(x, w, input_dilation=2, kernel_dilation=1)
    print("conv_general input dilation:", g.shape, rnd(g[0, :4, 1], 3).tolist())
    flipped = mx.conv_general(x, w, flip=True)
    manual = mx.conv1d(x, w[:, ::-1, :])
    close("flip=True is reversed kernel", flipped, manual)
    g = mx.conv_general(x2, w2, stride=[1, 2], padding=([0, 1], [1, 0]), kernel_dilation=[1, 2])
    print("conv_general 2d:", g.shape, rnd(g[0, 0, :, 3], 3).tolist())
    xi = mx.array([[[1], [2], [3]]], dtype=mx.int32)
    try:
        print("conv int:", mx.conv1d(xi, mx.ones((1, 2, 1), dtype=mx.int32)))
    except Exception as e:
        print(f"conv int: {type(e).__name__}: {e}")
    xh = mx.array([[[0.5], [1.5], [2.5]]], dtype=mx.float16)
    show("conv f16", mx.conv1d(xh, mx.ones((1, 2, 1), dtype=mx.float16)))
    show("conv mixed", mx.conv1d(xh, mx.ones((1, 2, 1))))


def padding():
    print("== pad")
    a = mx.arange(6).reshape(2, 3)
    show("pad int", mx.pad(a, 1))
    show("pad pair", mx.pad(a, (1, 2)))
    show("pad per axis", mx.pad(a, [(0, 1), (2, 0)], constant_values=-1))
    show("pad edge", mx.pad(a, [(1, 1), (1, 2)], mode="edge"))
    show("pad tuple1", mx.pad(mx.arange(3.0), (2,), constant_values=0.5))
    show("pad array value", mx.pad(a, 1, constant_values=mx.array(9)))
    show("pad float on int", mx.pad(a, ((0, 0), (1, 1)), constant_values=2.7))
    show("pad reflect", mx.pad(mx.arange(5), (2, 2), mode="reflect"))
    show("pad symmetric", mx.pad(mx.arange(5), (2, 3), mode="symmetric"))


def cumulative():
    print("== cumulative")
    x = mx.array([1.0, 3.0, 2.0, 6.0, 4.0, 5.0, 9.0, 7.0])
    show("cumsum", mx.cumsum(x))
    show("cumsum reverse", mx.cumsum(x, reverse=True))
    show("cumsum exclusive", mx.cumsum(x, inclusive=False))
    show("cumsum 2d axis 0", mx.cumsum(x.reshape(2, 4), axis=0))
    show("cumsum flat", mx.cumsum(x.reshape(2, 4)))
    show("cumsum int8", mx.cumsum(mx.array([100, 100], dtype=mx.int8)))
    show("cumsum bool", mx.cumsum(mx.array([True, True, False])))
    show("cumprod", mx.cumprod(x[:4]))
    show("cummax", mx.cummax(x))
    show("cummin reverse", mx.cummin(x, reverse=True))
    c = mx.cumsum(mx.pad(x, (1, 0)))
    show("moving avg 3", (c[3:] - c[:-3]) / 3)
    show("moving avg conv", mx.convolve(x, mx.ones(3) / 3, mode="valid"))
    show("diff", mx.diff(x))
    show("diff n=2", mx.diff(x, n=2))
    show("diff axis 0", mx.diff(x.reshape(2, 4), axis=0))
    show("diff int", mx.diff(mx.array([1, 4, 9, 16]), n=3))
    show("diff bool", mx.diff(mx.array([True, False, False, True])))
    show("diff n=0", mx.diff(x[:3], n=0))
    show("diff n too big", mx.diff(x[:3], n=5))


class Denoiser(nn.Module):
    """Two 1-d convolutions with a ReLU between: a learned smoothing filter."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 8, kernel_size=5, padding=2)
        self.conv2 = nn.Conv1d(8, 1, kernel_size=5, padding=2)

    def __call__(self, x):
        return self.conv2(nn.relu(self.conv1(x)))


def denoiser():
    print("== denoiser")
    mx.random.seed(0)
    n, length = 16, 48
    t = mx.arange(length, dtype=mx.float32) / length
    freq = mx.random.uniform(1.0, 3.0, (n, 1))
    phase = mx.random.uniform(0.0, 2 * math.pi, (n, 1))
    clean = mx.sin(2 * math.pi * freq * t + phase)[..., None]
    noisy = clean + 0.3 * mx.random.normal(clean.shape)
    model = Denoiser()
    mx.eval(model.parameters())
    print("noisy mse:", f"{nn.losses.mse_loss(noisy, clean).item():.4f}")

    def loss_fn(model, x, y):
        return nn.losses.mse_loss(model(x), y)

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    opt = optim.Adam(learning_rate=0.01)
    for step in range(15):
        loss, grads = loss_and_grad(model, noisy, clean)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        print(f"step {step:2d} loss {loss.item():.4f}")
    print("denoised mse:", f"{nn.losses.mse_loss(model(noisy), clean).item():.4f}")
    print("weights:", model.conv1.weight.shape, model.conv2.weight.shape)


def mistakes():
    print("== mistakes")
    cases = [
        lambda: mx.fft.fft(mx.ones(4), n=0),
        lambda: mx.fft.fft(mx.ones(4), axis=1),
        lambda: mx.fft.fft2(mx.ones(4)),
        lambda: mx.fft.fftn(mx.ones((2, 2)), s=[2, 2, 2]),
        lambda: mx.fft.fftn(mx.ones((2, 2)), axes=[0, 0]),
        lambda: mx.fft.rfft(mx.ones(4, dtype=mx.complex64)),
        lambda: mx.fft.irfft2(mx.ones((2, 2)), s=(2,)),
        lambda: mx.conv1d(mx.ones((4, 2)), mx.ones((1, 3, 2))),
        lambda: mx.conv1d(mx.ones((1, 4, 2)), mx.ones((1, 3, 3))),
        lambda: mx.conv1d(mx.ones((1, 4, 4)), mx.ones((2, 3, 2)), groups=3),
        lambda: mx.conv1d(mx.ones((1, 2, 1)), mx.ones((1, 3, 1))),
        lambda: mx.conv2d(mx.ones((1, 4, 4, 1)), mx.ones((1, 2, 2, 1)), dilation=-1),
        lambda: mx.conv2d(mx.ones((1, 4, 4, 1)), mx.ones((1, 2, 2, 1)), stride=0),
        lambda: mx.conv_general(mx.ones((1, 4, 1)), mx.ones((1, 2, 1)), padding=([1], [1, 1])),
        lambda: mx.conv_transpose1d(mx.ones((1, 3, 1)), mx.ones((1, 2, 1)), output_padding=2),
        lambda: mx.pad(mx.ones((2, 2)), [(1, 1), (1, 1), (1, 1)]),
        lambda: mx.pad(mx.ones(3), -1),
        lambda: mx.pad(mx.ones(3), 1, mode="wrap"),
        lambda: mx.convolve(mx.ones((2, 2)), mx.ones(2)),
        lambda: mx.convolve(mx.ones(3), mx.ones(2), mode="nearest"),
        lambda: mx.convolve(mx.arange(6), mx.array([1, 2])),
        lambda: mx.diff(mx.ones(3), n=-1),
        lambda: mx.diff(mx.array(1.0)),
        lambda: mx.as_strided(mx.ones(4), (2, 2)),
        lambda: mx.cumsum(mx.ones(3), axis=1),
        lambda: mx.hanning(-1),
    ]
    for case in cases:
        try:
            out = case()
            print("no error", out.shape, out.dtype)
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    ffts()
    complex_arrays()
    filtering()
    stft()
    convolutions()
    padding()
    cumulative()
    denoiser()
    mistakes()
