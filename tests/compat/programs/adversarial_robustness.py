"""Adversarial robustness on toy models: attacks, defences, certificates and mistakes.

A robustness-tutorial notebook on synthetic 8x8 "images" (seeded): a small CNN with
BatchNorm and Dropout and an MLP are trained for a few steps, then attacked with FGSM and
PGD (L-inf and L2, random starts), hardened by adversarial training and TRADES, certified
with randomized smoothing (Clopper-Pearson bound, Gaussian quantile), and inspected
through per-example gradient norms; along the way it hits the autograd mistakes people
make when they take gradients with respect to inputs.
"""

import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, grad_and_value, vmap


def fmt(t, n=4):
    """A tensor's values, flattened, with n significant digits."""
    return "[" + ", ".join(f"{v:.{n}g}" for v in t.detach().reshape(-1).tolist()) + "]"


def section(title):
    print(f"\n== {title} ==")


# ---------------------------------------------------------------- data
torch.manual_seed(0)
N_CLASSES, SIDE = 3, 8
prototypes = torch.rand(N_CLASSES, 1, SIDE, SIDE)


def make_data(n):
    y = torch.randint(0, N_CLASSES, (n,))
    x = prototypes[y] + 0.25 * torch.randn(n, 1, SIDE, SIDE)
    return x.clamp(0.0, 1.0), y


x_train, y_train = make_data(96)
x_test, y_test = make_data(48)
section("data")
print("train", tuple(x_train.shape), x_train.dtype, "labels", torch.bincount(y_train).tolist())
print("test", tuple(x_test.shape), "range",
      f"{x_test.min().item():.4f}", f"{x_test.max().item():.4f}")


# ---------------------------------------------------------------- models
class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(16, N_CLASSES))

    def forward(self, x):
        return self.head(self.features(x))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(SIDE * SIDE, 32), nn.ReLU(),
                                 nn.Dropout(0.1), nn.Linear(32, N_CLASSES))

    def forward(self, x):
        return self.net(x)


def train(model, steps, lr=0.1, batch=32):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    model.train()
    for step in range(steps):
        idx = torch.randint(0, x_train.shape[0], (batch,))
        loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            print(f"  step {step:2d} loss {loss.item():.4f} grad-norm {norm.item():.4f}")
    return model


def accuracy(model, x, y):
    model.eval()
    with torch.inference_mode():
        logits = model(x)
    return (logits.argmax(1) == y).float().mean().item()


section("training")
torch.manual_seed(1)
cnn = SmallCNN()
mlp = MLP()
print("cnn params", sum(p.numel() for p in cnn.parameters()),
      "mlp params", sum(p.numel() for p in mlp.parameters()))
print("cnn")
train(cnn, 30)
print("mlp")
train(mlp, 30, lr=0.05)
print(f"clean acc cnn {accuracy(cnn, x_test, y_test):.4f} mlp {accuracy(mlp, x_test, y_test):.4f}")
bn = cnn.features[1]
print("bn batches tracked", bn.num_batches_tracked.item(), "running_mean", fmt(bn.running_mean[:4]))


# ---------------------------------------------------------------- FGSM
def fgsm(model, x, y, eps):
    """One signed-gradient step, kept inside the eps-ball and the valid pixel range."""
    x_adv = x.clone().detach().requires_grad_()
    loss = F.cross_entropy(model(x_adv), y)
    (g,) = torch.autograd.grad(loss, x_adv)
    x_adv = x_adv.detach() + eps * g.sign()
    lo = (x - eps).clamp(min=0.0)
    hi = (x + eps).clamp(max=1.0)
    return torch.clamp(x_adv, min=lo, max=hi)


