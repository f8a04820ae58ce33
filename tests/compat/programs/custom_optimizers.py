"""Writing your own optimizers: Riemannian SGD on a Poincare ball, LARS/LAMB trust ratios,
Lookahead, SAM, gradient centralisation, and the torch.optim.Optimizer API in depth."""

import math
import re

import torch
from torch import nn
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR, LinearLR, ReduceLROnPlateau, SequentialLR

torch.manual_seed(0)


def fmt(t):
    return "[" + ", ".join(f"{v:.5g}" for v in t.flatten().tolist()) + "]"


def err(fn):
    try:
        fn()
        print("  no error")
    except Exception as e:  # noqa: BLE001
        print(f"  {type(e).__name__}: {e}")


# ---------------------------------------------------------------- Poincare embedding
EPS = 1e-5


def poincare_dist(u, v):
    sq = ((u - v) ** 2).sum(-1)
    nu = (u ** 2).sum(-1).clamp_max(1 - EPS)
    nv = (v ** 2).sum(-1).clamp_max(1 - EPS)
    x = 1 + 2 * sq / ((1 - nu) * (1 - nv))
    return torch.acosh(x.clamp_min(1 + EPS))


def mobius_add(x, y):
    xy = (x * y).sum(-1, keepdim=True)
    x2 = (x * x).sum(-1, keepdim=True)
    y2 = (y * y).sum(-1, keepdim=True)
    num = (1 + 2 * xy + y2) * x + (1 - x2) * y
    return num / (1 + 2 * xy + x2 * y2).clamp_min(EPS)


def expmap0(v):
    n = v.norm(dim=-1, keepdim=True).clamp_min(EPS)
    return torch.tanh(n) * v / n


def logmap0(y):
    n = y.norm(dim=-1, keepdim=True).clamp_min(EPS)
    return torch.atanh(n.clamp_max(1 - EPS)) * y / n


class RiemannianSGD(Optimizer):
    """SGD on the Poincare ball: rescale the Euclidean gradient by the inverse metric."""

    def __init__(self, params, lr=0.1, max_norm=1 - 1e-3, momentum=0.0):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, max_norm=max_norm, momentum=momentum)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    if group["momentum"] > 0:
                        state["buf"] = torch.zeros_like(p)
                state["step"] += 1
                sq = p.pow(2).sum(dim=-1, keepdim=True)
                d_p = p.grad * ((1 - sq) ** 2 / 4)
                if group["momentum"] > 0:
                    buf = state["buf"]
                    buf.mul_(group["momentum"]).add_(d_p)
                    d_p = buf
                p.add_(d_p, alpha=-group["lr"])
                p.renorm_(2, 0, group["max_norm"])
        return loss


print("== Poincare embedding of a tree")
edges = [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (2, 6), (3, 7), (4, 8)]
n_nodes = 9
# float64, as Poincare-embedding code usually does: distances near the boundary lose
# float32 precision quickly
emb = nn.Embedding(n_nodes, 2, dtype=torch.float64)
with torch.no_grad():
    emb.weight.uniform_(-0.05, 0.05)
opt = RiemannianSGD(emb.parameters(), lr=0.3, momentum=0.5)
print(type(opt).__name__, sorted(opt.defaults.items()))
print(opt)
pos = torch.tensor(edges)
g = torch.Generator().manual_seed(1)


def tree_loss():
    neg = torch.randint(0, n_nodes, (len(edges), 5), generator=g)
    u = emb(pos[:, 0])
    v = emb(pos[:, 1])
    d_pos = poincare_dist(u, v)
    d_neg = poincare_dist(u.unsqueeze(1), emb(neg))
    logits = torch.cat([-d_pos.unsqueeze(1), -d_neg], dim=1)
    return nn.functional.cross_entropy(logits, torch.zeros(len(edges), dtype=torch.long))


for it in range(60):
    def closure():
        opt.zero_grad()
        loss = tree_loss()
        loss.backward()
        return loss
    loss = opt.step(closure)
    if it % 15 == 0 or it == 59:
        print(f"it {it:2d} loss {loss.item():.5f} grad_fn {loss.grad_fn.__class__.__name__}")
w = emb.weight.detach()
norms = w.norm(dim=1)
print("norms", fmt(norms))
print("max norm < 1:", bool(norms.max() < 1))
print("root closest to origin:", int(norms.argmin()) == 0 or int(norms.argmin()))
print("d(0,1)", f"{poincare_dist(w[0], w[1]).item():.5f}",
      "d(7,8)", f"{poincare_dist(w[7], w[8]).item():.5f}")
