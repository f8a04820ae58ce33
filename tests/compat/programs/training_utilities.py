"""Training utilities on one small regression model: an optimizer zoo (every torch.optim
algorithm with its less common options, SparseAdam on a sparse embedding), param groups,
optimizer and scheduler state_dict round trips through torch.save, the learning-rate
schedulers, SWA/EMA averaging with swa_utils, activation checkpointing, bfloat16 autocast,
gradient accumulation and clipping, and the nn.init initialisers."""

import contextlib
import functools
import io
import math

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.optim import lr_scheduler
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

# a small synthetic regression problem: y = sin(x @ w) + noise
X = torch.randn(64, 6)
w_true = torch.randn(6, 1)
Y = torch.sin(X @ w_true) + 0.05 * torch.randn(64, 1)
print("data", tuple(X.shape), tuple(Y.shape), f"{Y.mean().item():.4f} {Y.std().item():.4f}")


def make_model(seed=1):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def fmt(xs, digits=4):
    return "[" + ", ".join(f"{x:.{digits}f}" for x in xs) + "]"


# -- the optimizer zoo --------------------------------------------------------------------
zoo = [
    ("SGD", lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    ("SGD-damp", lambda p: optim.SGD(p, lr=0.05, momentum=0.8, dampening=0.3,
                                     weight_decay=1e-2, maximize=False)),
    ("Adam-amsgrad", lambda p: optim.Adam(p, lr=1e-2, betas=(0.8, 0.95), amsgrad=True,
                                          weight_decay=1e-3)),
    ("AdamW", lambda p: optim.AdamW(p, lr=1e-2, weight_decay=0.1, eps=1e-6)),
    ("NAdam", lambda p: optim.NAdam(p, lr=1e-2, momentum_decay=5e-3)),
    ("NAdam-decoupled", lambda p: optim.NAdam(p, lr=1e-2, weight_decay=0.05,
                                              decoupled_weight_decay=True)),
    ("RAdam", lambda p: optim.RAdam(p, lr=1e-2, weight_decay=1e-2)),
    ("RAdam-decoupled", lambda p: optim.RAdam(p, lr=1e-2, weight_decay=1e-2,
                                              decoupled_weight_decay=True)),
    ("Adamax", lambda p: optim.Adamax(p, lr=2e-2, weight_decay=1e-3)),
    ("ASGD", lambda p: optim.ASGD(p, lr=0.05, lambd=1e-3, alpha=0.75, t0=5)),
    ("Rprop", lambda p: optim.Rprop(p, lr=1e-2, etas=(0.4, 1.3), step_sizes=(1e-5, 0.5))),
    ("Adadelta", lambda p: optim.Adadelta(p, lr=1.0, rho=0.8, weight_decay=1e-3)),
    ("Adagrad", lambda p: optim.Adagrad(p, lr=0.1, lr_decay=1e-2,
                                        initial_accumulator_value=0.1)),
    ("RMSprop", lambda p: optim.RMSprop(p, lr=5e-3, alpha=0.9, centered=True, momentum=0.5)),
    ("Adam-maximize", lambda p: optim.Adam(p, lr=1e-2, maximize=True, foreach=False)),
]
for name, make in zoo:
    model = make_model()
    opt = make(model.parameters())
    losses = []
    for step in range(25):
        opt.zero_grad()
        loss = F.mse_loss(model(X), Y)
        if name == "Adam-maximize":
            (-loss).backward()
        else:
            loss.backward()
        opt.step()
        if step % 8 == 0:
            losses.append(loss.item())
    final = F.mse_loss(model(X), Y).item()
    keys = sorted(opt.state[model[0].weight].keys())
    print(f"{name:16s} {fmt(losses)} final {final:.4f} state {keys}")

print(repr(optim.SGD(make_model().parameters(), lr=0.1, momentum=0.9, nesterov=True)))
print(repr(optim.Adam([nn.Parameter(torch.zeros(2))], lr=1e-3, amsgrad=True)))

# -- errors of typical mistakes -------------------------------------------------------------
p = [nn.Parameter(torch.zeros(3))]
for bad in [
    lambda: optim.SGD(p, lr=0.1, nesterov=True),
    lambda: optim.SGD(p, lr=-0.1),
    lambda: optim.Adam(p, lr=1e-3, betas=(1.0, 0.999)),
    lambda: optim.Adam(p, lr=1e-3, eps=-1.0),
    lambda: optim.AdamW(p, weight_decay=-0.1),
    lambda: optim.RMSprop(p, alpha=-0.5),
    lambda: optim.Adagrad(p, lr_decay=-1.0),
    lambda: optim.Adadelta(p, rho=1.5),
    lambda: optim.Rprop(p, etas=(1.2, 0.5)),
    lambda: optim.SGD([], lr=0.1),
    lambda: optim.SGD(torch.zeros(3), lr=0.1),
    lambda: optim.SGD([0.5, 1.5], lr=0.1),
    lambda: optim.Adam(p, lr=torch.tensor(0.01), foreach=True).step(),
]:
    try:
        bad()
        print("no error")
    except (ValueError, TypeError) as e:
        print(type(e).__name__ + ":", e)

# -- SparseAdam on an nn.Embedding(sparse=True) --------------------------------------------
torch.manual_seed(2)
emb = nn.Embedding(10, 4, sparse=True)
head = nn.Linear(4, 1)
sparse_opt = optim.SparseAdam(list(emb.parameters()), lr=0.05)
dense_opt = optim.Adam(head.parameters(), lr=0.05)
idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
row0 = emb.weight[0].detach().clone()
target = torch.tensor([[1.0], [-1.0]])
for step in range(10):
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
    out = head(emb(idx).mean(1))
    loss = F.mse_loss(out, target)
    loss.backward()
    if step == 0:
        g = emb.weight.grad
        print("sparse grad", g.is_sparse, g.layout, tuple(g.shape), g._nnz(),
              g.coalesce().indices().tolist())
    sparse_opt.step()
    dense_opt.step()
print(f"sparse loss {loss.item():.4f}", "untouched rows equal:",
      torch.equal(emb.weight[0], row0),
      "state steps", sparse_opt.state[emb.weight]["step"])
print(emb.weight[[0, 4]].detach())
try:
    bad_sparse = optim.SparseAdam([nn.Parameter(torch.ones(2))])
    loss = bad_sparse.param_groups[0]["params"][0].sum()
    loss.backward()
    bad_sparse.step()
except RuntimeError as e:
    print("RuntimeError:", e)

# -- param groups, add_param_group, state_dict round trip ------------------------------------
model = make_model()
opt = optim.Adam([
    {"params": model[0].parameters(), "lr": 1e-2},
    {"params": model[2].weight, "lr": 1e-3, "weight_decay": 0.1},
], lr=5e-3, betas=(0.9, 0.99))
print("groups", len(opt.param_groups), [g["lr"] for g in opt.param_groups],
      [g["weight_decay"] for g in opt.param_groups], [len(g["params"]) for g in opt.param_groups])
opt.add_param_group({"params": [model[2].bias], "lr": 2e-2, "amsgrad": True})
print("after add", [g["lr"] for g in opt.param_groups], [g["amsgrad"] for g in opt.param_groups])
try:
    opt.add_param_group({"params": model[2].bias})
except ValueError as e:
    print("ValueError:", e)
for _step in range(5):
    opt.zero_grad(set_to_none=True)
    F.mse_loss(model(X), Y).backward()
    opt.step()
sd = opt.state_dict()
print("state_dict keys", sorted(sd.keys()), "state ids", sorted(sd["state"].keys()))
print("group 0", {k: v for k, v in sd["param_groups"][0].items() if k in ("lr", "betas", "params")})
print("state 0 step", sd["state"][0]["step"], sorted(sd["state"][0].keys()),
      "max_exp_avg_sq" in sd["state"][3])
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": sd}, buf)
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
model2 = make_model(seed=7)
model2.load_state_dict(ckpt["model"])
opt2 = optim.Adam([
    {"params": model2[0].parameters(), "lr": 0.5},
    {"params": model2[2].weight, "lr": 0.5},
], lr=0.5)
opt2.add_param_group({"params": [model2[2].bias]})
opt2.load_state_dict(ckpt["opt"])
print("loaded lrs", [g["lr"] for g in opt2.param_groups], opt2.param_groups[1]["weight_decay"])
for o, m in ((opt, model), (opt2, model2)):
    o.zero_grad()
    F.mse_loss(m(X), Y).backward()
    o.step()
print("resumed identical", all(torch.equal(a, b) for a, b in
                               zip(model.parameters(), model2.parameters())))
print("exp_avg equal", torch.equal(opt.state[model[0].weight]["exp_avg"],
                                   opt2.state[model2[0].weight]["exp_avg"]))
try:
    optim.SGD(model2.parameters(), lr=0.1).load_state_dict(ckpt["opt"])
except ValueError as e:
    print("ValueError:", e)
# pickling whole objects (not just state_dicts) needs weights_only=False
buf = io.BytesIO()
torch.save({"opt": opt, "sched": lr_scheduler.StepLR(opt, 3)}, buf)
buf.seek(0)
whole = torch.load(buf, weights_only=False)
print("whole objects", type(whole["opt"]).__name__, type(whole["sched"]).__name__,
      len(whole["opt"].state), whole["sched"].optimizer is whole["opt"])
# an older checkpoint stored Adam's step as a Python int
old = {"state": {k: {**v, "step": 5} for k, v in sd["state"].items()},
       "param_groups": sd["param_groups"]}
opt3 = optim.Adam([{"params": model2[0].parameters()}, {"params": [model2[2].weight]},
                   {"params": [model2[2].bias]}])
opt3.load_state_dict(old)
print("old step", opt3.state_dict()["state"][0]["step"], opt3.param_groups[2]["amsgrad"])

# named parameters: the state_dict records their names; groups can't mix named and unnamed
named_opt = optim.AdamW(model.named_parameters(), lr=1e-3)
print("param_names", named_opt.state_dict()["param_groups"][0]["param_names"])
try:
    named_opt.add_param_group({"params": [nn.Parameter(torch.zeros(2))]})
except ValueError as e:
    print("ValueError:", e)

# a Tensor learning rate (as for compiled optimizers) is updated in place by schedulers
lr_t = torch.tensor(0.01)
t_opt = optim.Adam(model.parameters(), lr=lr_t)
t_sched = lr_scheduler.OneCycleLR(t_opt, max_lr=0.1, total_steps=5, cycle_momentum=False)
for _ in range(2):
    t_opt.step()
    t_sched.step()
print("tensor lr", t_opt.param_groups[0]["lr"], t_opt.param_groups[0]["lr"] is lr_t,
      t_sched.get_last_lr())

# -- learning-rate schedulers ---------------------------------------------------------------
def trace(make_sched, steps=12, lr=0.1, **opt_kw):
    o = optim.SGD([nn.Parameter(torch.zeros(1))], lr=lr, **opt_kw)
    s = make_sched(o)
    lrs = [s.get_last_lr()[0]]
    for _ in range(steps):
        o.step()
        s.step()
        lrs.append(s.get_last_lr()[0])
    return s, lrs


for label, make in [
    ("OneCycleLR", lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=12,
                                                     pct_start=0.25, anneal_strategy="linear",
                                                     div_factor=10, final_div_factor=100,
                                                     three_phase=True)),
    ("OneCycleLR-cos", lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, epochs=3,
                                                         steps_per_epoch=4)),
    ("CosineWarmRestarts", lambda o: lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001)),
    ("CyclicLR-tri2", lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                      step_size_up=2, step_size_down=3,
                                                      mode="triangular2")),
    ("CyclicLR-exp", lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                     step_size_up=3, mode="exp_range",
                                                     gamma=0.9, cycle_momentum=True)),
    ("PolynomialLR", lambda o: lr_scheduler.PolynomialLR(o, total_iters=8, power=2.0)),
    ("MultiStepLR", lambda o: lr_scheduler.MultiStepLR(o, milestones=[3, 3, 7], gamma=0.5)),
    ("ExponentialLR", lambda o: lr_scheduler.ExponentialLR(o, gamma=0.8)),
    ("LinearLR", lambda o: lr_scheduler.LinearLR(o, start_factor=0.2, end_factor=0.9,
                                                 total_iters=5)),
    ("LambdaLR", lambda o: lr_scheduler.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e / (1 + e % 3))),
    ("MultiplicativeLR", lambda o: lr_scheduler.MultiplicativeLR(o, lambda e: 0.9)),
    ("ConstantLR", lambda o: lr_scheduler.ConstantLR(o, factor=0.5, total_iters=4)),
    ("StepLR", lambda o: lr_scheduler.StepLR(o, step_size=4, gamma=0.3)),
    ("SequentialLR", lambda o: lr_scheduler.SequentialLR(
        o, schedulers=[lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=4),
                       lr_scheduler.CosineAnnealingLR(o, T_max=8, eta_min=0.01)],
        milestones=[4])),
    ("ChainedScheduler", lambda o: lr_scheduler.ChainedScheduler(
        [lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3),
         lr_scheduler.ExponentialLR(o, gamma=0.9)], optimizer=o)),
]:
    kw = {"momentum": 0.9} if label == "CyclicLR-exp" else {}
    s, lrs = trace(make, **kw)
    print(f"{label:18s} {fmt(lrs, 5)}")
    if label == "CyclicLR-exp":
        print("  momentum", round(s.optimizer.param_groups[0]["momentum"], 5))

