"""Audio features and a keyword-spotting model without torchaudio: seeded synthetic chirps and
noise, framing with Tensor.unfold, torch.stft/istft with the common windows (hann periodic and
symmetric, hamming, blackman, kaiser, torch.signal.windows), center/pad_mode/normalized/onesided
options, complex tensor arithmetic and printing, a hand-built HTK mel filterbank, log-mel, MFCC
through a DCT-II matrix, delta features with conv1d and F.pad modes, torch.fft helpers, 1-D
interpolation and windowed-sinc resampling, SpecAugment masking, and a small Conv1d/Conv2d
classifier trained with Adam. Ends with the errors of typical mistakes."""

import math

import torch
import torch.nn.functional as F
from torch import float64, nn
from torch.signal import windows

torch.manual_seed(0)
sr, n = 8000, 2048
gen = torch.Generator().manual_seed(42)
t = torch.arange(n, dtype=torch.float32) / sr


def chirp(f0, f1, amp=0.5):
    k = (f1 - f0) / (n / sr)
    return amp * torch.sin(2 * math.pi * (f0 * t + 0.5 * k * t * t))


noise = torch.randn(n, generator=gen) * 0.05
signal = chirp(300.0, 1200.0) + noise
print("signal", signal.shape, signal.dtype, f"{signal.mean().item():.4f}",
      f"{signal.std().item():.4f}", signal[:4])

# ---- framing by hand
frames = signal.unfold(0, 256, 128)
print("frames", frames.shape, frames.stride(), f"{frames[3, 5].item():.4f}")

# ---- windows
wins = {
    "hann": torch.hann_window(256), "hann_sym": torch.hann_window(256, periodic=False),
    "hamming": torch.hamming_window(256), "blackman": torch.blackman_window(256, dtype=float64),
    "kaiser": torch.kaiser_window(256, periodic=True, beta=8.0),
    "gauss": torch.signal.windows.gaussian(256, std=40.0), "cosine": windows.cosine(256),
    "expo": windows.exponential(256, tau=60.0),
    "ghamm": windows.general_hamming(256, alpha=0.6, sym=False),
}
for name, w in wins.items():
    print(f"{name:9s} {w.dtype} sum={w.sum().item():.4f} mid={w[128].item():.4f} "
          f"edge={w[0].item():.4f},{w[-1].item():.4f}")

# ---- STFT
win = wins["hann"]
spec = torch.stft(signal, n_fft=256, hop_length=64, win_length=256, window=win,
                  return_complex=True)
print("stft", spec.shape, spec.dtype, spec.is_complex(), spec[40, 3], spec[38:41, 2])
print("abs/angle", f"{spec.abs()[40, 3].item():.4f}", f"{spec.angle()[40, 3].item():.4f}")
spec_c = torch.stft(signal, 256, hop_length=64, window=win, center=True, pad_mode="constant",
                    normalized=True, return_complex=True)
print("constant+normalized", spec_c.shape, f"{spec_c.abs().max().item():.4f}")
spec_full = torch.stft(signal, 128, hop_length=32, win_length=96,
                       window=torch.hamming_window(96), onesided=False, return_complex=True)
print("two-sided", spec_full.shape, f"{spec_full.abs().sum().item():.2f}")
batch = torch.stack([signal, chirp(800.0, 200.0)])
print("batched", torch.stft(batch, 256, 64, window=win, return_complex=True).shape)
spec_nc = torch.stft(signal, 256, hop_length=128, window=win, center=False, return_complex=True)

# ---- complex tensors
z = spec[40, :4]
ri = torch.view_as_real(z)
print("view_as_real", ri.shape, ri.dtype, torch.equal(torch.view_as_complex(ri.contiguous()), z))
print("real/imag", z.real, z.imag[1:])  # imag[0] is rounding noise around 0
print("polar", torch.polar(torch.tensor([1.0, 2.0]), torch.tensor([0.0, math.pi / 2])))
w1 = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
w2 = torch.complex(torch.tensor([0.5, -1.0]), torch.tensor([1.5, 2.0]))
print("ops", w1 * w2, w1 / w2, w1.conj(), w1.pow(2), w1 * 2, w1.abs())
print("conj phys", torch.conj_physical(w2), (w1 * w2.conj()).sum(), torch.sgn(w1))
zc = spec[:3, :3].clone()
zc.imag.zero_(), zc.real.mul_(2)
print("in-place parts", zc[1], torch.angle(torch.tensor([-2.0, 0.0, 3.0])))

# ---- power / magnitude, mel filterbank
power, mag = spec.abs().pow(2), spec.abs()
print("power", power.shape, f"{power.sum().item():.2f}", f"{mag.mean().item():.4f}")


def hz_to_mel(f):  # HTK
    return 2595.0 * torch.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


