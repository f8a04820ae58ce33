"""A tiny capsule network (Sabour et al.'s CapsNet) on synthetic 12x12 digit-like glyphs drawn
with torch ops: primary capsules from a Conv2d reshaped with view / permute / contiguous, the
squash non-linearity, prediction vectors from a 5-d weight by broadcasting matmul and by einsum,
dynamic routing by agreement (3 iterations, u_hat detached in all but the last), an EM-routing
lite with logsumexp, the margin loss (one_hot and scatter_), a reconstruction decoder masked by
the longest capsule (index_select / gather / masked_fill / eye indexing), a few Adam steps with
clip_grad_norm_, evaluation under no_grad, grad_fn chains, gradcheck in float64, vmap / jacrev,
and typical mistakes with their messages."""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import gradcheck
from torch.func import jacrev, vmap

torch.manual_seed(0)
N_CLASSES, SIDE = 4, 12


def fmt(t, digits=4):
    return [round(v, digits) for v in t.flatten().tolist()]


# -- data: four glyphs ("0", "1", "7", "L") drawn with torch ops, shifted and noised ------------
def glyph_templates():
    """Four 12x12 strokes: a ring, a bar, a seven and an L."""
    rows = torch.arange(SIDE).view(-1, 1).float()
    cols = torch.arange(SIDE).view(1, -1).float()
    radius = ((rows - 5.5) ** 2 + (cols - 5.5) ** 2).sqrt()
    ring = ((radius > 2.5) & (radius < 4.0)).float()
    bar = torch.zeros(SIDE, SIDE)
    bar[2:10, 5:7] = 1.0
    seven = torch.zeros(SIDE, SIDE)
    seven[2, 3:10] = 1.0
    diag = torch.arange(3, 10)
    seven[diag, 12 - diag] = 1.0
    ell = torch.zeros(SIDE, SIDE)
    ell[2:10, 3] = 1.0
    ell[9, 3:9] = 1.0
    return torch.stack([ring, bar, seven, ell])


def make_glyphs(n, templates):
    labels = torch.randint(0, N_CLASSES, (n,))
    images = templates[labels].clone()
    shifts = torch.randint(-1, 2, (n, 2))
    for i in range(n):
        images[i] = torch.roll(images[i], shifts=(int(shifts[i, 0]), int(shifts[i, 1])),
                               dims=(0, 1))
    images = (images + 0.15 * torch.randn_like(images)).clamp(0.0, 1.0)
    return images.unsqueeze(1), labels


templates = glyph_templates()
print("template ink:", templates.sum(dim=(1, 2)).tolist())
train_x, train_y = make_glyphs(96, templates)
test_x, test_y = make_glyphs(32, templates)
print(train_x.shape, train_x.dtype, train_y[:12].tolist(), torch.bincount(train_y).tolist())
print(f"pixel mean {train_x.mean().item():.5f} std {train_x.std().item():.5f}")


# -- squash and routing ------------------------------------------------------------------------
def squash(s, dim=-1, eps=1e-8):
    """Shrink short vectors towards 0 and long ones to just under length 1."""
    norm = s.norm(dim=dim, keepdim=True)
    sq = norm**2
    return (sq / (1.0 + sq)) * s / (norm + eps)


def route(u_hat, iterations=3):
    """Dynamic routing by agreement: u_hat (B, in, out, d) -> v (B, out, d)."""
    b = torch.zeros(*u_hat.shape[:3], 1, dtype=u_hat.dtype)
    u_detached = u_hat.detach()
    for it in range(iterations):
        c = F.softmax(b, dim=2)
        last = it == iterations - 1
        u = u_hat if last else u_detached
        s = (c * u).sum(dim=1, keepdim=True)  # (B, 1, out, d)
        v = squash(s)
        if not last:
            agreement = (u.unsqueeze(-2) @ v.unsqueeze(-1)).squeeze(-1)  # (B, in, out, 1)
            b = b + agreement
    return v.squeeze(1), c


def route_one(u_hat, iterations=3):
    """The same routing written for one example (in, out, d), for vmap."""
    b = torch.zeros(u_hat.shape[0], u_hat.shape[1], 1, dtype=u_hat.dtype)
    for it in range(iterations):
        c = torch.softmax(b, dim=1)
        s = (c * u_hat).sum(dim=0)
        v = squash(s)
        if it < iterations - 1:
            b = b + (u_hat * v).sum(dim=-1, keepdim=True)
    return v