# a scheduler's state_dict round trip: resume a cosine schedule mid-way
o = optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
s = lr_scheduler.CosineAnnealingLR(o, T_max=10, eta_min=1e-3)
for _ in range(4):
    o.step()
    s.step()
ssd = s.state_dict()
print("sched state", sorted(ssd.keys()), ssd["last_epoch"], ssd["T_max"], ssd["base_lrs"])
buf = io.BytesIO()
torch.save(ssd, buf)
buf.seek(0)
o2 = optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
s2 = lr_scheduler.CosineAnnealingLR(o2, T_max=10, eta_min=1e-3)
s2.load_state_dict(torch.load(buf))
o2.param_groups[0]["lr"] = s.get_last_lr()[0]
for _ in range(3):
    o.step()
    s.step()
    o2.step()
    s2.step()
print("resumed lrs", f"{s.get_last_lr()[0]:.6f} {s2.get_last_lr()[0]:.6f}", s2.last_epoch)

# resuming a scheduler with last_epoch but a fresh optimizer is a typical mistake
try:
    lr_scheduler.StepLR(optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1), 2, last_epoch=3)
except KeyError as e:
    print("KeyError:", e)
o = optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
for g in o.param_groups:
    g["initial_lr"] = 0.1
print("resumed StepLR", lr_scheduler.StepLR(o, 2, gamma=0.5, last_epoch=3).get_last_lr())