st = opt.state[emb.weight]
print("state keys", sorted(st.keys()), "step", st["step"], "buf", tuple(st["buf"].shape))
x = torch.tensor([[0.1, 0.2], [0.3, -0.4]])
y = torch.tensor([[-0.2, 0.05], [0.1, 0.1]])
print("mobius", fmt(mobius_add(x, y)))
print("exp(log)", fmt(expmap0(logmap0(x))))
print("artanh", fmt(torch.arctanh(torch.tensor([0.0, 0.5, -0.9]))))
print("atanh_", fmt(torch.tensor([0.25, 0.75]).atanh_()))
print("acosh", fmt(torch.tensor([1.0, 1.5, 10.0]).acosh()), fmt(torch.arccosh(torch.tensor([2.0]))))
r = torch.tensor([[3.0, 4.0], [0.3, 0.4], [-6.0, 8.0]])
print("renorm", fmt(r.renorm(2, 0, 1.0)), fmt(r.clone().renorm_(1, 0, 5.0)))
print("renorm dim1", fmt(torch.renorm(r, p=float("inf"), dim=1, maxnorm=2.0)))


# ---------------------------------------------------------------- LARS / LAMB
class LARS(Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=1e-4, eta=0.001,
                 exclude_1d=True):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                      eta=eta, exclude_1d=exclude_1d))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                dp = p.grad
                if not (group["exclude_1d"] and p.ndim == 1):
                    dp = dp.add(p, alpha=group["weight_decay"])
                    pn = torch.norm(p)
                    gn = torch.norm(dp)
                    one = torch.ones_like(pn)
                    q = torch.where(pn > 0.0,
                                    torch.where(gn > 0, group["eta"] * pn / gn, one), one)
                    dp = dp.mul(q)
                state = self.state[p]
                if "mu" not in state:
                    state["mu"] = torch.zeros_like(p)
                mu = state["mu"]
                mu.mul_(group["momentum"]).add_(dp)
                p.add_(mu, alpha=-group["lr"])
        return loss


class LAMB(Optimizer):
    def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = torch.tensor(0.0)
                    st["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                step = st["step"].item()
                st["exp_avg"].lerp_(p.grad, 1 - b1)
                st["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                m_hat = st["exp_avg"] / (1 - b1 ** step)
                v_hat = st["exp_avg_sq"] / (1 - b2 ** step)
                upd = m_hat / (v_hat.sqrt() + group["eps"]) + group["weight_decay"] * p
                w_norm = p.norm(p=2)
                u_norm = upd.norm(p=2)
                trust = (w_norm / u_norm).nan_to_num(1.0) if w_norm > 0 and u_norm > 0 else 1.0
                self.state[p]["trust"] = float(trust)
                p.sub_(group["lr"] * trust * upd)


def make_problem(seed):
    torch.manual_seed(seed)
    X = torch.randn(64, 5)
    w_true = torch.tensor([1.5, -2.0, 0.5, 0.0, 3.0])
    yv = X @ w_true + 0.1 * torch.randn(64)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    return X, yv, model


def train(model, opt, X, yv, steps, sched=None, log_every=0):
    loss = None
    for s in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X).squeeze(-1), yv)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        if log_every and (s + 1) % log_every == 0:
            print(f"  step {s + 1} loss {loss.item():.5f}")
    return loss.item()


print("== LARS / LAMB")
X, yv, model = make_problem(2)
lars = LARS(model.parameters(), lr=0.5, eta=0.02)
print("LARS final", f"{train(model, lars, X, yv, 40, log_every=20):.5f}")
X, yv, model = make_problem(2)
lamb = LAMB([{"params": model[0].parameters()},
             {"params": model[2].parameters(), "lr": 5e-3}], lr=2e-2)
print("LAMB final", f"{train(model, lamb, X, yv, 40, log_every=20):.5f}")
print("trust", [f"{lamb.state[p]['trust']:.4f}" for p in model.parameters()])
print("groups lr", [grp["lr"] for grp in lamb.param_groups],
      "betas", lamb.param_groups[1]["betas"])
print("step type", type(lamb.state[model[0].weight]["step"]).__name__,
      lamb.state[model[0].weight]["step"])