section("fgsm")
cnn.eval()
x0, y0 = x_test[:8], y_test[:8]
xa = x0.clone().requires_grad_()
loss = F.cross_entropy(cnn(xa), y0)
(g,) = torch.autograd.grad(loss, xa)
print("input grad", tuple(g.shape), "grad_fn of loss", type(loss.grad_fn).__name__)
print("sign counts", {int(k): int(v) for k, v in zip(*torch.unique(g.sign(), return_counts=True))})
adv = fgsm(cnn, x0, y0, 0.1)
delta = adv - x0
print(f"linf {delta.abs().max().item():.4f} min {adv.min().item():.4f} max {adv.max().item():.4f}")
print("tensor-bound clamp == max/min", torch.equal(
    torch.clamp(x0 + 0.3, min=x0 - 0.1, max=x0 + 0.1),
    torch.max(torch.min(x0 + 0.3, x0 + 0.1), x0 - 0.1)))
print("method clamp with tensors", fmt(x0[0, 0, 0].clamp(x0[1, 0, 0], x0[2, 0, 0])))
print("clamp_ in place", fmt(torch.linspace(-1, 2, 6).clamp_(0, 1)))
print("clamp with only min tensor", fmt(torch.clamp(torch.linspace(-1, 1, 5), min=torch.zeros(5))))
try:
    torch.clamp(x0, 0.0, x0 + 0.1)  # a number and a tensor bound
except TypeError as e:
    print("mixed bounds:", str(e).splitlines()[0])
try:
    x0.clamp(x0 - 0.1, 1.0)
except TypeError as e:
    print("mixed bounds (method):", " | ".join(ln.strip() for ln in str(e).splitlines()[:3]))
with torch.no_grad():
    print("fgsm preds", cnn(adv).argmax(1).tolist(), "clean", cnn(x0).argmax(1).tolist())


# ---------------------------------------------------------------- PGD
def pgd_linf(model, x, y, eps, alpha, steps, random_start=True):
    delta = torch.empty_like(x).uniform_(-eps, eps) if random_start else torch.zeros_like(x)
    delta = (x + delta).clamp(0, 1) - x
    for _ in range(steps):
        delta.requires_grad_(True)
        loss = F.cross_entropy(model(x + delta), y)
        (g,) = torch.autograd.grad(loss, [delta])
        delta = (delta.detach() + alpha * g.sign()).clamp(-eps, eps)
        delta = (x + delta).clamp(0, 1) - x
    return (x + delta).detach()


def pgd_l2(model, x, y, eps, alpha, steps):
    delta = torch.randn_like(x)
    norms = torch.linalg.vector_norm(delta, ord=2, dim=(1, 2, 3), keepdim=True)
    r = torch.zeros(x.shape[0], 1, 1, 1).uniform_(0, 1)
    delta = delta / norms * r * eps
    for _ in range(steps):
        delta.requires_grad_(True)
        loss = F.cross_entropy(model(x + delta), y)
        (g,) = torch.autograd.grad(loss, delta)
        gn = torch.linalg.vector_norm(g, dim=(1, 2, 3), keepdim=True).clamp_min(1e-12)
        delta = delta.detach() + alpha * g / gn
        dn = delta.flatten(1).norm(p=2, dim=1).view(-1, 1, 1, 1)
        delta = torch.where(dn > eps, delta * eps / dn, delta)
        delta = (x + delta).clamp(0, 1) - x
    return (x + delta).detach()


section("pgd")
torch.manual_seed(2)
adv_inf = pgd_linf(cnn, x0, y0, eps=0.1, alpha=0.025, steps=7)
print(f"linf pgd max |d| {(adv_inf - x0).abs().amax().item():.4f}")
adv_2 = pgd_l2(cnn, x0, y0, eps=0.5, alpha=0.2, steps=7)
d2 = torch.linalg.vector_norm(adv_2 - x0, dim=(1, 2, 3))
print("l2 pgd norms", fmt(d2), "all <= eps", bool((d2 <= 0.5 + 1e-5).all()))
rn = (torch.randn(4, 1, 3, 3) * 2).renorm(p=2, dim=0, maxnorm=1.0)
print("renorm per-sample norms", fmt(rn.flatten(1).norm(dim=1)))
steps = (torch.arange(12.0).reshape(3, 4) - 5).renorm(2, 0, 5)
print("renorm rows", fmt(steps, 8), steps.dtype)
print("renorm float64", fmt(steps.double().renorm(1, 1, 2.5), 12))
rn_inf = torch.randn(3, 5).renorm(p=float("inf"), dim=0, maxnorm=0.5)
print("renorm inf", fmt(rn_inf.abs().amax(1)))
print("vector_norm ords", [f"{torch.linalg.vector_norm(adv_2 - x0, ord=o).item():.4f}"
                           for o in (1, 2, float("inf"), 0)])
