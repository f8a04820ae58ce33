"""A variational autoencoder on synthetic data: a Normal posterior sampled with rsample, a
Bernoulli decoder, and the KL term from torch.distributions.kl_divergence."""

import torch
from torch import nn, optim
from torch.distributions import Bernoulli, Independent, Normal, kl_divergence

torch.manual_seed(0)

# 8x8 binary "images": a horizontal or vertical bar at a random position, with pixel noise
n, side = 256, 8
rows = torch.randint(0, side, (n,))
vertical = torch.rand(n) < 0.5
images = torch.zeros(n, side, side)
for i in range(n):
    if vertical[i]:
        images[i, :, rows[i]] = 1.0
    else:
        images[i, rows[i], :] = 1.0
flip = torch.rand(n, side, side) < 0.03
data = torch.where(flip, 1.0 - images, images).reshape(n, -1)
print(data.shape, data.mean().item(), vertical.sum().item())


class VAE(nn.Module):
    def __init__(self, d_in=64, hidden=32, latent=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh())
        self.mu = nn.Linear(hidden, latent)
        self.log_sigma = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.Tanh(), nn.Linear(hidden, d_in))

    def posterior(self, x):
        h = self.enc(x)
        return Normal(self.mu(h), self.log_sigma(h).exp())

    def forward(self, x):
        q = self.posterior(x)
        z = q.rsample()
        p_x = Independent(Bernoulli(logits=self.dec(z)), 1)
        prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
        recon = p_x.log_prob(x)
        kl = kl_divergence(q, prior).sum(-1)
        return -(recon - kl).mean(), recon.mean(), kl.mean()


model = VAE()
opt = optim.Adam(model.parameters(), lr=1e-2)
print(model.posterior(data[:2]))
for step in range(60):
    batch = data[(step * 32) % n:(step * 32) % n + 32]
    loss, recon, kl = model(batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 59:
        print(f"step {step:2d}  -elbo {loss.item():.4f}  recon {recon.item():.4f}  "
              f"kl {kl.item():.4f}")

with torch.no_grad():
    q = model.posterior(data[:4])
    print("posterior mean", q.mean)
    print("posterior std", q.stddev)
    print("entropy", q.entropy().sum(-1))
    z = Normal(0.0, 1.0).sample((3, 2))
    print("prior samples", z)
    probs = torch.sigmoid(model.dec(z))
    print("decoded rows", probs.reshape(3, side, side).sum(-1).round(decimals=2))
    x = Bernoulli(probs=probs).sample()
    print("decoded sample pixels on", x.sum(-1))
    print("log p(x|z)", Independent(Bernoulli(probs=probs), 1).log_prob(x))