# ReduceLROnPlateau with threshold modes, cooldown and min_lr on two groups
o = optim.SGD([{"params": [nn.Parameter(torch.zeros(1))]},
               {"params": [nn.Parameter(torch.zeros(1))], "lr": 0.05}], lr=0.2)
plateau = lr_scheduler.ReduceLROnPlateau(o, mode="max", factor=0.3, patience=1,
                                         threshold=0.05, threshold_mode="abs", cooldown=1,
                                         min_lr=[0.01, 0.004])
hist = []
for metric in [0.5, 0.6, 0.62, 0.63, 0.64, 0.70, 0.71, 0.72, 0.73, 0.74, 0.75]:
    plateau.step(metric)
    hist.append(tuple(round(g["lr"], 5) for g in o.param_groups))
print("plateau", hist)
print("plateau state", plateau.num_bad_epochs, plateau.cooldown_counter, plateau.best,
      [round(x, 5) for x in plateau.get_last_lr()])
psd = plateau.state_dict()
print("plateau keys", sorted(k for k in psd.keys()))
try:
    lr_scheduler.ReduceLROnPlateau(o, factor=1.5)
except ValueError as e:
    print("ValueError:", e)
try:
    lr_scheduler.ReduceLROnPlateau(o, mode="avg")
except ValueError as e:
    print("ValueError:", e)
