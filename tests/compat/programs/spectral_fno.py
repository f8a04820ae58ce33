"""A Fourier neural operator layer (FNO-style spectral convolution with torch.fft.rfft /
irfft) learning a smoothing operator on random 1-D signals."""

import math

import torch
from torch import nn, optim

torch.manual_seed(3)


class SpectralConv1d(nn.Module):
    """Multiply the lowest `modes` Fourier coefficients by learned complex weights."""

    def __init__(self, channels: int, modes: int):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (channels * channels)
        self.w_re = nn.Parameter(scale * torch.rand(channels, channels, modes))
        self.w_im = nn.Parameter(scale * torch.rand(channels, channels, modes))

    def forward(self, x):
        n = x.shape[-1]
        x_ft = torch.fft.rfft(x)
        w = torch.complex(self.w_re, self.w_im)
        low = torch.einsum("bix,iox->box", x_ft[:, :, :self.modes], w)
        out_ft = torch.cat([low, torch.zeros_like(x_ft[:, :, self.modes:])], dim=-1)
        return torch.fft.irfft(out_ft, n=n)


class FNO(nn.Module):
    def __init__(self, width=8, modes=6):
        super().__init__()
        self.lift = nn.Linear(1, width)
        self.spectral = SpectralConv1d(width, modes)
        self.pointwise = nn.Conv1d(width, width, 1)
        self.project = nn.Linear(width, 1)

    def forward(self, u):  # u: (batch, n)
        h = self.lift(u.unsqueeze(-1)).permute(0, 2, 1)
        h = torch.nn.functional.gelu(self.spectral(h) + self.pointwise(h))
        return self.project(h.permute(0, 2, 1)).squeeze(-1)


n = 32
grid = torch.linspace(0, 1, n)
coeffs = torch.randn(64, 4)
u = sum(coeffs[:, k:k + 1] * torch.sin(2 * math.pi * (k + 1) * grid) for k in range(4))
u = u + 0.3 * torch.randn(64, n)
# target: a low-pass filter of u, computed with the FFT helpers
freqs = torch.fft.rfftfreq(n, d=1.0 / n)
target = torch.fft.irfft(torch.fft.rfft(u) * torch.exp(-(freqs / 3.0) ** 2), n=n)
print(u.shape, target.shape, freqs[:5], torch.fft.fftshift(torch.fft.fftfreq(6)))
spectrum = torch.fft.fft(u[0])
print("energy", (spectrum.abs() ** 2).sum() / n, (u[0] ** 2).sum())
print("ortho round trip", torch.fft.ifft(torch.fft.fft(u[:2], norm="ortho"), norm="ortho").real
      .sub(u[:2]).abs().max() < 1e-5)

model = FNO()
opt = optim.Adam(model.parameters(), lr=5e-3)
for it in range(40):
    loss = ((model(u) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 8 == 0 or it == 39:
        print(f"iter {it:2d}  mse {loss.item():.5f}  grad |w_re| "
              f"{model.spectral.w_re.grad.abs().sum().item():.4f}")

with torch.no_grad():
    pred = model(u[:2])
    print("prediction", pred[:, :6])
    print("target    ", target[:2, :6])
    img = torch.fft.fft2(u[:8].reshape(8, 4, 8))
    print(img.shape, img.dtype, torch.fft.irfft2(torch.fft.rfft2(u[:4])).sub(u[:4]).abs().max()
          < 1e-5)