# ---------------------------------------------------------------- Lookahead
class Lookahead(Optimizer):
    def __init__(self, base, k=5, alpha=0.5):
        self.base = base
        self.k = k
        self.alpha = alpha
        self.param_groups = base.param_groups
        self.defaults = base.defaults
        self.state = base.state
        self._slow = [[p.detach().clone() for p in grp["params"]] for grp in self.param_groups]
        self._count = 0

    @torch.no_grad()
    def step(self, closure=None):
        loss = self.base.step(closure)
        self._count += 1
        if self._count % self.k == 0:
            for grp, slow in zip(self.param_groups, self._slow):
                fast = list(grp["params"])
                torch._foreach_lerp_(slow, fast, self.alpha)
                for s, f in zip(slow, fast):
                    f.copy_(s)
        return loss

    def zero_grad(self, set_to_none=True):
        self.base.zero_grad(set_to_none)


print("== Lookahead")
X, yv, model = make_problem(3)
inner = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
la = Lookahead(inner, k=4, alpha=0.5)
print("Lookahead final", f"{train(model, la, X, yv, 24, log_every=8):.5f}")
print("slow==fast after sync",
      all(torch.equal(s, f) for s, f in zip(la._slow[0], model.parameters())))
print("inner state", len(inner.state), sorted(inner.state[model[0].weight].keys()))