try:
    lr_scheduler.OneCycleLR(optim.SGD(p, lr=0.1), max_lr=1.0)
except ValueError as e:
    print("ValueError:", e)
try:
    lr_scheduler.CosineAnnealingWarmRestarts(optim.SGD(p, lr=0.1), T_0=0)
except ValueError as e:
    print("ValueError:", e)
try:
    lr_scheduler.CyclicLR(optim.Adam(p, lr=0.1), base_lr=0.01, max_lr=0.1)
except ValueError as e:
    print("ValueError:", e)
try:
    lr_scheduler.LinearLR(optim.SGD(p, lr=0.1), start_factor=0.0)
except ValueError as e:
    print("ValueError:", e)
try:
    o = optim.SGD(p, lr=0.1)
    lr_scheduler.SequentialLR(o, [lr_scheduler.ConstantLR(o)], milestones=[2])
except ValueError as e:
    print("ValueError:", e)

# OneCycleLR drives Adam's beta1 as its momentum
o = optim.Adam([nn.Parameter(torch.zeros(1))], lr=0.1)
oc = lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=6, base_momentum=0.8,
                             max_momentum=0.95)
betas = []
for _ in range(5):
    o.step()
    oc.step()
    betas.append(round(o.param_groups[0]["betas"][0], 5))