print("keepdim shape", tuple(torch.linalg.vector_norm(g, dim=(-2, -1), keepdim=True).shape))


# a random start on a delta that already requires grad: refused, and nothing is drawn
delta = torch.zeros_like(x0, requires_grad=True)
try:
    delta.uniform_(-0.1, 0.1)
except RuntimeError as e:
    print("uniform_ on a leaf:", e)
delta.data.uniform_(-0.1, 0.1)
print(f"delta via .data: mean {delta.mean().item():.5f} max {delta.max().item():.5f}",
      delta.requires_grad, delta.is_leaf)
with torch.no_grad():
    delta.uniform_(-0.1, 0.1)
print(f"delta under no_grad: {delta.abs().max().item():.5f}", "next draw", fmt(torch.rand(3)))
for lo_hi in ((0.1, -0.1), (0.0, float("inf"))):
    try:
        torch.empty(3).uniform_(*lo_hi)
    except RuntimeError as e:
        print("uniform_ bounds:", e)


def robust_accuracy(model, x, y, eps_list, attack):
    out = []
    for eps in eps_list:
        model.eval()
        xa = x if eps == 0 else attack(model, x, y, eps)
        with torch.inference_mode():
            out.append((model(xa).argmax(1) == y).float().mean().item())
    return out


eps_list = [0.0, 0.05, 0.1, 0.2]
torch.manual_seed(3)
for name, m in (("cnn", cnn), ("mlp", mlp)):
    fg = robust_accuracy(m, x_test, y_test, eps_list, fgsm)
    pg = robust_accuracy(m, x_test, y_test, eps_list,
                         lambda mm, x, y, e: pgd_linf(mm, x, y, e, e / 4, 5))
    print(name, "fgsm", [f"{a:.4f}" for a in fg], "pgd", [f"{a:.4f}" for a in pg])


# ---------------------------------------------------------------- grad modes in attacks
section("grad modes")
with torch.no_grad():
    clean_logits = cnn(x0)
    print("in no_grad", torch.is_grad_enabled(), clean_logits.requires_grad)
    with torch.enable_grad():
        xg = x0.clone().requires_grad_(True)
        out = cnn(xg)
        print("nested enable_grad", torch.is_grad_enabled(), out.requires_grad,
              type(out.grad_fn).__name__)
        gx = torch.autograd.grad(out.logsumexp(1).sum(), xg)[0]
    print("back in no_grad", torch.is_grad_enabled(), f"{gx.abs().sum().item():.4f}")
with torch.inference_mode():
    t = cnn(x0)
    print("inference tensor", t.is_inference(), t.requires_grad)
    with torch.inference_mode(False):
        print("inference_mode(False) inside", torch.is_inference_mode_enabled())
    with torch.enable_grad():
        xg = x0.clone().requires_grad_(True)
        out = cnn(xg)
        print("enable_grad inside inference_mode", torch.is_grad_enabled(), out.requires_grad,
              out.grad_fn, out.is_inference())
print("after", torch.is_grad_enabled(), torch.is_inference_mode_enabled())


@torch.no_grad()
def predict(model, x):
    return model(x).softmax(-1)


@torch.enable_grad()
def saliency(model, x, y):
    x = x.clone().requires_grad_()
    model(x).gather(1, y[:, None]).sum().backward()
    return x.grad.abs().amax(dim=1)


with torch.no_grad():
    sal = saliency(cnn, x0[:2], y0[:2])
print("decorated saliency", tuple(sal.shape), f"{sal.sum().item():.4f}",
      "predict grad", predict(cnn, x0).requires_grad)