# ---------------------------------------------------------------- SAM
class SAM(Optimizer):
    def __init__(self, params, base_cls, rho=0.05, **kw):
        super().__init__(params, dict(rho=rho, **kw))
        self.base = base_cls(self.param_groups, **kw)
        self.param_groups = self.base.param_groups

    @torch.no_grad()
    def first_step(self):
        grads = [p.grad for grp in self.param_groups for p in grp["params"] if p.grad is not None]
        gnorm = torch.norm(torch.stack(torch._foreach_norm(grads)), p=2)
        for grp in self.param_groups:
            scale = grp["rho"] / (gnorm + 1e-12)
            for p in grp["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        return gnorm

    @torch.no_grad()
    def second_step(self):
        for grp in self.param_groups:
            for p in grp["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base.step()

    def step(self, closure=None):
        assert closure is not None, "SAM requires closure"
        closure = torch.enable_grad()(closure)
        self.first_step()
        self.zero_grad()
        closure()
        self.second_step()


print("== SAM")
X, yv, model = make_problem(4)
sam = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1)
print("sam groups", len(sam.param_groups), sorted(k for k in sam.param_groups[0] if k != "params"))
for s in range(12):
    def closure():
        loss = nn.functional.mse_loss(model(X).squeeze(-1), yv)
        loss.backward()
        return loss
    loss = closure()
    sam.step(closure)
    sam.zero_grad()
    if s % 4 == 3:
        print(f"  step {s + 1} loss {loss.item():.5f}")
err(lambda: sam.step())


# ---------------------------------------------------------------- gradient centralisation
class SGDGC(torch.optim.SGD):
    @torch.no_grad()
    def step(self, closure=None):
        for grp in self.param_groups:
            for p in grp["params"]:
                if p.grad is not None and p.grad.dim() > 1:
                    dims = tuple(range(1, p.grad.dim()))
                    p.grad.sub_(p.grad.mean(dim=dims, keepdim=True))
        return super().step(closure)


print("== gradient centralisation")
X, yv, model = make_problem(5)
gc = SGDGC(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
print(gc)
print("GC final", f"{train(model, gc, X, yv, 20):.5f}")
model.zero_grad()
nn.functional.mse_loss(model(X).squeeze(-1), yv).backward()
gc.step()
print("row means ~0", f"{model[0].weight.grad.mean(1).abs().max().item() < 1e-6}")


# ---------------------------------------------------------------- the Optimizer API
print("== param_groups / add_param_group")
torch.manual_seed(6)
a = nn.Parameter(torch.randn(3))
b = nn.Parameter(torch.randn(2, 2))
c = nn.Parameter(torch.randn(4))
opt = RiemannianSGD([a], lr=0.1)
opt.add_param_group({"params": b, "lr": 0.01})
print("groups", len(opt.param_groups), [grp["lr"] for grp in opt.param_groups],
      [grp["momentum"] for grp in opt.param_groups])
print("group keys", sorted(opt.param_groups[1].keys()))
opt.param_groups[0]["lr"] = 0.5
opt.param_groups[1]["momentum"] = 0.9
print("edited", [(grp["lr"], grp["momentum"]) for grp in opt.param_groups])
print("defaults unchanged", opt.defaults["lr"], opt.defaults["momentum"])
err(lambda: opt.add_param_group({"params": [a]}))
err(lambda: opt.add_param_group({"params": c, "bogus": 3})
    or print("  bogus kept:", opt.param_groups[-1]["bogus"]))
err(lambda: opt.add_param_group({"params": 5}))
err(lambda: opt.add_param_group([c]))
err(lambda: RiemannianSGD([], lr=0.1))
err(lambda: RiemannianSGD({a, b}))
err(lambda: RiemannianSGD([a, a]))
err(lambda: RiemannianSGD(a))
err(lambda: RiemannianSGD([a], lr=-1))
err(lambda: torch.optim.SGD([a], lr="0.1").step())
err(lambda: torch.optim.SGD([a * 2], lr=0.1))
err(lambda: torch.optim.SGD([torch.randn(2, requires_grad=True).double() + 1]))
err(lambda: torch.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1))
err(lambda: torch.optim.SGD([a]))
print("SGD default lr", torch.optim.SGD([a]).defaults["lr"])

print("== zero_grad")
opt = torch.optim.SGD([a, b], lr=0.1)
(a.sum() + b.sum()).backward()
opt.zero_grad(set_to_none=False)
print("set_to_none=False", a.grad, b.grad.shape)
opt.zero_grad()
print("set_to_none default", a.grad, b.grad)
(a.sum() * 2).backward()
opt.zero_grad(True)
print("b grad still None", b.grad is None, "a", a.grad)

print("== state_dict")
torch.manual_seed(7)
net = nn.Linear(3, 2)
opt = torch.optim.Adam([{"params": [net.weight]}, {"params": [net.bias], "lr": 1e-2}], lr=1e-3,
                       weight_decay=0.1)
for _ in range(3):
    opt.zero_grad()
    net(torch.randn(4, 3)).pow(2).mean().backward()
    opt.step()
sd = opt.state_dict()
print("top keys", sorted(sd.keys()))
print("state ids", sorted(sd["state"].keys()))
print("state[0] keys", sorted(sd["state"][0].keys()), "step", sd["state"][0]["step"])
print("exp_avg", fmt(sd["state"][1]["exp_avg"]))
print("group0", sorted((k, v) for k, v in sd["param_groups"][0].items()
                       if k in ("lr", "params", "weight_decay", "betas", "eps", "amsgrad")))
print("group1 params", sd["param_groups"][1]["params"], "lr", sd["param_groups"][1]["lr"])
net2 = nn.Linear(3, 2)
opt2 = torch.optim.Adam([{"params": [net2.weight]}, {"params": [net2.bias]}], lr=0.5)
opt2.load_state_dict(sd)
print("loaded lr", [grp["lr"] for grp in opt2.param_groups],
      "step", opt2.state[net2.weight]["step"],
      "same avg", torch.equal(opt2.state[net2.bias]["exp_avg"], opt.state[net.bias]["exp_avg"]))
print("copy not alias", opt2.state[net2.bias]["exp_avg"] is not opt.state[net.bias]["exp_avg"])
opt3 = torch.optim.Adam(net2.parameters())
err(lambda: opt3.load_state_dict(sd))
opt4 = torch.optim.Adam([net2.weight, net2.bias])
bad = opt.state_dict()
bad["param_groups"][0]["params"] = [0, 1]
bad["param_groups"] = bad["param_groups"][:1]
opt4.load_state_dict(bad)
print("merged group params", len(opt4.param_groups[0]["params"]))
opt5 = torch.optim.Adam([{"params": [net2.weight]},
                         {"params": [net2.bias, nn.Parameter(torch.ones(1))]}])
err(lambda: opt5.load_state_dict(sd))
custom = RiemannianSGD(emb.parameters(), lr=0.3, momentum=0.5)
custom.load_state_dict(RiemannianSGD(emb.parameters(), lr=0.7).state_dict())
print("custom loaded", custom.param_groups[0]["lr"], custom.param_groups[0]["momentum"],
      len(custom.state))

print("== hooks")
log = []
opt = torch.optim.SGD([a], lr=0.1)


def pre(optimizer, args, kwargs):
    log.append(("pre", type(optimizer).__name__, len(args), sorted(kwargs)))


def post(optimizer, args, kwargs):
    log.append(("post", round(optimizer.param_groups[0]["lr"], 4)))


h1 = opt.register_step_pre_hook(pre)
h2 = opt.register_step_post_hook(post)
a.grad = torch.ones(3)
opt.step()
opt.step(closure=None)
h1.remove()
opt.step()
h2.remove()
opt.step()
for item in log:
    print(" ", item)


def sd_pre(optimizer):
    optimizer.param_groups[0]["note"] = "saved"


def sd_post(optimizer, state_dict):
    state_dict["extra"] = 42
    return state_dict


opt.register_state_dict_pre_hook(sd_pre)
opt.register_state_dict_post_hook(sd_post)
sdh = opt.state_dict()
print("sd hooks", sdh["param_groups"][0]["note"], sdh["extra"])


def lsd_pre(optimizer, state_dict):
    state_dict = dict(state_dict)
    state_dict.pop("extra", None)
    return state_dict


def lsd_post(optimizer):
    print("  loaded groups", len(optimizer.param_groups), optimizer.param_groups[0]["lr"])


other = torch.optim.SGD([a], lr=0.9)
other.register_load_state_dict_pre_hook(lsd_pre)
other.register_load_state_dict_post_hook(lsd_post)
other.load_state_dict(sdh)
print("note carried", other.param_groups[0].get("note"))

print("== schedulers on a custom optimizer")
p = nn.Parameter(torch.zeros(1, 2))
opt = RiemannianSGD([p], lr=0.2)
lam = LambdaLR(opt, lr_lambda=lambda e: 0.5 ** e)
lrs = []
for _ in range(4):
    p.grad = torch.full((1, 2), 0.1)
    opt.step()
    lam.step()
    lrs.append(f"{lam.get_last_lr()[0]:.5g}")
print("LambdaLR", lrs, "initial_lr", opt.param_groups[0]["initial_lr"])
opt = RiemannianSGD([p], lr=0.2)
seq = SequentialLR(opt, [LinearLR(opt, start_factor=0.25, total_iters=3),
                         LambdaLR(opt, lambda e: 0.9 ** e)], milestones=[3])
lrs = []
for _ in range(6):
    opt.step()
    seq.step()
    lrs.append(f"{seq.get_last_lr()[0]:.5g}")
print("SequentialLR", lrs)
opt = RiemannianSGD([p], lr=0.2)
plat = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1, threshold=0.01)
lrs = []
for val in [1.0, 0.9, 0.95, 0.92, 0.91, 0.5, 0.6, 0.7, 0.8]:
    opt.step()
    plat.step(val)
    lrs.append(f"{plat.get_last_lr()[0]:.4g}")