def em_route_lite(u_hat, iterations=2, sigma=0.5):
    """A soft-clustering routing in log space: responsibilities from Gaussian agreement."""
    n_in, n_out = u_hat.shape[1], u_hat.shape[2]
    log_r = torch.full(u_hat.shape[:3], -torch.log(torch.tensor(float(n_out))).item())
    for _ in range(iterations):
        r = log_r.exp().unsqueeze(-1)
        mu = (r * u_hat).sum(dim=1, keepdim=True) / r.sum(dim=1, keepdim=True)
        log_p = -0.5 * ((u_hat - mu) ** 2).sum(dim=-1) / sigma**2
        log_a = torch.logsumexp(log_r, dim=1, keepdim=True) - torch.log(torch.tensor(n_in * 1.0))
        logits = log_p + log_a
        log_r = logits - torch.logsumexp(logits, dim=2, keepdim=True)
    return mu.squeeze(1), log_a.squeeze(1).exp()


# -- the network -------------------------------------------------------------------------------
class CapsNet(nn.Module):
    def __init__(self, caps_types=4, caps_dim=4, out_dim=8):
        super().__init__()
        self.caps_types, self.caps_dim = caps_types, caps_dim
        self.conv1 = nn.Conv2d(1, 12, kernel_size=3)  # 12 -> 10
        self.primary = nn.Conv2d(12, caps_types * caps_dim, kernel_size=3, stride=2)  # -> 4
        self.n_in = caps_types * 4 * 4
        self.W = nn.Parameter(0.3 * torch.randn(1, self.n_in, N_CLASSES, out_dim, caps_dim))
        self.decoder = nn.Sequential(
            nn.Linear(N_CLASSES * out_dim, 48), nn.ReLU(), nn.Linear(48, SIDE * SIDE), nn.Sigmoid()
        )

    def primary_caps(self, x):
        h = self.primary(F.relu(self.conv1(x)))  # (B, types*dim, 4, 4)
        B, _, H, W = h.shape
        h = h.view(B, self.caps_types, self.caps_dim, H, W).permute(0, 1, 3, 4, 2)
        return squash(h.contiguous().view(B, -1, self.caps_dim))

    def predictions(self, u):
        return (self.W @ u[:, :, None, :, None]).squeeze(-1)  # (B, in, out, d_out)

    def forward(self, x, labels=None):
        u = self.primary_caps(x)
        v, c = route(self.predictions(u))
        lengths = v.norm(dim=-1)
        chosen = lengths.argmax(dim=1) if labels is None else labels
        mask = torch.eye(N_CLASSES)[chosen]  # (B, out): eye indexing
        recon = self.decoder((v * mask.unsqueeze(-1)).flatten(1))
        return v, lengths, recon, c


def margin_loss(lengths, labels, m_plus=0.9, m_minus=0.1, lam=0.5):
    T = F.one_hot(labels, N_CLASSES).float()
    present = T * F.relu(m_plus - lengths).pow(2)
    absent = lam * (1.0 - T) * F.relu(lengths - m_minus).pow(2)
    return (present + absent).sum(dim=1).mean()


model = CapsNet()
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()),
      [tuple(p.shape) for p in model.parameters()][:3])

# -- shapes and the two ways of computing u_hat -------------------------------------------------
x = train_x[:5]
u = model.primary_caps(x)
print("primary caps", tuple(u.shape), "lengths", fmt(u.norm(dim=-1)[0, :6]))
u_hat = model.predictions(u)
u_hat_e = torch.einsum("iodk,bik->biod", model.W[0], u)
print("u_hat", tuple(u_hat.shape), "einsum equal:", torch.allclose(u_hat, u_hat_e, atol=1e-6))
print(f"u_hat[0, 0, 0] {fmt(u_hat[0, 0, 0])}")
v, c = route(u_hat)
print("v", tuple(v.shape), "c", tuple(c.shape), "c sums to 1:",
      torch.allclose(c.sum(dim=2), torch.ones(5, model.n_in, 1)))
