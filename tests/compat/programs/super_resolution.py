"""Super-resolution on a toy: smooth synthetic 16x16 images are shrunk to 8x8; a network
upsamples them with bicubic interpolation and learns a residual correction with two
convolutions (the SRCNN recipe), compared with plain bicubic and bilinear upsampling."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_images(n: int):
    """Sums of a few random sinusoids: smooth, so upsampling can recover most detail."""
    coords = torch.linspace(0, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    images = torch.zeros(n, 1, 16, 16)
    for _ in range(3):
        fx, fy = torch.rand(n, 1, 1, 1) * 4, torch.rand(n, 1, 1, 1) * 4
        phase = torch.rand(n, 1, 1, 1) * 6.28
        images += torch.sin(fx * xx * 6.28 + fy * yy * 6.28 + phase) / 3
    return images


def psnr(a, b):
    return 10 * math.log10(4.0 / F.mse_loss(a, b).item())  # the images span [-1, 1]


class SRNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="bicubic", align_corners=False)
        self.body = nn.Sequential(nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(),
                                  nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        up = self.up(x)
        return up + self.body(up)


high = make_images(48)
low = F.interpolate(high, scale_factor=0.5, mode="bicubic", align_corners=False)
print(high.shape, low.shape, f"{high.std().item():.4f} {low.std().item():.4f}")
for mode, align in (("bicubic", False), ("bicubic", True), ("bilinear", False)):
    up = F.interpolate(low, size=(16, 16), mode=mode, align_corners=align)
    print(f"{mode:8s} align_corners={align!s:5s} psnr {psnr(up, high):.3f} dB")
print(F.interpolate(torch.arange(4.0).view(1, 1, 2, 2), scale_factor=2, mode="bicubic"))

model = SRNet()
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(1, 41):
    optimizer.zero_grad()
    loss = F.mse_loss(model(low), high)
    loss.backward()
    optimizer.step()
    if epoch % 8 == 0:
        print(f"epoch {epoch:2d} mse {loss.item():.6f} psnr {psnr(model(low).detach(), high):.3f}")

# the gradient flows through the bicubic upsampling back to the low-resolution input
x = low[:1].clone().requires_grad_()
model(x).sum().backward()
print(x.grad.shape, f"{x.grad.abs().mean().item():.5f}")