print("Plateau", lrs, "best", plat.best, "bad epochs", plat.num_bad_epochs)
print("sched state keys", sorted(k for k in lam.state_dict().keys()))

print("== clip_grad")
torch.manual_seed(8)
ps = [nn.Parameter(torch.randn(3, 3)), nn.Parameter(torch.randn(3))]
for q in ps:
    q.grad = torch.randn_like(q) * 5
total = nn.utils.clip_grad_norm_(ps, max_norm=1.0, foreach=True)
print("total", f"{total.item():.5f}", total.dtype, "after",
      f"{torch.norm(torch.stack([q.grad.norm() for q in ps])).item():.5f}")
for q in ps:
    q.grad = torch.randn_like(q) * 5
t_inf = nn.utils.clip_grad_norm_(ps, max_norm=2.0, norm_type=float("inf"), foreach=False)
print("inf total", f"{t_inf.item():.5f}",
      "max", f"{max(q.grad.abs().max().item() for q in ps):.5f}")
ps[1].grad[0] = float("nan")
err(lambda: nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True))
print("nan total", nn.utils.clip_grad_norm_(ps, 1.0).item())
for q in ps:
    q.grad = torch.linspace(-3, 3, q.numel()).reshape(q.shape)
nn.utils.clip_grad_value_(ps, clip_value=1.5)
print("clip value", fmt(ps[0].grad), fmt(ps[1].grad))
print("no grads", nn.utils.clip_grad_norm_([nn.Parameter(torch.ones(2))], 1.0))

