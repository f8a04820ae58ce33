"""Optimizer zoo: optimizers as researchers write and wrap them (Lion, a Sophia-like method,
hand-written Nesterov, LAMB/LARS trust ratios, Lookahead) next to the built-ins on the same
small MLP, with _foreach_ ops, hooks, param groups, state_dict round trips and mistakes."""

import math
import tempfile
import warnings
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
    required,
)

torch.manual_seed(0)
X = torch.randn(64, 8)
W_TRUE = torch.randn(8, 1)
Y = X @ W_TRUE + 0.1 * torch.randn(64, 1)


def mlp(seed=1, din=8, dout=1):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(din, 16), nn.Tanh(), nn.Linear(16, dout))


def reg_loss(model):
    return F.mse_loss(model(X), Y)


def fmt(v):
    return f"{v:.5g}"


# ---------------------------------------------------------------- custom optimizers
class Lion(torch.optim.Optimizer):
    """Lion (Chen et al. 2023) with foreach ops."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        if lr <= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            grads = [p.grad for p in params]
            exp_avgs = []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avgs.append(state["exp_avg"])
            beta1, beta2 = group["betas"]
            torch._foreach_mul_(params, 1 - group["lr"] * group["weight_decay"])
            update = torch._foreach_lerp(exp_avgs, grads, 1 - beta1)
            update = torch._foreach_sign(update)
            torch._foreach_add_(params, update, alpha=-group["lr"])
            torch._foreach_lerp_(exp_avgs, grads, 1 - beta2)
        return loss


class SophiaLike(torch.optim.Optimizer):
    """Diagonal Hessian preconditioning with a Hutchinson-free squared-grad proxy, clipped."""

    def __init__(self, params, lr=1e-2, betas=(0.9, 0.95), rho=0.05, eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, rho=rho, eps=eps))

    @torch.no_grad()
    def update_hessian(self):
        for group in self.param_groups:
            b2 = group["betas"][1]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if "hess" not in st:
                    st["hess"] = torch.zeros_like(p)
                st["hess"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            b1 = group["betas"][0]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if "step" not in st:
                    st["step"] = torch.tensor(0.0)
                    st["m"] = torch.zeros_like(p)
                    st.setdefault("hess", torch.zeros_like(p))
                st["step"] += 1
                st["m"].mul_(b1).add_(p.grad, alpha=1 - b1)
                ratio = (st["m"].abs() / (group["rho"] * st["hess"] + group["eps"])).clamp(max=1.0)
                p.addcmul_(st["m"].sign(), ratio, value=-group["lr"])
        return loss


class NesterovSGD(torch.optim.Optimizer):
    """SGD with Nesterov momentum, written out by hand."""

    def __init__(self, params, lr=0.05, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                buf = self.state[p].get("momentum_buffer")
                if buf is None:
                    buf = self.state[p]["momentum_buffer"] = p.grad.clone()
                else:
                    buf.mul_(g["momentum"]).add_(p.grad)
                p.add_(p.grad.add(buf, alpha=g["momentum"]), alpha=-g["lr"])
        return loss


class LAMB(torch.optim.Optimizer):
    """LAMB with layer-wise trust ratios via _foreach_norm."""

    def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            ps = [p for p in group["params"] if p.grad is not None]
            gs = [p.grad for p in ps]
            b1, b2 = group["betas"]
            ms, vs = [], []
            for p in ps:
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                ms.append(st["exp_avg"])
                vs.append(st["exp_avg_sq"])
            step = self.state[ps[0]]["step"]
            torch._foreach_lerp_(ms, gs, 1 - b1)
            torch._foreach_mul_(vs, b2)
            torch._foreach_addcmul_(vs, gs, gs, value=1 - b2)
            denom = torch._foreach_sqrt(vs)
            torch._foreach_div_(denom, math.sqrt(1 - b2**step))
            torch._foreach_add_(denom, group["eps"])
            upd = torch._foreach_div(ms, denom)
            torch._foreach_div_(upd, 1 - b1**step)
            torch._foreach_add_(upd, ps, alpha=group["weight_decay"])
            wn = torch._foreach_norm(ps)
            un = torch._foreach_norm(upd)
            un = torch._foreach_clamp_min(un, 1e-12)
            for p, u, w, n in zip(ps, upd, wn, un):
                trust = torch.where(w > 0, w / n, torch.ones_like(w))
                p.add_(u * trust, alpha=-group["lr"])


class LARS(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, eta=0.001, weight_decay=1e-4):
        super().__init__(params, dict(lr=lr, momentum=momentum, eta=eta, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                d = p.grad.add(p, alpha=g["weight_decay"])
                pn, dn = torch.norm(p), torch.norm(d)
                q = torch.where(pn > 0, torch.where(dn > 0, g["eta"] * pn / dn, 1.0), 1.0)
                d = d.mul(q)
                st = self.state[p]
                if "mu" not in st:
                    st["mu"] = torch.clone(d).detach()
                else:
                    st["mu"].mul_(g["momentum"]).add_(d)
                p.add_(st["mu"], alpha=-g["lr"])


def train(model, opt, steps=30, closure_style=False):
    losses = []
    for _ in range(steps):
        if closure_style:

            def closure():
                opt.zero_grad()
                loss = reg_loss(model)
                loss.backward()
                return loss

            loss = opt.step(closure)
        else:
            opt.zero_grad()
            loss = reg_loss(model)
            loss.backward()
            opt.step()
        losses.append(loss.item())
    return losses


print("== custom optimizers")
for name, make, closure_style in [
    ("Lion", lambda ps: Lion(ps, lr=3e-3, weight_decay=0.01), False),
    ("Lion+closure", lambda ps: Lion(ps, lr=3e-3), True),
    ("NesterovSGD", lambda ps: NesterovSGD(ps, lr=0.02), True),
    ("LAMB", lambda ps: LAMB(ps, lr=0.02), False),
    ("LARS", lambda ps: LARS(ps, lr=0.5), False),
]:
    model = mlp()
    opt = make(model.parameters())
    losses = train(model, opt, closure_style=closure_style)
    print(
        f"{name:14s} first={fmt(losses[0])} last={fmt(losses[-1])} "
        f"groups={len(opt.param_groups)} state={len(opt.state)}"
    )
print("Lion defaults:", sorted(Lion([torch.zeros(1, requires_grad=True)]).defaults))

model = mlp()
soph = SophiaLike(model.parameters(), lr=0.01)
for i in range(25):
    soph.zero_grad()
    loss = reg_loss(model)
    loss.backward()
    if i % 5 == 0:
        soph.update_hessian()
    soph.step()
sstep = soph.state[model[0].weight]["step"].item()
print(f"Sophia loss={fmt(reg_loss(model).item())} step={sstep}")
st = soph.state[model[2].bias]
print("Sophia state keys:", sorted(st), "hess", fmt(st["hess"].item()))


def hutchinson_diag(model, n_samples=4):
    """diag(H) ~ E[u * (H u)] with Rademacher u, by double backward."""
    params = [p for p in model.parameters()]
    loss = reg_loss(model)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    est = [torch.zeros_like(p) for p in params]
    for _ in range(n_samples):
        us = [torch.randint_like(p, 0, 2) * 2 - 1 for p in params]
        hvps = torch.autograd.grad(grads, params, grad_outputs=us, retain_graph=True)
        torch._foreach_addcmul_(est, us, hvps, value=1.0 / n_samples)
    return est


torch.manual_seed(5)
model = mlp()
diag = hutchinson_diag(model)
print("Hutchinson diag(H) of last bias", fmt(diag[3].item()),
      "first weights", [fmt(v) for v in diag[0][0, :3].tolist()])
exact = torch.autograd.functional.hessian(
    lambda b: F.mse_loss(model[:2](X) @ model[2].weight.T + b, Y), model[2].bias.detach()
)
print("exact bias Hessian", fmt(exact.item()))

# ---------------------------------------------------------------- foreach ops directly
print("== foreach ops")
a = [torch.tensor([1.0, -2.0, 3.0]), torch.tensor([[0.5, -0.25], [4.0, 0.0]])]
b = [torch.tensor([0.5, 0.5, 0.5]), torch.tensor([[1.0, 2.0], [3.0, 4.0]])]
print([t.tolist() for t in torch._foreach_sign(a)])
print([fmt(t.item()) for t in torch._foreach_norm(a)])
print([fmt(t.item()) for t in torch._foreach_norm(a, ord=1)])
print([t.tolist() for t in torch._foreach_sqrt(b)])
c = [t.clone() for t in a]
torch._foreach_clamp_min_(c, 0.0)
print([t.tolist() for t in c])
torch._foreach_addcmul_(c, a, b, value=0.5)
print([t.tolist() for t in c])
torch._foreach_lerp_(c, b, 0.25)
print([t.tolist() for t in c])
torch._foreach_div_(c, [2.0, 4.0])
print([t.tolist() for t in c])
torch._foreach_mul_(c, b)
print([t.tolist() for t in c])
print([t.tolist() for t in torch._foreach_add(a, 1.5)])
print([t.tolist() for t in torch._foreach_maximum(a, b)])
d = [t.clone() for t in b]
torch._foreach_addcdiv_(d, a, b, value=-2.0)
print([t.tolist() for t in d])
torch._foreach_addcdiv_(d, a, b, [0.5, 2.0])
print([t.tolist() for t in d])
torch._foreach_sub_(d, [1.0, 2.0])
print([t.tolist() for t in d])
torch._foreach_mul_(d, torch.tensor(3.0))
print([t.tolist() for t in d])
torch._foreach_lerp_(d, b, [torch.full_like(t, 0.5) for t in b])
print([t.tolist() for t in d])
print([[fmt(v) for v in t.flatten().tolist()] for t in torch._foreach_exp(a)])
print([t.tolist() for t in torch._foreach_pow(b, 2)])
print([t.tolist() for t in torch._foreach_pow(2.0, b)])
print([t.tolist() for t in torch._foreach_abs(a)])
print([t.tolist() for t in torch._foreach_neg(a)])
print([t.tolist() for t in torch._foreach_clamp_max(a, 1.0)])
print([t.tolist() for t in torch._foreach_minimum(a, 0.0)])
print([fmt(t.item()) for t in torch._foreach_norm(a, ord=float("inf"))])
torch._foreach_copy_(d, a)
torch._foreach_zero_(c)
print([t.tolist() for t in d], [t.sum().item() for t in c])
print([t.tolist() for t in torch._foreach_sub(a, b, alpha=2)])
print([t.tolist() for t in torch._foreach_reciprocal(b)])

# ---------------------------------------------------------------- hooks and param groups
print("== hooks")
model = mlp()
opt = torch.optim.SGD(
    [
        {"params": model[0].parameters()},
        {"params": model[2].parameters(), "lr": 0.01},
    ],
    lr=0.1,
    momentum=0.9,
)
events = []


def pre_hook(optimizer, args, kwargs):
    events.append(("pre", sorted(kwargs)))


def post_hook(optimizer, args, kwargs):
    events.append(("post", optimizer.param_groups[0]["lr"]))


h1 = opt.register_step_pre_hook(pre_hook)
h2 = opt.register_step_post_hook(post_hook)


def sd_pre(optimizer):
    events.append(("sd_pre", type(optimizer).__name__))


def sd_post(optimizer, state_dict):
    state_dict["note"] = "hello"
    events.append(("sd_post", sorted(state_dict)))
    return state_dict


def load_pre(optimizer, state_dict):
    events.append(("load_pre", len(state_dict["param_groups"])))
    sd = dict(state_dict)
    sd.pop("note", None)
    return sd


def load_post(optimizer):
    events.append(("load_post", optimizer.param_groups[1]["lr"]))


opt.register_state_dict_pre_hook(sd_pre)
opt.register_state_dict_post_hook(sd_post)
opt.register_load_state_dict_pre_hook(load_pre)
opt.register_load_state_dict_post_hook(load_post)
for _ in range(3):
    opt.zero_grad()
    reg_loss(model).backward()
    opt.step()
h1.remove()
opt.step()
h2.remove()
opt.step()
print(events)
events.clear()
sd = opt.state_dict()
print("sd keys", sorted(sd), "note", sd["note"])
print("groups", [{k: v for k, v in g.items() if k != "params"} for g in sd["param_groups"]])
print("params ids", [g["params"] for g in sd["param_groups"]])
print("state", {k: tuple(v["momentum_buffer"].shape) for k, v in sd["state"].items()})

model2 = mlp()
opt2 = torch.optim.SGD(
    [
        {"params": model2[0].parameters()},
        {"params": model2[2].parameters(), "lr": 0.5},
    ],
    lr=0.3,
    momentum=0.9,
)
opt2.register_load_state_dict_pre_hook(load_pre)
opt2.register_load_state_dict_post_hook(load_post)
opt2.load_state_dict(sd)
print(events)
print("loaded lrs", [g["lr"] for g in opt2.param_groups])
buf1 = opt.state[model[0].weight]["momentum_buffer"]
buf2 = opt2.state[model2[0].weight]["momentum_buffer"]
print("buffers equal", torch.equal(buf1, buf2), "same object", buf1 is buf2)
for g in opt2.param_groups:
    g["lr"] = 0.02
print("new lrs", [g["lr"] for g in opt2.param_groups])

with tempfile.TemporaryDirectory() as d:
    torch.save({"opt": opt.state_dict(), "model": model.state_dict()}, d + "/ckpt.pt")
    ck = torch.load(d + "/ckpt.pt")
    print(
        "ckpt state steps",
        len(ck["opt"]["state"]),
        type(ck["opt"]["state"][0]["momentum_buffer"]).__name__,
    )

# named parameters, tensor lr, hook that rewrites arguments, global hooks
model = mlp()
opt = torch.optim.AdamW(model.named_parameters(), lr=torch.tensor(0.01))
reg_loss(model).backward()
opt.step()
sd = opt.state_dict()
print("named groups", sd["param_groups"][0]["param_names"], sd["param_groups"][0]["params"])
print("tensor lr", type(opt.param_groups[0]["lr"]).__name__, opt.param_groups[0]["lr"])
print("state type", type(opt.state).__name__, len(opt.state))


def swap_closure(optimizer, args, kwargs):
    events.append(("swap", sorted(kwargs)))
    return args, {"closure": lambda: torch.tensor(42.0)}


model = mlp()
opt = NesterovSGD(model.parameters())
opt.register_step_pre_hook(swap_closure)
reg_loss(model).backward()
print("rewritten closure", opt.step(), events[-1])
gh = register_optimizer_step_pre_hook(lambda o, a, k: events.append(("global", type(o).__name__)))
gh2 = register_optimizer_step_post_hook(lambda o, a, k: events.append(("gpost", type(o).__name__)))
opt.step()
gh.remove()
gh2.remove()
opt.step()
print(events[-3:])
print(opt)

# add_param_group and zero_grad
model = mlp()
opt = torch.optim.Adam(model[0].parameters(), lr=1e-2)
opt.add_param_group({"params": model[2].parameters(), "lr": 1e-3, "betas": (0.8, 0.9)})
print("groups", len(opt.param_groups), [g["lr"] for g in opt.param_groups],
      opt.param_groups[1]["betas"])
print("defaults filled", sorted(opt.param_groups[1]))
reg_loss(model).backward()
opt.step()
opt.zero_grad(set_to_none=False)
g0 = model[0].weight.grad
print("after zero_grad(False)", g0 is None, g0.abs().sum().item())
opt.zero_grad()
print("after zero_grad()", model[0].weight.grad is None)
sd = opt.state_dict()
shapes = {k: {n: (tuple(t.shape) if t.dim() else float(t)) for n, t in v.items()}
          for k, v in sd["state"].items()}
print("adam state", shapes)

# ---------------------------------------------------------------- Lookahead, accumulation, clipping
print("== lookahead")


class Lookahead(torch.optim.Optimizer):
    def __init__(self, base, k=5, alpha=0.5):
        self.base = base
        self.k, self.alpha = k, alpha
        self.param_groups = base.param_groups
        self.defaults = base.defaults
        self.state = base.state
        self.slow = [[p.detach().clone() for p in g["params"]] for g in self.param_groups]
        self.counter = 0
        # (no Optimizer.__init__: give it the hook tables torch's machinery reads)
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()

    @torch.no_grad()
    def step(self, closure=None):
        loss = self.base.step(closure)
        self.counter += 1
        if self.counter % self.k == 0:
            for g, slows in zip(self.param_groups, self.slow):
                for p, s in zip(g["params"], slows):
                    s.add_(p - s, alpha=self.alpha)
                    p.copy_(s)
        return loss

    def zero_grad(self, set_to_none=True):
        self.base.zero_grad(set_to_none)


model = mlp()
la = Lookahead(torch.optim.Adam(model.parameters(), lr=0.01), k=4)
losses = train(model, la, steps=20)
print("lookahead", [fmt(v) for v in losses[::4]], "counter", la.counter)

model = mlp()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
accum = 4
norms = []
for step in range(12):
    xb, yb = X[step * 5 : (step + 1) * 5], Y[step * 5 : (step + 1) * 5]
    loss = F.mse_loss(model(xb), yb) / accum
    loss.backward()
    if (step + 1) % accum == 0:
        n = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.2)
        norms.append(fmt(n.item()))
        opt.step()
        opt.zero_grad()
print("accum norms", norms, "loss", fmt(reg_loss(model).item()))

U = torch.nn.utils
for norm_type in [2.0, 1, "inf"]:
    ps = [
        torch.tensor([3.0, -4.0], requires_grad=True),
        torch.tensor([[1.0, 2.0]], requires_grad=True),
    ]
    for p in ps:
        p.grad = p.detach() * 2
    tn = U.clip_grad_norm_(ps, max_norm=1.0, norm_type=norm_type, foreach=norm_type == 2.0)
    print(
        "clip", norm_type, fmt(tn.item()), [[fmt(v) for v in p.grad.flatten().tolist()] for p in ps]
    )
grads = [p.grad for p in ps]
tot = U.get_total_norm(grads, norm_type=2.0)
U.clip_grads_with_norm_(ps, 0.1, tot)
print("clip with norm", fmt(tot.item()), [fmt(v) for v in ps[0].grad.tolist()])
ps[0].grad[0] = float("nan")
try:
    U.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("nonfinite:", type(e).__name__, str(e)[:80])

# ---------------------------------------------------------------- built-ins on the same problem
print("== built-ins")
BUILTINS = [
    ("SGD mom/damp", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1)),
    (
        "SGD nesterov",
        lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    ),
    ("Adam amsgrad", lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True)),
    ("AdamW", lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, amsgrad=True)),
    (
        "NAdam dwd",
        lambda p: torch.optim.NAdam(p, lr=0.01, weight_decay=0.05, decoupled_weight_decay=True),
    ),
    ("NAdam", lambda p: torch.optim.NAdam(p, lr=0.01, momentum_decay=0.005)),
    ("RAdam", lambda p: torch.optim.RAdam(p, lr=0.01)),
    (
        "RAdam dwd",
        lambda p: torch.optim.RAdam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    ),
    ("Adamax", lambda p: torch.optim.Adamax(p, lr=0.02)),
    (
        "Adagrad",
        lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
    ),
    ("Adadelta", lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.9)),
    ("Rprop", lambda p: torch.optim.Rprop(p, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-5, 1))),
    ("ASGD", lambda p: torch.optim.ASGD(p, lr=0.05, t0=5)),
    ("RMSprop", lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True)),
    ("Adafactor", lambda p: torch.optim.Adafactor(p, lr=0.05)),
    ("Adafactor wd", lambda p: torch.optim.Adafactor(p, lr=0.05, weight_decay=0.1, d=2.0)),
]
for name, make in BUILTINS:
    model = mlp()
    opt = make(model.parameters())
    losses = train(model, opt, steps=25)
    w = model[0].weight
    print(
        f"{name:13s} {fmt(losses[0])} -> {fmt(losses[-1])} w00={fmt(w[0, 0].item())} "
        f"keys={sorted(opt.state[w])}"
    )

# Muon for the hidden matrices, AdamW for biases (the usual split)
model = mlp()
mats = [p for p in model.parameters() if p.ndim == 2]
vecs = [p for p in model.parameters() if p.ndim != 2]
muon = torch.optim.Muon(mats, lr=0.02, adjust_lr_fn="match_rms_adamw")
adamw = torch.optim.AdamW(vecs, lr=0.01)
for _ in range(20):
    muon.zero_grad()
    adamw.zero_grad()
    loss = reg_loss(model)
    loss.backward()
    muon.step()
    adamw.step()
buf = muon.state[model[0].weight]["momentum_buffer"]
print("Muon+AdamW", fmt(loss.item()), sorted(muon.state[model[0].weight]), tuple(buf.shape))
print("Muon defaults", {k: v for k, v in muon.defaults.items() if k != "ns_coefficients"})
try:
    torch.optim.Muon(model.parameters())
except ValueError as e:
    print("Muon on a bias:", e)

model = mlp()
opt = torch.optim.Adam(model.parameters(), lr=0.01, maximize=True)
train(model, opt, steps=5)
print("Adam maximize loss", fmt(reg_loss(model).item()))
model = mlp()
opt = torch.optim.SGD(model.parameters(), lr=0.01, maximize=True, momentum=0.5)
train(model, opt, steps=5)
print("SGD maximize loss", fmt(reg_loss(model).item()))
model = mlp()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
train(model, opt, steps=3)
stp = opt.state[model[0].weight]["step"]
print("Adam step", type(stp).__name__, stp.dtype, stp.shape, stp.item())

# SparseAdam with sparse embeddings
torch.manual_seed(3)
emb = nn.Embedding(10, 4, sparse=True)
head = nn.Linear(4, 1)
sopt = torch.optim.SparseAdam(list(emb.parameters()), lr=0.05)
dopt = torch.optim.Adam(head.parameters(), lr=0.05)
idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
target = torch.tensor([[1.0], [-1.0]])
for i in range(10):
    sopt.zero_grad()
    dopt.zero_grad()
    out = head(emb(idx).mean(1))
    loss = F.mse_loss(out, target)
    loss.backward()
    if i == 0:
        g = emb.weight.grad
        print("sparse grad", g.is_sparse, g.layout, tuple(g.coalesce().indices().shape))
    sopt.step()
    dopt.step()
print("SparseAdam loss", fmt(loss.item()), "untouched row",
      [fmt(v) for v in emb.weight[0].tolist()])
print("state", sorted(sopt.state[emb.weight]), sopt.state[emb.weight]["step"])

# other optimizers that take sparse gradients (an EmbeddingBag)
for name, make in [
    ("SGD", lambda p: torch.optim.SGD(p, lr=0.5)),
    ("SGD momentum", lambda p: torch.optim.SGD(p, lr=0.5, momentum=0.9)),
    ("Adagrad", lambda p: torch.optim.Adagrad(p, lr=0.5)),
    ("SparseAdam maximize", lambda p: torch.optim.SparseAdam(p, maximize=True)),
    ("RMSprop", lambda p: torch.optim.RMSprop(p)),
    ("Adagrad wd", lambda p: torch.optim.Adagrad(p, weight_decay=0.1)),
]:
    torch.manual_seed(1)
    bag = nn.EmbeddingBag(6, 3, mode="sum", sparse=True)
    o = make(bag.parameters())
    try:
        for _ in range(2):
            o.zero_grad()
            bag(torch.tensor([1, 2, 2, 5]), torch.tensor([0, 2])).pow(2).sum().backward()
            o.step()
        print(f"bag {name}:", [fmt(v) for v in bag.weight[[0, 2, 5]].flatten().tolist()])
    except RuntimeError as e:
        print(f"bag {name}:", type(e).__name__, e)

# low-precision and complex parameters
for dt in [torch.float64, torch.bfloat16, torch.float16]:
    p = torch.tensor([1.0, -2.0], dtype=dt, requires_grad=True)
    o = torch.optim.Adam([p], lr=0.1)
    for _ in range(2):
        o.zero_grad()
        (p.float() ** 2).sum().backward()
        o.step()
    print("Adam", dt, p.tolist(), o.state[p]["exp_avg"].dtype, o.state[p]["step"].dtype)
pc = torch.tensor([1 + 1j, 2 - 1j], requires_grad=True)
oc = torch.optim.AdamW([pc], lr=0.1)
for _ in range(2):
    oc.zero_grad()
    (pc.abs() ** 2).sum().backward()
    oc.step()
print("complex AdamW", [f"{v.real:.5f}{v.imag:+.5f}j" for v in pc.tolist()])
p32 = torch.tensor([1.0, 2.0], requires_grad=True)
o32 = torch.optim.Adam([p32])
p32.grad = torch.ones(2)
o32.step()
p64 = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
o64 = torch.optim.Adam([p64])
o64.load_state_dict(o32.state_dict())
print("state cast to param", o64.state[p64]["exp_avg"].dtype, o64.state[p64]["step"].dtype)

# LBFGS
model = mlp()
lb = torch.optim.LBFGS(
    model.parameters(), lr=1, max_iter=10, history_size=5, line_search_fn="strong_wolfe"
)
calls = [0]


def lb_closure():
    calls[0] += 1
    lb.zero_grad()
    loss = reg_loss(model)
    loss.backward()
    return loss


l0 = lb.step(lb_closure)
# NOTE: L-BFGS amplifies last-bit differences of the gradients, so print 4 digits
print("LBFGS", fmt(l0.item()), "->", f"{reg_loss(model).item():.4g}", "evals", calls[0],
      "n_iter", lb.state[lb._params[0]]["n_iter"])

# ---------------------------------------------------------------- typical mistakes
print("== mistakes")
w = torch.randn(3, requires_grad=True)


def show(fn):
    try:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            r = fn()
        for x in ws:
            print("  warning", x.category.__name__, str(x.message)[:90])
        print("  ok", type(r).__name__)
    except Exception as e:  # noqa: BLE001
        print("  error", type(e).__name__, str(e)[:110])


print("param in two groups")
show(lambda: torch.optim.SGD([{"params": [w]}, {"params": [w], "lr": 0.1}], lr=0.01))
print("add_param_group duplicate")
show(lambda: torch.optim.SGD([w], lr=0.1).add_param_group({"params": [w]}))
print("negative lr")
show(lambda: torch.optim.SGD([w], lr=-0.1))
show(lambda: torch.optim.Adam([w], lr=-1e-3))
show(lambda: torch.optim.Adam([w], betas=(1.0, 0.9)))
show(lambda: torch.optim.Adam([w], eps=-1.0))
show(lambda: torch.optim.AdamW([w], weight_decay=-0.1))
show(lambda: torch.optim.SGD([w], lr=0.1, nesterov=True))
show(lambda: torch.optim.SGD([w], lr=0.1, momentum=-0.5))
show(lambda: torch.optim.Adagrad([w], lr_decay=-1))
show(lambda: torch.optim.Adadelta([w], rho=1.5))
show(lambda: torch.optim.Rprop([w], etas=(1.5, 1.2)))
print("empty parameter list")
show(lambda: torch.optim.Adam([]))
print("params as a single tensor")
show(lambda: torch.optim.SGD(w, lr=0.1))
print("params as a set")
show(lambda: torch.optim.SGD({w}, lr=0.1))
print("non-leaf parameter")
show(lambda: torch.optim.SGD([w * 2], lr=0.1))
print("LBFGS without closure")
lb = torch.optim.LBFGS([w])
show(lambda: lb.step())
print("LBFGS two groups")
show(lambda: torch.optim.LBFGS([{"params": [w]}, {"params": [torch.zeros(1, requires_grad=True)]}]))
print("SparseAdam with dense grads")
q = torch.randn(4, requires_grad=True)
sa = torch.optim.SparseAdam([q])
(q**2).sum().backward()
show(lambda: sa.step())
print("SparseAdam with sparse params")
show(lambda: torch.optim.SparseAdam([torch.randn(3, 3).to_sparse().requires_grad_()]))
print("Adam with sparse grads")
e = nn.Embedding(5, 2, sparse=True)
ad = torch.optim.Adam(e.parameters())
e(torch.tensor([1, 2])).sum().backward()
show(lambda: ad.step())
print("load_state_dict group mismatch")
o1 = torch.optim.SGD([w], lr=0.1)
o2 = torch.optim.SGD([w, torch.zeros(2, requires_grad=True)], lr=0.1)
show(lambda: o2.load_state_dict(o1.state_dict()))
o3 = torch.optim.SGD([{"params": [w]}, {"params": [torch.zeros(2, requires_grad=True)]}], lr=0.1)
show(lambda: o3.load_state_dict(o1.state_dict()))


class NeedsLR(torch.optim.Optimizer):
    def __init__(self, params, lr=required, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))


print("required lr")
show(lambda: NeedsLR([w]))
show(lambda: NeedsLR([{"params": [w], "lr": 0.1}]).param_groups[0]["lr"])
print("params given as a dict")
show(lambda: torch.optim.SGD({"params": [w]}, lr=0.1))
print("group without params")
show(lambda: torch.optim.SGD([{"lr": 0.1}], lr=0.1))
print("duplicate parameter in one list")
show(lambda: torch.optim.SGD([w, w], lr=0.1))
print("step on optimizer with no grads", torch.optim.Adam([w]).step())
print("repr:")
print(torch.optim.AdamW([w], lr=3e-4))
print(torch.optim.SGD([{"params": [w]}, {"params": [q], "lr": 0.5}], lr=0.1, momentum=0.9))