print("onecycle betas", betas, "initial_lr", o.param_groups[0]["initial_lr"],
      "max_lr", o.param_groups[0]["max_lr"])

# -- SWA and EMA with swa_utils --------------------------------------------------------------
class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16, momentum=0.2)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


torch.manual_seed(3)
net = BNNet()
swa_model = AveragedModel(net)
ema_model = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
opt = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
cos = lr_scheduler.CosineAnnealingLR(opt, T_max=20)
swa_sched = SWALR(opt, swa_lr=0.02, anneal_epochs=3, anneal_strategy="cos")
print(ema_model)
swa_start = 10
loader = [(X[i:i + 16], Y[i:i + 16]) for i in range(0, 64, 16)]
for epoch in range(16):
    net.train()
    for xb, yb in loader:
        opt.zero_grad()
        F.mse_loss(net(xb), yb).backward()
        opt.step()
        ema_model.update_parameters(net)
    if epoch >= swa_start:
        swa_model.update_parameters(net)
        swa_sched.step()
    else:
        cos.step()
    if epoch % 3 == 0 or epoch == 15:
        print(f"epoch {epoch:2d} lr {opt.param_groups[0]['lr']:.5f}")
print("n_averaged", swa_model.n_averaged.item(), ema_model.n_averaged.item(),
      swa_model.n_averaged.dtype)
print("swa running_mean before update_bn", f"{swa_model.module.bn.running_mean.abs().sum():.4f}")
update_bn(loader, swa_model)
net.eval()
swa_model.eval()
ema_model.eval()
with torch.no_grad():
    print(f"mse net {F.mse_loss(net(X), Y):.4f} swa {F.mse_loss(swa_model(X), Y):.4f} "
          f"ema {F.mse_loss(ema_model(X), Y):.4f}")
    print("swa bn batches tracked", swa_model.module.bn.num_batches_tracked.item(),
          "momentum restored", swa_model.module.bn.momentum)
print([k for k in swa_model.state_dict().keys()][:4], len(swa_model.state_dict()))
print(repr(swa_sched.__class__.__name__), [round(x, 5) for x in swa_sched.get_last_lr()])
try:
    SWALR(opt, swa_lr=0.01, anneal_strategy="exp")
except ValueError as e:
    print("ValueError:", e)
try:
    SWALR(opt, swa_lr=0.01, anneal_epochs=-1)
except ValueError as e:
    print("ValueError:", e)
try:  # update_bn feeds each batch (or its first element) straight to the model
    update_bn([{"x": X[:16]}], swa_model)
except (TypeError, AttributeError) as e:
    print(type(e).__name__ + ":", e)

# -- activation checkpointing, autocast, accumulation, clipping --------------------------------
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.ff(x))