print("== _foreach in a step")
ts = [torch.ones(2), torch.full((3,), 2.0)]
torch._foreach_mul_(ts, 0.5)
torch._foreach_add_(ts, [torch.ones(2), torch.ones(3)], alpha=2.0)
print("foreach", [fmt(t) for t in ts])
print("norms", [f"{n.item():.5f}" for n in torch._foreach_norm(ts)],
      [f"{n.item():.5f}" for n in torch._foreach_norm(ts, ord=1)])
torch._foreach_lerp_(ts, [torch.zeros(2), torch.zeros(3)], 0.25)
print("lerp", [fmt(t) for t in ts])
torch._foreach_mul_(ts, [torch.tensor(2.0), torch.tensor(3.0)])
print("mul list", [fmt(t) for t in ts])
err(lambda: torch._foreach_add_(ts, [torch.ones(2)]))

print("== typical mistakes")
err(lambda: torch.optim.Adam([a], lr=torch.tensor(0.01), foreach=True))
opt = torch.optim.SGD([a], lr=torch.tensor(0.01))
print("tensor lr ok", type(opt.param_groups[0]["lr"]).__name__)
opt = torch.optim.SGD([a], lr=0.1)
a.grad = torch.ones(3)
print("closure returns None ->", opt.step(lambda: None))
print("closure returns loss ->", opt.step(lambda: torch.tensor(1.5)))
print("momentum without state", len(opt.state))
print("Adam repr lines", len(repr(torch.optim.Adam([a])).splitlines()))
print(math.isclose(opt.param_groups[0]["lr"], 0.1))

print("== more of the Optimizer API")
err(lambda: torch.optim.Optimizer([a], {"lr": 0.1}).step())


class NoStep(Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": 0.1})


err(lambda: NoStep([a]).step())
err(lambda: opt.add_param_group({"params": {b}}))
err(lambda: opt.add_param_group({"params": ["x"]}))
opt = torch.optim.SGD([a], lr=0.1)
opt.add_param_group({"params": (b,)})
print("tuple params stored as", type(opt.param_groups[-1]["params"]).__name__)
opt.register_step_pre_hook(lambda o, args, kwargs: 5)
try:
    opt.step()
except RuntimeError as e:
    print("  bad hook:", re.sub(r" at 0x[0-9a-f]+", "", str(e)))
torch.manual_seed(9)
lin = nn.Linear(2, 2)
named = torch.optim.SGD(lin.named_parameters(), lr=0.1, momentum=0.9)
print("param_names", named.param_groups[0]["param_names"])
lin(torch.ones(1, 2)).sum().backward()
named.step()
nsd = named.state_dict()
print("named sd group keys", sorted(nsd["param_groups"][0].keys()))
print("named sd state", {k: fmt(v["momentum_buffer"]) for k, v in nsd["state"].items()})
err(lambda: torch.optim.SGD([("w", nn.Parameter(torch.ones(1))), nn.Parameter(torch.ones(1))]))
err(lambda: named.add_param_group({"params": [nn.Parameter(torch.ones(1))]}))


class Hist(Optimizer):
    """Keeps mixed state: ints, 0-d tensors, lists and dicts of tensors."""

    def __init__(self, params):
        super().__init__(params, dict(lr=0.1))

    @torch.no_grad()
    def step(self, closure=None):
        for grp in self.param_groups:
            for p in grp["params"]:
                s = self.state[p]
                s["step"] = s.get("step", 0) + 1
                s["tstep"] = torch.tensor(float(s["step"]))
                s["hist"] = [torch.ones(2), torch.ones(2, dtype=torch.float64)]
                s["d"] = {"k": torch.ones(1)}
                s["count"] = torch.ones(2, dtype=torch.long)


p64 = nn.Parameter(torch.ones(2, dtype=torch.float64))
h64 = Hist([p64])
h64.step()
h64.step()
q32 = nn.Parameter(torch.ones(2))
h32 = Hist([q32])
h32.load_state_dict(h64.state_dict())
s = h32.state[q32]
print("cast on load", s["step"], s["tstep"].dtype, [t.dtype for t in s["hist"]], s["d"]["k"].dtype,
      s["count"].dtype)

print("== more schedulers")
err(lambda: torch.optim.lr_scheduler.OneCycleLR(RiemannianSGD([p]), max_lr=1.0, total_steps=10))
err(lambda: torch.optim.lr_scheduler.StepLR("sgd", 3))
err(lambda: LambdaLR(RiemannianSGD([p]), [lambda e: 1, lambda e: 2]))
err(lambda: ReduceLROnPlateau(RiemannianSGD([p]), factor=1.0))
err(lambda: ReduceLROnPlateau(RiemannianSGD([p]), mode="bogus"))
o1 = RiemannianSGD([p])
err(lambda: SequentialLR(o1, [LambdaLR(o1, lambda e: 1.0)], milestones=[2]))
opt = RiemannianSGD([p], lr=0.5)
chain = torch.optim.lr_scheduler.ChainedScheduler([
    torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2),
    torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)])