print("lengths", v.norm(dim=-1))
print(f"coupling range {c.min().item():.5f} .. {c.max().item():.5f}")

# -- grad_fn chain of the routing output --------------------------------------------------------
chain, fn = [], v.grad_fn
while fn is not None and len(chain) < 8:
    chain.append(type(fn).__name__)
    fn = fn.next_functions[0][0] if fn.next_functions else None
print("chain:", " <- ".join(chain))
print("requires_grad", v.requires_grad, "is_leaf", v.is_leaf, "u_hat.detach leaf",
      u_hat.detach().is_leaf)

# -- margin loss via one_hot and via scatter_ ----------------------------------------------------
labels = train_y[:5]
lengths = v.norm(dim=-1)
T = torch.zeros(5, N_CLASSES).scatter_(1, labels.unsqueeze(1), 1.0)
print("one_hot == scatter_:", torch.equal(T, F.one_hot(labels, N_CLASSES).float()))
print(f"margin loss {margin_loss(lengths, labels).item():.5f}")

# -- masking by the longest capsule, four ways ---------------------------------------------------
pred = lengths.argmax(dim=1)
by_eye = (v * torch.eye(N_CLASSES)[pred].unsqueeze(-1)).sum(dim=1)
by_gather = v.gather(1, pred.view(-1, 1, 1).expand(-1, 1, v.shape[-1])).squeeze(1)
by_index = torch.stack([v[i].index_select(0, pred[i:i + 1]).squeeze(0) for i in range(5)])
keep = F.one_hot(pred, N_CLASSES).bool().unsqueeze(-1)
by_fill = v.masked_fill(~keep, 0.0).sum(dim=1)
print("pred", pred.tolist(), "masks agree:", torch.equal(by_eye, by_gather),
      torch.equal(by_gather, by_index), torch.equal(by_index, by_fill))
print(f"selected capsule 0: {fmt(by_gather[0])}")

# -- EM-routing lite ---------------------------------------------------------------------------
with torch.no_grad():
    mu, act = em_route_lite(u_hat)
print("em poses", tuple(mu.shape), "activations", act)
print(f"em pose norm {mu.norm(dim=-1)[0].tolist()[0]:.5f}")

# -- training ----------------------------------------------------------------------------------
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(1, 31):
    idx = torch.randperm(len(train_x))[:32]
    xb, yb = train_x[idx], train_y[idx]
    optimizer.zero_grad()
    v, lengths, recon, _ = model(xb, yb)
    m_loss = margin_loss(lengths, yb)
    r_loss = F.mse_loss(recon, xb.flatten(1), reduction="sum") / len(xb)
    loss = m_loss + 0.0005 * r_loss
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    if step % 5 == 0:
        acc = (lengths.argmax(dim=1) == yb).float().mean().item()
        print(f"step {step:2d} margin {m_loss.item():.5f} recon {r_loss.item():.4f} "
              f"grad norm {total.item():.4f} acc {acc:.4f}")

model.eval()
with torch.no_grad():
    v, lengths, recon, c = model(test_x)
    pred = lengths.argmax(dim=1)
    correct = (pred == test_y).sum().item()
print(f"test accuracy {correct}/{len(test_y)} = {correct / len(test_y):.4f}")
print("capsule lengths of the first three test glyphs:")
print(lengths[:3])
print("recon", tuple(recon.shape), recon.requires_grad, f"{recon.mean().item():.4f}")
print("confusion:", torch.bincount(test_y * N_CLASSES + pred, minlength=16).view(4, 4).tolist())

# -- gradient checks in float64 ------------------------------------------------------------------
torch.manual_seed(1)
s64 = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
print("gradcheck squash:", gradcheck(squash, (s64,), eps=1e-6, atol=1e-5))
u64 = torch.randn(2, 5, 3, 4, dtype=torch.float64, requires_grad=True)
b64 = torch.randn(2, 5, 3, 1, dtype=torch.float64, requires_grad=True)


def one_step(u_hat, b):
    c = F.softmax(b, dim=2)
    v = squash((c * u_hat).sum(dim=1, keepdim=True))
    return b + (u_hat.unsqueeze(-2) @ v.unsqueeze(-1)).squeeze(-1)