class Deep(nn.Module):
    def __init__(self, use_ckpt):
        super().__init__()
        self.inp = nn.Linear(6, 8)
        self.blocks = nn.ModuleList([Block(8) for _ in range(3)])
        self.out = nn.Linear(8, 1)
        self.use_ckpt = use_ckpt

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = checkpoint(b, h, use_reentrant=False) if self.use_ckpt else b(h)
        return self.out(h)


torch.manual_seed(4)
plain = Deep(False)
ck = Deep(True)
ck.load_state_dict(plain.state_dict())
for m in (plain, ck):
    F.mse_loss(m(X), Y).backward()
print("checkpoint grads equal", all(torch.allclose(a.grad, b.grad, atol=1e-7) for a, b in
                                    zip(plain.parameters(), ck.parameters())))
print(f"grad norm {torch.linalg.vector_norm(plain.inp.weight.grad):.4f}")


def noisy(x):
    return F.dropout(x, p=0.5, training=True) * 2


torch.manual_seed(5)
xd = torch.randn(4, 3, requires_grad=True)
out = checkpoint(noisy, xd, use_reentrant=False, preserve_rng_state=True)
out.sum().backward()
print("dropout under checkpoint", torch.equal((out != 0), (xd.grad != 0)), xd.grad.sum().item())
from torch.utils.checkpoint import noop_context_fn  # noqa: E402

xd.grad = None
out = checkpoint(noisy, xd, use_reentrant=False, context_fn=noop_context_fn,
                 determinism_check="none")
print("context_fn", out.shape, out.requires_grad)
for kwargs in ({"use_reentrant": False, "determinism_check": "strict"},
               {"use_reentrant": True,
                "context_fn": lambda: (contextlib.nullcontext(), contextlib.nullcontext())}):
    try:
        checkpoint(noisy, xd, **kwargs)
        print("no error")
    except ValueError as e:
        print("ValueError:", e)

# selective activation checkpointing: keep the matmuls, recompute the cheap pointwise ops
from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts  # noqa


def save_matmuls(ctx, op, *args, **kwargs):
    if op in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default):
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


sac_block = plain.blocks[0]
xs = plain.inp(X[:4]).detach().requires_grad_()
sac_out = checkpoint(sac_block, xs, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts,
                                                  save_matmuls))
(sac_out * torch.arange(8.0)).sum().backward()
ref_x = xs.detach().clone().requires_grad_()
(sac_block(ref_x) * torch.arange(8.0)).sum().backward()
print("selective checkpoint grads match", torch.allclose(xs.grad, ref_x.grad, atol=1e-6),
      f"{xs.grad.abs().sum():.4f}")

