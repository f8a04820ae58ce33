"""Cellular automata on grids: Conway's Game of Life by convolution, a Lenia-like continuous
automaton convolved by FFT, and a small Growing Neural Cellular Automaton (Mordvintsev et
al. 2020) trained with a sample pool, damage and per-parameter gradient normalisation."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

# ---------------------------------------------------------------- Game of Life
NEIGHBOURS = torch.ones(1, 1, 3, 3)
NEIGHBOURS[0, 0, 1, 1] = 0


def life_step(board: torch.Tensor) -> torch.Tensor:
    """One generation on a torus: count the 8 neighbours with a 3x3 conv."""
    x = board.float()[None, None]
    x = F.pad(x, (1, 1, 1, 1), mode="circular")
    counts = F.conv2d(x, NEIGHBOURS)[0, 0].round().to(torch.uint8)
    alive = board.bool()
    born = torch.logical_and(~alive, counts == 3)
    survive = alive & ((counts == 2) | (counts == 3))
    return torch.logical_or(born, survive).to(torch.uint8)


board = torch.zeros(10, 10, dtype=torch.uint8)
glider = torch.tensor([[0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=torch.uint8)
board[1:4, 1:4] = glider
print("board", board.shape, board.dtype, "alive", int(board.sum()))
start = board.clone()
state = board
period = None
for gen in range(1, 60):
    state = life_step(state)
    shifted = torch.roll(start, shifts=(gen // 4, gen // 4), dims=(0, 1))
    if gen % 4 == 0 and torch.equal(state, shifted):
        period = gen
        break
print("glider period", period, "displacement", (period // 4, period // 4))
print("alive after", period, "gens:", state.sum().item(), state.nonzero()[:3].tolist())

# blinker oscillates with period 2, block is still
osc = torch.zeros(6, 6, dtype=torch.uint8)
osc[2, 1:4] = 1
two = life_step(life_step(osc))
print("blinker period 2:", torch.equal(two, osc), "one step:", life_step(osc)[1:4, 2].tolist())
rng = torch.Generator().manual_seed(7)
soup = (torch.rand(16, 16, generator=rng) < 0.35).to(torch.uint8)
history = []
for _ in range(30):
    history.append(int(soup.sum()))
    soup = life_step(soup)
print("soup population", history[:10], "...", history[-3:])
print("soup bool any/all", soup.bool().any().item(), soup.bool().all().item(),
      "xor with shifted", (soup.bool() ^ soup.roll(1, 0).bool()).sum().item())
batch = torch.stack([board, osc.repeat(2, 2)[:10, :10]]).float().unsqueeze(1)
counts = F.conv2d(F.pad(batch, (1, 1, 1, 1), mode="circular"), NEIGHBOURS)
print("batched counts", counts.shape, counts.sum(dim=(1, 2, 3)).tolist(),
      counts.max().item(), counts.dtype)

# ---------------------------------------------------------------- Lenia
N = 32
R = 5.0
ys, xs = torch.meshgrid(torch.arange(N), torch.arange(N), indexing="ij")
dist = torch.sqrt((ys - N // 2).float() ** 2 + (xs - N // 2).float() ** 2) / R
ring = torch.exp(-((dist - 0.5) ** 2) / (2 * 0.15 ** 2)) * (dist < 1)
ring = ring / ring.sum()
print("kernel", ring.shape, f"max {ring.max().item():.5f} sum {ring.sum().item():.5f}",
      f"centre {ring[N // 2, N // 2].item():.5f}")
kernel_ft = torch.fft.rfft2(torch.fft.fftshift(ring))
print("kernel_ft", kernel_ft.shape, kernel_ft.dtype, f"dc {kernel_ft[0, 0].real.item():.5f}")


def growth(u: torch.Tensor, mu: float = 0.15, sigma: float = 0.05) -> torch.Tensor:
    return 2.0 * torch.exp(-((u - mu) ** 2) / (2 * sigma ** 2)) - 1.0


world = torch.zeros(N, N)
world[10:22, 10:22] = torch.rand(12, 12)
dt = 0.1
masses = []
for step in range(30):
    potential = torch.fft.irfft2(torch.fft.rfft2(world) * kernel_ft, s=world.shape)
    world = torch.clamp(world + dt * growth(potential), 0.0, 1.0)
    if step % 10 == 9:
        masses.append(round(world.sum().item(), 3))
print("lenia mass", masses, f"potential range {potential.min().item():.4f}"
      f" {potential.max().item():.4f}")
# the FFT convolution equals a circular spatial conv with the flipped kernel
# (the ring is symmetric about N // 2, so correlation and convolution agree)
direct = F.conv2d(F.pad(world[None, None], (N // 2, N // 2 - 1, N // 2, N // 2 - 1),
                        mode="circular"), ring[None, None])[0, 0]
viafft = torch.fft.irfft2(torch.fft.rfft2(world) * kernel_ft, s=world.shape)
print("fft == circular conv:", torch.allclose(direct, viafft, atol=1e-5),
      f"mean {viafft.mean().item():.5f}")
spectrum = torch.fft.fftshift(torch.fft.fft2(world).abs())
print("centred spectrum", spectrum[N // 2, N // 2 - 2:N // 2 + 3])

# ---------------------------------------------------------------- Growing NCA
CHANNELS = 16
SIZE = 16
HIDDEN = 64


def make_target(size: int) -> torch.Tensor:
    """A soft RGBA disk with a colour gradient, premultiplied alpha."""
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size),
                            indexing="xy")
    r = torch.sqrt(xx ** 2 + yy ** 2)
    alpha = torch.clamp(1.5 - 2.0 * r, 0.0, 1.0)
    rgb = torch.stack([0.5 + 0.5 * xx, 0.5 + 0.5 * yy, 0.5 - 0.25 * (xx + yy)])
    return torch.cat([rgb.clamp(0, 1) * alpha, alpha[None]])


class GrowingCA(nn.Module):
    def __init__(self, channels: int = CHANNELS, hidden: int = HIDDEN, fire_rate: float = 0.5):
        super().__init__()
        self.channels = channels
        self.fire_rate = fire_rate
        ident = torch.tensor([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
        sobel_x = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8.0
        kernels = torch.stack([ident, sobel_x, sobel_x.T])  # (3, 3, 3)
        self.register_buffer("perception", kernels.repeat(channels, 1, 1)[:, None])
        self.update = nn.Sequential(
            nn.Conv2d(3 * channels, hidden, 1),
            nn.ReLU(),
            nn.Conv2d(hidden, channels, 1, bias=False),
        )
        nn.init.zeros_(self.update[2].weight)

    def perceive(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(F.pad(x, (1, 1, 1, 1), mode="circular"), self.perception,
                        groups=self.channels)

    def alive(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x[:, 3:4], kernel_size=3, stride=1, padding=1) > 0.1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pre = self.alive(x)
        dx = self.update(self.perceive(x))
        mask = (torch.rand(x.shape[0], 1, x.shape[2], x.shape[3]) < self.fire_rate).float()
        x = x + dx * mask
        post = self.alive(x)
        return x * (pre & post).float()


def seed_state(n: int) -> torch.Tensor:
    x = torch.zeros(n, CHANNELS, SIZE, SIZE)
    x[:, 3:, SIZE // 2, SIZE // 2] = 1.0
    return x


def run_steps(ca: nn.Module, x: torch.Tensor, steps: int) -> torch.Tensor:
    for _ in range(steps):
        x = ca(x)
    return x


def render(alpha: torch.Tensor) -> str:
    chars = " .:-=+*#%@"
    idx = (alpha.clamp(0, 1) * (len(chars) - 1)).round().long()
    return "\n".join("".join(chars[i] for i in row.tolist()) for row in idx)


def damage(x: torch.Tensor, n: int) -> torch.Tensor:
    """Zero a random disk in the first n samples."""
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, SIZE), torch.linspace(-1, 1, SIZE),
                            indexing="ij")
    centre = torch.rand(n, 2, 1, 1) * 1.0 - 0.5
    r = torch.rand(n, 1, 1) * 0.2 + 0.2
    inside = ((yy - centre[:, 0]) ** 2 + (xx - centre[:, 1]) ** 2) < r ** 2
    x = x.clone()
    x[:n] *= (~inside).float()[:, None]
    return x


target = make_target(SIZE)
print("target", target.shape, f"alpha sum {target[3].sum().item():.4f}",
      f"rgb mean {target[:3].mean().item():.5f}")
ca = GrowingCA()
print("perception", ca.perception.shape, "params", sum(p.numel() for p in ca.parameters()),
      "zero last", ca.update[2].weight.abs().sum().item())
print(ca.update)
x0 = seed_state(2)
p = ca.perceive(x0)
print("perceive", p.shape, p[0, :6, SIZE // 2, SIZE // 2 - 1:SIZE // 2 + 2].tolist())
print("alive cells at seed", ca.alive(x0).sum().item(), ca.alive(x0).dtype)

opt = torch.optim.Adam(ca.parameters(), lr=2e-3)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[8, 14], gamma=0.3)
POOL = 16
BATCH = 4
pool = seed_state(POOL)
for it in range(18):
    idx = torch.randint(0, POOL, (BATCH,))
    x = pool[idx]
    with torch.no_grad():
        loss_rank = F.mse_loss(x[:, :4], target.expand(BATCH, -1, -1, -1),
                               reduction="none").mean(dim=(1, 2, 3))
        order = loss_rank.argsort(descending=True)
        idx, x = idx[order], x[order]
        x[:1] = seed_state(1)
        if it >= 10:
            x = damage(x, 1)
    steps = 8 + int(torch.randint(0, 5, ()).item())
    x = x.contiguous(memory_format=torch.channels_last)
    if it % 2 == 0:
        x = checkpoint(run_steps, ca, x, steps, use_reentrant=False)
    else:
        x = run_steps(ca, x, steps)
    loss = F.mse_loss(x[:, :4], target.expand(BATCH, -1, -1, -1))
    opt.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in ca.parameters():
            param.grad /= param.grad.norm() + 1e-8
    total = torch.nn.utils.clip_grad_norm_(ca.parameters(), max_norm=5.0)
    opt.step()
    sched.step()
    pool[idx] = x.detach()
    if it % 3 == 0 or it == 17:
        print(f"it {it:2d} steps {steps:2d} loss {loss.item():.5f} gradnorm {total.item():.4f} "
              f"lr {sched.get_last_lr()[0]:.6f} grad_fn {loss.grad_fn.name()}")

print("last layer nonzero", (ca.update[2].weight != 0).sum().item(),
      f"weight norm {ca.update[2].weight.norm().item():.5f}")
print(f"pool alive fraction {ca.alive(pool).float().mean().item():.3f}",
      f"pool alpha mean {pool[:, 3].mean().item():.4f}")
print("state layout channels_last", x.is_contiguous(memory_format=torch.channels_last),
      x.stride())
with torch.no_grad():
    torch.manual_seed(123)
    grown = run_steps(ca, seed_state(1), 20)
    print("grown", f"alpha max {grown[0, 3].max().item():.4f}",
          f"rgba mse {F.mse_loss(grown[0, :4], target).item():.4f}",
          "requires_grad", grown.requires_grad)
    print(render(grown[0, 3]))
    print(render(target[3]))

# ---------------------------------------------------------------- typical mistakes
state16 = torch.zeros(1, CHANNELS, 8, 8)
try:
    F.conv2d(state16, torch.zeros(15, 3, 3, 3), groups=5)
except RuntimeError as e:
    print("groups mismatch:", type(e).__name__, e)
try:
    F.conv2d(state16, torch.zeros(16, 1, 3, 3), groups=3)
except RuntimeError as e:
    print("groups not dividing:", type(e).__name__, e)
try:
    F.pad(torch.zeros(1, 1, 3, 3), (4, 4, 4, 4), mode="circular")
except (RuntimeError, ValueError) as e:
    print("circular pad too large:", type(e).__name__, e)
leaf = torch.zeros(2, 2, requires_grad=True)
try:
    leaf += 1.0
except RuntimeError as e:
    print("in-place on leaf:", type(e).__name__, e)
with torch.no_grad():
    leaf += 1.0
print("no_grad in-place ok", leaf.sum().item(), leaf.is_leaf, leaf.requires_grad)
print(f"done pi check {math.pi:.4f}")
