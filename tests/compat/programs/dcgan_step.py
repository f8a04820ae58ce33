"""DCGAN on 16x16 toy images (bright rings): a generator of ConvTranspose2d + BatchNorm2d +
ReLU layers and a discriminator of strided Conv2d + LeakyReLU, initialised with the DCGAN
recipe (weights_init via Module.apply) and trained with alternating Adam steps on BCE."""

import torch
import torch.nn as nn

torch.manual_seed(0)
NZ, NGF, NDF = 8, 8, 8


def real_batch(n: int):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16),
                            indexing="ij")
    radius = torch.rand(n, 1, 1) * 0.4 + 0.4
    ring = torch.exp(-((xx.pow(2) + yy.pow(2)).sqrt() - radius).pow(2) / 0.02)
    return (ring * 2 - 1).unsqueeze(1)


def weights_init(m):
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif name.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


generator = nn.Sequential(
    nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
    nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2),
    nn.ReLU(True),
    nn.ConvTranspose2d(NGF * 2, 1, 4, 2, 1, bias=False), nn.Tanh())
discriminator = nn.Sequential(
    nn.Conv2d(1, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 2),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())
generator.apply(weights_init)
discriminator.apply(weights_init)
print(generator)
print(discriminator)

criterion = nn.BCELoss()
fixed_noise = torch.randn(4, NZ, 1, 1)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for step in range(1, 41):
    real = real_batch(16)
    # (1) discriminator: maximise log D(x) + log(1 - D(G(z)))
    discriminator.zero_grad()
    label = torch.full((16,), real_label)
    out = discriminator(real).view(-1)
    err_real = criterion(out, label)
    err_real.backward()
    d_x = out.mean().item()
    fake = generator(torch.randn(16, NZ, 1, 1))
    label.fill_(fake_label)
    out = discriminator(fake.detach()).view(-1)
    err_fake = criterion(out, label)
    err_fake.backward()
    opt_d.step()
    # (2) generator: maximise log D(G(z))
    generator.zero_grad()
    label.fill_(real_label)
    out = discriminator(fake).view(-1)
    err_g = criterion(out, label)
    err_g.backward()
    opt_g.step()
    if step % 5 == 0:
        print(f"[{step:2d}] loss_D {(err_real + err_fake).item():.4f} loss_G {err_g.item():.4f} "
              f"D(x) {d_x:.4f} D(G(z)) {out.mean().item():.4f}")

with torch.no_grad():
    samples = generator(fixed_noise)
print(samples.shape, f"{samples.mean().item():.4f} {samples.std().item():.4f}")
print(samples[0, 0, 6:10, 6:10])