with torch.autocast("cpu", dtype=torch.bfloat16):
    lin = plain.inp(X)
    act = torch.relu(lin)
    s = act.sum()
    soft = F.softmax(lin, dim=-1)
    print("autocast dtypes", lin.dtype, act.dtype, s.dtype, soft.dtype,
          torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    with torch.autocast("cpu", enabled=False):
        print("disabled inside", plain.inp(X).dtype)
print("after", plain.inp(X).dtype, torch.is_autocast_enabled("cpu"))
print(f"bf16 vs fp32 max diff < 0.05: {(lin.float() - plain.inp(X)).abs().max().item() < 0.05}")
print("bf16 first row", lin[0, :4])
rnn = nn.LSTM(6, 4, batch_first=True)
prelu = nn.PReLU()
with torch.autocast("cpu", dtype=torch.bfloat16):
    h = plain.inp(X)
    # (a bfloat16 input: autocast's cast of a float32 one runs torch's oneDNN bfloat16 LSTM,
    # which CPUs without AVX-512 lack, an AMD EPYC Zen 3 among them)
    seq_out, _ = rnn(X.view(8, 8, 6).bfloat16())
    print("autocast policy", h.prod(1).dtype, torch.cdist(h, h).dtype, F.mse_loss(h, h).dtype,
          prelu(h).dtype, seq_out.dtype)
    print("autocast policy", F.pad(h[None], (1, 1), mode="reflect").dtype,
          F.triplet_margin_loss(h, h.flip(0), h, margin=0.5).dtype,
          torch.linalg.vecdot(X, X).dtype, torch.cat([h, torch.zeros(2, 8)]).dtype)
try:
    torch.autocast("tpu", dtype=torch.bfloat16)
except RuntimeError as e:
    print("RuntimeError:", e)

# a custom autograd Function that must run in float32 under autocast
class ScaledSquare(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * scale

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x * ctx.scale, None


xin = torch.linspace(-1, 1, 5, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    sq = ScaledSquare.apply(xin.to(torch.bfloat16) * 1.1, 0.5)
sq.sum().backward()
print("custom_fwd", sq.dtype, sq.detach(), xin.grad)

# a common mistake: the whole loop inside autocast (autocast caches the bf16 weight casts)
torch.manual_seed(6)
small = nn.Linear(6, 1)
sgd = optim.SGD(small.parameters(), lr=0.5)
with torch.autocast("cpu", dtype=torch.bfloat16):
    for step in range(3):
        sgd.zero_grad()
        loss = F.mse_loss(small(X).float(), Y)
        loss.backward()
        sgd.step()
        print(f"loop inside autocast: step {step} loss {loss.item():.4f}")

# gradient accumulation: 4 micro-batches of 16 equal one batch of 64
torch.manual_seed(6)
acc_model = make_model()
full_model = make_model()
accum = 4
for _i, (xb, yb) in enumerate(loader):
    loss = F.mse_loss(acc_model(xb), yb) / accum
    loss.backward()
F.mse_loss(full_model(X), Y).backward()
diff = max((a.grad - b.grad).abs().max().item()
           for a, b in zip(acc_model.parameters(), full_model.parameters()))
print("accumulated grads match", diff < 1e-6)

# clipping
grads_before = [q.grad.clone() for q in acc_model.parameters()]
total = nn.utils.clip_grad_norm_(acc_model.parameters(), max_norm=0.1, norm_type=2.0,
                                 foreach=True)
after = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(q.grad)
                                              for q in acc_model.parameters()]))
print(f"clip_grad_norm_ total {total.item():.4f} after {after.item():.4f}", total.dtype,
      total.shape)
inf_norm = nn.utils.clip_grad_norm_(acc_model.parameters(), max_norm=1.0, norm_type="inf")
print(f"inf norm {inf_norm.item():.5f}")
nn.utils.clip_grad_value_(full_model.parameters(), clip_value=0.05, foreach=False)
print("clip_grad_value_ max", round(max(q.grad.abs().max().item()
                                        for q in full_model.parameters()), 6))