# ---------------------------------------------------------------- adversarial training
section("adversarial training")
torch.manual_seed(4)
robust = SmallCNN()
opt = torch.optim.SGD(robust.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
for step in range(12):
    idx = torch.randint(0, x_train.shape[0], (32,))
    xb, yb = x_train[idx], y_train[idx]
    robust.eval()  # attack with frozen BN statistics and no dropout
    xb_adv = pgd_linf(robust, xb, yb, eps=0.1, alpha=0.03, steps=3)
    robust.train()
    robust.zero_grad(set_to_none=True)
    loss = F.cross_entropy(robust(xb_adv), yb)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(robust.parameters(), 2.0, norm_type=2.0)
    opt.step()
    if step % 4 == 0:
        print(f"  step {step} adv loss {loss.item():.4f} grad norm {norm.item():.4f}")
print("training flag", robust.training, robust.features[1].training, robust.head[1].training)
robust.eval()
print("eval flag", robust.training, robust.features[1].training)
print("bn tracked", robust.features[1].num_batches_tracked.item())
robust.zero_grad(set_to_none=True)
print("grads none", all(p.grad is None for p in robust.parameters()))
robust(x0).sum().backward()
robust.zero_grad(set_to_none=False)
print("grads zeroed", all(p.grad is not None and p.grad.abs().sum().item() == 0
                          for p in robust.parameters()))
inf_norm = torch.nn.utils.clip_grad_norm_(robust.parameters(), 1.0, norm_type="inf")
print("inf-norm of zero grads", inf_norm.item())
torch.manual_seed(5)
print("robust acc", [f"{a:.4f}" for a in robust_accuracy(robust, x_test, y_test, eps_list, fgsm)])

# dropout is random in train mode, deterministic in eval mode
mlp.train()
torch.manual_seed(6)
a1 = mlp(x0)
a2 = mlp(x0)
mlp.eval()
print("train-mode outputs differ", not torch.allclose(a1, a2),
      "eval-mode outputs equal", torch.equal(mlp(x0), mlp(x0)))


# ---------------------------------------------------------------- TRADES
def trades_loss(model, x, y, eps=0.1, alpha=0.03, steps=3, beta=6.0):
    model.eval()
    with torch.no_grad():
        p_nat = F.softmax(model(x), dim=1)
    x_adv = x + 0.001 * torch.randn_like(x)
    for _ in range(steps):
        x_adv.requires_grad_()
        with torch.enable_grad():
            kl = F.kl_div(F.log_softmax(model(x_adv), dim=1), p_nat, reduction="sum")
        (g,) = torch.autograd.grad(kl, [x_adv])
        x_adv = x_adv.detach() + alpha * torch.sign(g.detach())
        x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0.0, 1.0)
    model.train()
    logits = model(x)
    logits_adv = model(x_adv.detach())
    natural = F.cross_entropy(logits, y)
    robust_kl = F.kl_div(F.log_softmax(logits_adv, dim=1), F.softmax(logits, dim=1),
                         reduction="batchmean")
    return natural + beta * robust_kl, natural, robust_kl


section("trades")
torch.manual_seed(7)
tr = MLP()
opt = torch.optim.Adam(tr.parameters(), lr=1e-2)
for step in range(8):
    idx = torch.randint(0, x_train.shape[0], (32,))
    total, nat, rkl = trades_loss(tr, x_train[idx], y_train[idx])
    opt.zero_grad()
    total.backward()
    opt.step()
    if step % 3 == 0:
        print(f"  step {step} total {total.item():.4f} natural {nat.item():.4f} "
              f"kl {rkl.item():.5f}")
lp = F.log_softmax(torch.randn(4, 3), 1)
lq = F.log_softmax(torch.randn(4, 3), 1)
for red in ("batchmean", "sum", "mean", "none"):
    a = F.kl_div(lp, lq, reduction=red, log_target=True)
    b = F.kl_div(lp, lq.exp(), reduction=red)
    print(f"  kl_div {red}: log_target {fmt(a)} prob-target {fmt(b)}")