n_mels, n_freqs = 20, 129
all_freqs = torch.linspace(0, sr // 2, n_freqs)
m_pts = torch.linspace(hz_to_mel(torch.tensor(0.0)).item(), hz_to_mel(torch.tensor(4000.0)).item(),
                       n_mels + 2)
f_pts = mel_to_hz(m_pts)
f_diff, slopes = f_pts[1:] - f_pts[:-1], f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
down, up = -slopes[:, :-2] / f_diff[:-1], slopes[:, 2:] / f_diff[1:]
fb = torch.maximum(torch.zeros(1), torch.minimum(down, up))
print("filterbank", fb.shape, f"{fb.sum().item():.4f}", f_pts[:3])
logmel = torch.matmul(power.T, fb).T.clamp(min=1e-10).log10()
print("log-mel", logmel.shape, f"{logmel.mean().item():.4f}", f"{logmel.max().item():.4f}")

n_mfcc = 13
k, m = torch.arange(n_mfcc, dtype=torch.float32).unsqueeze(1), torch.arange(n_mels).float()
dct = torch.cos(math.pi / n_mels * (m + 0.5) * k)
dct[0] *= 1.0 / math.sqrt(2.0)
dct *= math.sqrt(2.0 / n_mels)
mfcc = dct @ logmel
print("mfcc", mfcc.shape, mfcc[:3, 5])

# ---- deltas
kernel = torch.arange(-2, 3, dtype=torch.float32).view(1, 1, 5).repeat(n_mfcc, 1, 1) / 10.0
for mode in ["replicate", "reflect", "circular"]:
    padded = F.pad(mfcc.unsqueeze(0), (2, 2), mode=mode)
    delta = F.conv1d(padded, kernel, groups=n_mfcc)
    print("delta", mode, delta.shape, f"{delta.abs().mean().item():.4f}", delta[0, 1, 1:4])

# ---- inverse STFT
rec = torch.istft(spec, 256, hop_length=64, window=win, length=n)
print("istft", rec.shape, "max error < 1e-4:", (rec - signal).abs().max().item() < 1e-4)
rec2 = torch.istft(spec_c, 256, hop_length=64, window=win, normalized=True)
err2 = (rec2 - signal[:rec2.shape[0]]).abs().max()
print("istft no length", rec2.shape, rec2.dtype, bool(err2 < 1e-4))

# ---- torch.fft helpers
X, freqs = torch.fft.rfft(signal[:512]), torch.fft.rfftfreq(512, d=1.0 / sr)
peak = X.abs().argmax()
print("rfft", X.shape, X.dtype, int(peak), f"{freqs[peak].item():.2f}")
x_back = torch.fft.irfft(X, n=512)
print("irfft", x_back.shape, torch.allclose(x_back, signal[:512], atol=1e-5))
f8 = torch.fft.fftfreq(8)
print("shift", torch.fft.fftshift(f8), torch.fft.ifftshift(torch.fft.fftshift(f8)))
print("fft ortho", torch.fft.fft(torch.arange(4.0), norm="ortho"), torch.fft.hfft(X[:5]).shape)


# ---- a spectral loss with autograd through stft
target = torch.stft(chirp(300.0, 1200.0), 128, 32, window=torch.hann_window(128),
                    return_complex=True).abs()
est = (signal * 0.5).requires_grad_()
mag_est = torch.stft(est, 128, 32, window=torch.hann_window(128), return_complex=True).abs()
sc = torch.linalg.norm(target - mag_est) / torch.linalg.norm(target)
log_mag = F.l1_loss(torch.log(mag_est + 1e-2), torch.log(target + 1e-2))
(sc + log_mag).backward()
print("spectral loss", f"{sc.item():.4f}", f"{log_mag.item():.4f}", est.grad.shape,
      f"{est.grad.abs().sum().item():.3f}")

# ---- Griffin-Lim phase recovery from a magnitude
mag_t = spec.abs()
angles = torch.polar(torch.ones_like(mag_t), 2 * math.pi * torch.rand(mag_t.shape, generator=gen))
for it in range(3):
    y = torch.istft(mag_t * angles, 256, hop_length=64, window=win, length=n)
    rebuilt = torch.stft(y, 256, hop_length=64, window=win, return_complex=True)
    angles = torch.exp(1j * rebuilt.angle())
    print(f"griffin-lim {it} {torch.linalg.norm(rebuilt.abs() - mag_t).item():.2f}")

# ---- interpolation and resampling
short = signal[:16].view(1, 1, -1)
for kw in [dict(size=24, mode="linear", align_corners=True), dict(size=24, mode="linear"),
           dict(scale_factor=1.5, mode="nearest"), dict(scale_factor=0.75, mode="nearest-exact"),
           dict(scale_factor=2, mode="linear", align_corners=False),
           dict(size=6, mode="area"), dict(scale_factor=1.7, mode="linear",
                                            recompute_scale_factor=True)]:
    out = F.interpolate(short, **kw)
    print("interp", kw["mode"], out.shape, out[0, 0, :3])

taps, cutoff = torch.arange(-16, 17, dtype=torch.float32), 0.5
sinc = cutoff * torch.sinc(cutoff * taps) * torch.hann_window(33, periodic=False)
sinc = sinc / sinc.sum()
down2 = F.conv1d(signal.view(1, 1, -1), sinc.view(1, 1, -1), stride=2, padding=16)
print("resample", down2.shape, down2[0, 0, 100:103])

# ---- SpecAugment
aug = logmel.clone()
g2 = torch.Generator().manual_seed(7)
f0 = int(torch.randint(0, n_mels - 4, (1,), generator=g2))
t0 = int(torch.randint(0, aug.shape[1] - 6, (1,), generator=g2))
fmask = torch.zeros(n_mels, 1, dtype=torch.bool)
fmask[f0:f0 + 4] = True
tmask = (torch.arange(aug.shape[1]) >= t0) & (torch.arange(aug.shape[1]) < t0 + 6)
aug = aug.masked_fill(fmask, 0.0).masked_fill(tmask, aug.mean())
print("specaugment", f0, t0, int((aug == 0).sum()), f"{aug.mean().item():.4f}")


# ---- keyword classifier
def make_example(label, g):
    base = [(300.0, 900.0), (1000.0, 400.0), (600.0, 600.0)][label]
    x = chirp(*base, amp=0.4) + 0.1 * torch.randn(n, generator=g)
    s = torch.stft(x, 256, 128, window=win, return_complex=True).abs().pow(2)
    return (fb.T @ s).clamp(min=1e-10).log10()


g3 = torch.Generator().manual_seed(3)
labels = torch.tensor([0, 1, 2] * 4)
feats = torch.stack([make_example(int(c), g3) for c in labels])
feats = (feats - feats.mean()) / feats.std()
print("features", feats.shape, feats.dtype)


class KWS(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv2d = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(4)
        self.conv1d = nn.Conv1d(4 * n_mels, 16, kernel_size=3, padding="same")
        self.bn1 = nn.BatchNorm1d(16)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.pool2 = nn.AdaptiveAvgPool2d((n_mels, None))
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        h = F.relu(self.bn2(self.conv2d(x.unsqueeze(1))))
        h = self.pool2(h).flatten(1, 2)
        h = F.relu(self.bn1(self.conv1d(h)))
        return self.head(self.drop(self.pool(h).squeeze(-1)))


model = KWS()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(6):
    opt.zero_grad()
    loss = F.cross_entropy(model(feats), labels)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
model.eval()
with torch.no_grad():
    pred = model(feats).argmax(1)
print("pred", pred.tolist(), "acc", f"{(pred == labels).float().mean().item():.4f}")

# ---- mistakes
mistakes = [
    ("stft without return_complex", lambda: torch.stft(signal, 256, window=win)),
    ("wrong window length", lambda: torch.stft(signal, 256, window=wins["hann"][:200],
                                               return_complex=True)),
    ("istft of real", lambda: torch.istft(spec.abs(), 256, window=win)),
    ("n_fft too large", lambda: torch.stft(signal[:100], 512, center=False, return_complex=True)),
    ("reflect pad too large", lambda: F.pad(torch.randn(1, 1, 4), (4, 4), mode="reflect")),
    ("view_as_complex", lambda: torch.view_as_complex(torch.randn(3, 3))),
    ("size and scale", lambda: F.interpolate(short, size=8, scale_factor=2.0)),
    ("negative window", lambda: torch.hann_window(-1)),
    ("polar of ints", lambda: torch.polar(torch.tensor([1]), torch.tensor([0]))),
    ("relu of complex", lambda: F.relu(spec)),
    ("histogram of complex", lambda: torch.histc(spec)),
    ("double input to LayerNorm", lambda: nn.LayerNorm(17)(feats.double())),
    ("complex linspace as float", lambda: torch.linspace(0, 1j, 4, dtype=torch.float32)),
    ("stft with return_complex=False", lambda: torch.stft(signal[:512], 64, window=win[:64],
                                                          return_complex=False).shape),
    ("istft NOLA", lambda: torch.istft(spec_nc, 256, 128, window=win, center=False)),
    ("complex to real", lambda: torch.zeros(2).copy_(w1)),
]
for what, fn in mistakes:
    try:
        fn()
        print(what, "no error")
    except Exception as e:
        print(what, type(e).__name__, str(e).splitlines()[0])