print("gradcheck routing step:", gradcheck(one_step, (u64, b64), eps=1e-6, atol=1e-5))
out = one_step(u64, b64)
out.sum().backward()
print(f"grad norms u {u64.grad.norm().item():.5f} b {b64.grad.norm().item():.5f}")

# -- torch.func: vmap of routing, jacrev of squash -----------------------------------------------
u_b = torch.randn(3, 6, 2, 4)
v_vmap = vmap(route_one)(u_b)
v_loop, _ = route(u_b)
print("vmap", tuple(v_vmap.shape), "matches batched:", torch.allclose(v_vmap, v_loop, atol=1e-6))
print(f"vmap v[0] {fmt(v_vmap[0])}")
s = torch.tensor([0.3, -1.2, 0.5, 2.0])
J = jacrev(squash)(s)
print("jacrev squash", tuple(J.shape))
print(J)
fd = torch.stack([(squash(s + h) - squash(s - h)) / 2e-3 for h in torch.eye(4) * 1e-3], dim=1)
print("finite differences close:", torch.allclose(J, fd, atol=1e-3))
print("jacobian symmetric:", torch.allclose(J, J.T, atol=1e-6))

# -- typical mistakes ----------------------------------------------------------------------------
try:  # forgot the out-capsule axis: (1, in, out, d_out, d_in) @ (B, in, d_in, 1)
    model.W @ u.unsqueeze(-1)
except RuntimeError as e:
    print(type(e).__name__, ":", e)
try:  # weight's d_in does not match the capsule dim
    torch.randn(1, 64, 4, 8, 5) @ u[:, :, None, :, None]
except RuntimeError as e:
    print(type(e).__name__, ":", e)
b_logits = torch.zeros(2, 64, 4, 1)
for name, call in [("F.softmax", lambda: F.softmax(b_logits, dim="out")),
                   ("Tensor.softmax", lambda: b_logits.softmax(dim="out")),
                   ("torch.softmax", lambda: torch.softmax(b_logits, "out")),
                   ("dim=4", lambda: F.softmax(b_logits, dim=4)),
                   ("dim=-5", lambda: b_logits.log_softmax(-5))]:
    try:  # softmax over a dim given by name, or one the tensor does not have
        call()
    except (TypeError, IndexError) as e:
        print(name, type(e).__name__, ":", e)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    implicit = F.softmax(b_logits.squeeze(-1))  # no dim: torch picks one and warns
print("implicit dim:", [str(w.message) for w in caught], f"{implicit[0, 0, 0].item():.4f}",
      f"{implicit[0].sum().item():.4f}")
h = torch.randn(2, 16, 4, 4).view(2, 4, 4, 4, 4).permute(0, 1, 3, 4, 2)
try:  # view on the permuted conv output without contiguous()
    h.view(2, -1, 4)
except RuntimeError as e:
    print(type(e).__name__, ":", e)
print("is_contiguous", h.is_contiguous(), "->", h.contiguous().is_contiguous(),
      tuple(h.reshape(2, -1, 4).shape), h.stride())
n_caps = h[0].numel() / 4  # `/` where `//` was meant: a float capsule count
for name, call in [("view", lambda: h.contiguous().view(2, n_caps, 4)),
                   ("reshape", lambda: h.reshape((2, n_caps, 4))),
                   ("reshape first", lambda: torch.reshape(h, (n_caps * 2, 4))),
                   ("expand", lambda: u[:, :1].expand(5, n_caps, 4)),
                   ("permute", lambda: h.permute(0, 1, 2, 3, 4.0)),
                   ("permute dup", lambda: h.permute(0, 1, 3, 3, 2)),
                   ("permute short", lambda: h.permute(0, 2, 1))]:
    try:
        call()
    except (TypeError, RuntimeError) as e:
        print(name, type(e).__name__, ":", e)
print("with //:", tuple(h.reshape(2, h[0].numel() // 4, 4).shape))
try:  # squash over the wrong dim silently changes meaning; an out-of-range dim raises
    squash(u, dim=3)
except IndexError as e:
    print(type(e).__name__, ":", e)
try:  # one_hot with a label beyond num_classes
    F.one_hot(torch.tensor([0, 4]), N_CLASSES)
except RuntimeError as e:
    print(type(e).__name__, ":", e)