print("get_total_norm", f"{nn.utils.get_total_norm([g for g in grads_before]).item():.4f}")
full_model[0].weight.grad[0, 0] = float("nan")
try:
    nn.utils.clip_grad_norm_(full_model.parameters(), 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", e)
n = nn.utils.clip_grad_norm_(full_model.parameters(), 1.0, error_if_nonfinite=False)
print("nonfinite norm", n.item())
print("empty norm", nn.utils.clip_grad_norm_([], 1.0))

try:
    full_model[0].bias.grad = torch.zeros(16, dtype=torch.float16)
except RuntimeError as e:
    print("RuntimeError:", e)

# a differentiable optimizer step: learn the learning rate itself (meta-learning)
w0 = torch.ones(3, requires_grad=True)
meta_lr = torch.tensor(0.1, requires_grad=True)
fast = w0.clone()
fast.retain_grad()
inner = optim.SGD([fast], lr=meta_lr, differentiable=True)
fast.grad = torch.tensor([1.0, -2.0, 0.5])
try:
    inner.step()
    (fast ** 2).sum().backward()
    print("meta grads", fast.detach(), meta_lr.grad, w0.grad)
except RuntimeError as e:
    print("RuntimeError:", e)

# -- nn.init ---------------------------------------------------------------------------------
print("gains", [round(nn.init.calculate_gain(nl), 5) for nl in
                ("linear", "sigmoid", "tanh", "relu", "selu", "conv2d")],
      round(nn.init.calculate_gain("leaky_relu", 0.2), 5))
try:
    nn.init.calculate_gain("gelu")
except ValueError as e:
    print("ValueError:", e)
torch.manual_seed(8)
w = torch.empty(64, 32)
nn.init.kaiming_uniform_(w, a=math.sqrt(5))
print(f"kaiming_uniform a=sqrt5 bound {1 / math.sqrt(32):.4f} max {w.abs().max():.4f} "
      f"std {w.std():.4f}")
nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
print(f"kaiming fan_out {w.abs().max():.4f} {w.std():.4f}")
nn.init.kaiming_normal_(w, nonlinearity="leaky_relu")
print(f"kaiming_normal std {w.std():.4f}")
nn.init.xavier_normal_(w, gain=nn.init.calculate_gain("tanh"))
print(f"xavier_normal std {w.std():.4f}", w[0, :3])
nn.init.xavier_uniform_(w)
print(f"xavier_uniform max {w.abs().max():.4f}")
q = torch.empty(6, 4)
nn.init.orthogonal_(q, gain=2.0)
print("orthogonal qTq\n", (q.T @ q).round(decimals=3) + 0.0)
q2 = torch.empty(3, 5)
nn.init.orthogonal_(q2)
print("orthogonal wide", (q2 @ q2.T).diag().round(decimals=4))
t = torch.empty(2000)
nn.init.trunc_normal_(t, mean=0.5, std=1.0, a=-0.5, b=1.0)
print(f"trunc_normal range {t.min():.4f} {t.max():.4f} mean {t.mean():.4f}")
print("trunc sample", t[:4])
sp = torch.empty(10, 6)
nn.init.sparse_(sp, sparsity=0.3, std=0.02)
print("sparse_ zeros per column", (sp == 0).sum(0).tolist())
print("sparse_ first col", sp[:, 0])
c = torch.empty(4, 3, 3, 3)
nn.init.dirac_(c[:3])
nn.init.eye_(torch.empty(3, 3))
print("dirac center", c[:3, :, 1, 1])
nn.init.constant_(c, 0.25)
nn.init.zeros_(c[0])
nn.init.ones_(c[1])
print("const", c.sum().item())
nn.init.uniform_(c, -0.1, 0.1, generator=torch.Generator().manual_seed(3))
print(f"uniform with generator {c.sum():.4f}")
nn.init.normal_(c, mean=1.0, std=0.01)
print(f"normal mean {c.mean():.3f}")
try:
    nn.init.xavier_uniform_(torch.empty(5))
except ValueError as e:
    print("ValueError:", e)
try:
    nn.init.orthogonal_(torch.empty(3))
except ValueError as e:
    print("ValueError:", e)
try:
    nn.init.sparse_(torch.empty(2, 3, 4), 0.1)
except ValueError as e:
    print("ValueError:", e)
try:
    nn.init.kaiming_normal_(torch.empty(3, 3), mode="fan_avg")
except ValueError as e:
    print("ValueError:", e)

# a model initialised with apply(), then trained with the full recipe
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.kaiming_uniform_(m.weight, nonlinearity="tanh")
        nn.init.trunc_normal_(m.bias, std=0.02)


torch.manual_seed(9)
model = make_model(9).apply(init_weights)
opt = optim.AdamW(model.parameters(), lr=2e-2, weight_decay=1e-2, amsgrad=True)
warm = lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
decay = lr_scheduler.CosineAnnealingLR(opt, T_max=9, eta_min=1e-4)
sched = lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[3])
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.8))
for epoch in range(12):
    opt.zero_grad()
    for xb, yb in loader:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
            loss = F.mse_loss(model(xb), yb) / len(loader)
        loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    ema.update_parameters(model)
    if epoch % 3 == 2:
        with torch.no_grad():
            print(f"epoch {epoch:2d} loss {F.mse_loss(model(X), Y):.4f} gnorm {gn:.4f} "
                  f"lr {sched.get_last_lr()[0]:.5f} ema {F.mse_loss(ema(X), Y):.4f}")
print("predictions", model(X[:4]).detach().squeeze(1))