lrs = []
for _ in range(4):
    opt.step()
    chain.step()
    lrs.append(f"{chain.get_last_lr()[0]:.5g}")
print("Chained", lrs)
opt = RiemannianSGD([p], lr=0.5)
warm = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
lrs = []
for _ in range(8):
    opt.step()
    warm.step()
    lrs.append(f"{warm.get_last_lr()[0]:.5g}")
print("WarmRestarts", lrs, "T_i", warm.T_i, "T_cur", warm.T_cur)
opt2 = RiemannianSGD([p], lr=0.5)
warm2 = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt2, T_0=3)
warm2.load_state_dict(warm.state_dict())
print("resumed", warm2.T_i, warm2.T_cur, warm2.last_epoch, f"{warm2.get_last_lr()[0]:.5g}")
opt = RiemannianSGD([p], lr=0.5)
plat = ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, cooldown=1, min_lr=1e-3)
lrs = []
for val in [1, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]:
    plat.step(val)
    lrs.append(f"{opt.param_groups[0]['lr']:.4g}")
print("Plateau max", lrs, "cooldown", plat.cooldown_counter)
err(lambda: plat.step())
opt = RiemannianSGD([p], lr=0.5)
step_s = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
opt.param_groups[0]["lr"] = 0.2
for _ in range(2):
    opt.step()
    step_s.step()
    print("StepLR after a manual lr edit", step_s.get_last_lr())
err(lambda: torch.optim.lr_scheduler.StepLR(RiemannianSGD([p]), 2, last_epoch=3))

print("== more clipping and foreach")
ps = [nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(3))]
ps[0].grad = torch.tensor([3.0, 4.0])
ps[1].grad = torch.tensor([1.0, 2.0, 2.0])
print("L1 clip", nn.utils.clip_grad_norm_(ps, 1.0, norm_type=1.0), [fmt(q.grad) for q in ps])
print("total 3-norm", nn.utils.get_total_norm([q.grad for q in ps], norm_type=3))
nn.utils.clip_grads_with_norm_(ps, 1.0, torch.tensor(0.5))
print("with norm", [fmt(q.grad) for q in ps])
err(lambda: nn.utils.clip_grad_norm_(ps, 1.0, norm_type="fro"))
print("single tensor", nn.utils.clip_grad_norm_(ps[0], 10.0),
      "empty", nn.utils.clip_grad_norm_([], 1.0))
ts = [torch.ones(2), torch.ones(3) * 2]
print("inf/0 norms", torch._foreach_norm(ts, ord=float("inf")), torch._foreach_norm(ts, 0))
print("addcmul", torch._foreach_addcmul(ts, ts, ts, value=0.5))
print("addcdiv", torch._foreach_addcdiv(ts, ts, ts, value=2))
print("lerp tensors", torch._foreach_lerp(ts, [torch.zeros(2), torch.zeros(3)],
                                          [torch.tensor(0.5), torch.tensor(0.25)]))
print("sqrt/max/div", torch._foreach_sqrt(ts), torch._foreach_maximum(ts, 1.5),
      torch._foreach_div(ts, [2.0, 4.0]))
print("pow", torch._foreach_pow(ts, 2), torch._foreach_pow(2.0, ts))
zs = [torch.ones(2)]
torch._foreach_zero_(zs)
torch._foreach_add_(zs, 3.0)
torch._foreach_clamp_max_(zs, [torch.tensor(1.0)])
print("zero/add/clamp", zs)
err(lambda: torch._foreach_add_([], []))
err(lambda: torch._foreach_norm([torch.ones(2, dtype=torch.long)]))
err(lambda: torch._foreach_mul_([torch.ones(2, dtype=torch.long)], 0.5))
print("int + float", torch._foreach_add([torch.ones(2, dtype=torch.long)], 0.5))