print("KLDivLoss module", fmt(nn.KLDivLoss(reduction="batchmean", log_target=True)(lp, lq)))
lp.requires_grad_()
F.kl_div(lp, lq, reduction="batchmean", log_target=True).backward()
print("kl grad", fmt(lp.grad[0]))


# ---------------------------------------------------------------- randomized smoothing
def clopper_pearson_lower(k, n, alpha):
    """Lower one-sided Clopper-Pearson bound by bisection on the binomial tail."""
    if k == 0:
        return 0.0
    ks = torch.arange(k, n + 1, dtype=torch.float64)
    log_binom = (torch.special.gammaln(torch.tensor(n + 1.0, dtype=torch.float64))
                 - torch.special.gammaln(ks + 1) - torch.special.gammaln(n - ks + 1))
    lo, hi = 0.0, 1.0
    for _ in range(50):
        p = torch.tensor((lo + hi) / 2, dtype=torch.float64)
        tail = torch.logsumexp(log_binom + ks * torch.log(p) + (n - ks) * torch.log1p(-p), 0).exp()
        if tail.item() > alpha:
            hi = p.item()
        else:
            lo = p.item()
    return lo


def smoothed_certify(model, x, sigma, n0, n, alpha, batch=100):
    model.eval()
    with torch.inference_mode():
        def counts(num):
            c = torch.zeros(N_CLASSES, dtype=torch.long)
            left = num
            while left > 0:
                b = min(batch, left)
                noisy = x.unsqueeze(0).expand(b, -1, -1, -1) + sigma * torch.randn(b, *x.shape)
                c += torch.bincount(model(noisy).argmax(1), minlength=N_CLASSES)
                left -= b
            return c
        guess = counts(n0).argmax().item()
        c = counts(n)
    k = c[guess].item()
    p_lower = clopper_pearson_lower(k, n, alpha)
    if p_lower < 0.5:
        return guess, k, p_lower, None
    normal = torch.distributions.Normal(0.0, 1.0)
    radius = sigma * normal.icdf(torch.tensor(p_lower)).item()
    return guess, k, p_lower, radius


section("randomized smoothing")
torch.manual_seed(8)
for i in range(4):
    cls, k, pl, rad = smoothed_certify(cnn, x_test[i, :], sigma=0.25, n0=50, n=400, alpha=0.001)
    r = "abstain" if rad is None else f"{rad:.4f}"
    print(f"  x{i} label {y_test[i].item()} pred {cls} count {k}/400 pA>= {pl:.4f} radius {r}")
std = torch.distributions.Normal(torch.tensor(0.0), torch.tensor(1.0))
qs = torch.tensor([0.5, 0.9, 0.975, 0.999])
print("normal icdf", fmt(std.icdf(qs), 6), "cdf back", fmt(std.cdf(std.icdf(qs)), 6))
print("erfinv route", fmt(math.sqrt(2) * torch.special.erfinv(2 * qs - 1), 6))
print("ndtri", fmt(torch.special.ndtri(qs), 6))
try:
    std.icdf(0.975)
except TypeError as e:
    print("icdf of a float:", e)
beta = torch.distributions.Beta(torch.tensor(390.0), torch.tensor(11.0))
print(f"beta mean {beta.mean.item():.5f} var {beta.variance.item():.3e}")
try:
    beta.icdf(torch.tensor(0.001))
except NotImplementedError as e:
    print("Beta.icdf", type(e).__name__, str(e) or "(no message)")
print(f"cp bound 390/400 {clopper_pearson_lower(390, 400, 0.001):.6f}",
      f"400/400 {clopper_pearson_lower(400, 400, 0.001):.6f}")


# ---------------------------------------------------------------- per-example gradient norms
section("per-example gradients")
mlp.eval()
params = {k: v.detach() for k, v in mlp.named_parameters()}


def sample_loss(p, x, y):
    out = functional_call(mlp, p, (x.unsqueeze(0),))
    return F.cross_entropy(out, y.unsqueeze(0))


per_ex = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x0, y0)
sq = sum(g.flatten(1).pow(2).sum(1) for g in per_ex.values())
print("vmap per-example norms", fmt(sq.sqrt()))
per_g, per_loss = vmap(grad_and_value(sample_loss), in_dims=(None, 0, 0))(params, x0, y0)
print("per-example losses", per_loss)


def input_loss(xi, yi):
    loss = F.cross_entropy(mlp(xi.unsqueeze(0)), yi.unsqueeze(0))
    return loss, xi.abs().sum()


g_in, (val, aux) = grad_and_value(input_loss, has_aux=True)(x0[0], y0[0])
print("grad_and_value: value", val, "aux", aux, "grad", tuple(g_in.shape))
loop = []
for i in range(x0.shape[0]):
    mlp.zero_grad(set_to_none=True)
    F.cross_entropy(mlp(x0[i:i + 1]), y0[i:i + 1]).backward()
    loop.append(torch.stack([p.grad.norm() for p in mlp.parameters()]).norm())
loop = torch.stack(loop)
print("loop per-example norms", fmt(loop), "match", torch.allclose(loop, sq.sqrt(), atol=1e-5))
xin = x0.clone().requires_grad_()
F.cross_entropy(mlp(xin), y0, reduction="sum").backward()
in_norms = xin.grad.flatten(1).norm(dim=1)
print("input-grad norms", fmt(in_norms), "largest", in_norms.argmax().item())
print("per-sample linf", fmt(torch.linalg.vector_norm(xin.grad, ord=float("inf"), dim=(1, 2, 3))))


# ---------------------------------------------------------------- common mistakes
section("mistakes")
x = torch.rand(3, requires_grad=True)
h = x * 2
out = (h ** 2).sum()
out.backward()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    g_nonleaf = h.grad
print("non-leaf grad", g_nonleaf, "warnings", len(caught))
for w in caught:
    print(" ", w.category.__name__ + ":", str(w.message).split(". ")[0])
h2 = x * 2
h2.retain_grad()
(h2 ** 2).sum().backward()
print("retained grad", fmt(h2.grad), "leaf grad accumulated", fmt(x.grad))

y = (x.exp()).sum()
y.backward()
try:
    y.backward()
except RuntimeError as e:
    print("backward twice:", str(e).split(".")[0])
z = (x.exp()).sum()
z.backward(retain_graph=True)
z.backward()
print("retain_graph twice ok, grad", fmt(x.grad))

try:
    x.add_(1.0)
except RuntimeError as e:
    print("in-place on leaf:", e)
with torch.no_grad():
    x.add_(1.0)
print("in-place under no_grad ok", fmt(x), x.requires_grad, x.is_leaf)

try:
    torch.autograd.grad(torch.ones(2).sum(), torch.ones(2))
except RuntimeError as e:
    print("grad of no-grad tensor:", e)
a = torch.ones(2, requires_grad=True)
b = torch.ones(2, requires_grad=True)
try:
    torch.autograd.grad((a * 3).sum(), [a, b])
except RuntimeError as e:
    print("unused input:", str(e).split(". ")[0])
print("allow_unused", torch.autograd.grad((a * 3).sum(), [a, b], allow_unused=True))
print("materialize", torch.autograd.grad((a * 3).sum(), [a, b], allow_unused=True,
                                         materialize_grads=True))
try:
    (a * 2).backward()
except RuntimeError as e:
    print("non-scalar backward:", e)
with torch.inference_mode():
    it = torch.ones(2)
try:
    (it * a).sum().backward()
except RuntimeError as e:
    print("inference tensor saved:", str(e).split(". ")[0])
d = torch.rand(2, 2, requires_grad=True)
try:
    d.numpy()
except RuntimeError as e:
    print("numpy of grad tensor:", e)
e2 = d.sigmoid()
e2.mul_(2)
print("in-place on non-leaf grad_fn", type(e2.grad_fn).__name__)
f = d.exp()
f.add_(1)
try:
    f.sum().backward()
except RuntimeError as err:
    print("saved tensor modified:", str(err).split(";")[0])
print("detach shares storage", d.detach().data_ptr() == d.data_ptr(),
      "requires_grad", d.detach().requires_grad)
