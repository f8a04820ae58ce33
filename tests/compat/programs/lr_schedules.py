"""Learning-rate schedules as training scripts use them: the built-in schedulers step by step,
a warmup-cosine subclass, restarts by epoch, plateaus with cooldown, SWA/EMA averaging,
state_dict round trips, and the usual mistakes (stepping first, bad arguments)."""

import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(64, 8)
Y = X @ torch.randn(8, 1) + 0.1 * torch.randn(64, 1)


def mlp(seed=1):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))


def reg_loss(model):
    return F.mse_loss(model(X), Y)


def fmt(v):
    return f"{v:.5g}"


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


# ---------------------------------------------------------------- schedulers
print("== schedulers")
S = torch.optim.lr_scheduler


def run_sched(make, steps=12, lr=0.1, opt_cls=torch.optim.SGD, **okw):
    p = torch.zeros(2, requires_grad=True)
    opt = opt_cls([p], lr=lr, **okw)
    sched = make(opt)
    lrs = []
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    return opt, sched, lrs


SCHEDS = [
    ("LambdaLR", lambda o: S.LambdaLR(o, lambda e: 0.9**e)),
    ("MultiplicativeLR", lambda o: S.MultiplicativeLR(o, lambda e: 0.95)),
    ("StepLR", lambda o: S.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda o: S.MultiStepLR(o, milestones=[2, 5, 9], gamma=0.3)),
    ("ConstantLR", lambda o: S.ConstantLR(o, factor=0.25, total_iters=4)),
    ("LinearLR", lambda o: S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=6)),
    ("ExponentialLR", lambda o: S.ExponentialLR(o, gamma=0.8)),
    ("PolynomialLR", lambda o: S.PolynomialLR(o, total_iters=8, power=2.0)),
    ("CosineAnnealingLR", lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01)),
    (
        "CosineWarmRestarts",
        lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
    ),
    (
        "SequentialLR",
        lambda o: S.SequentialLR(
            o, [S.LinearLR(o, 0.2, total_iters=3), S.ExponentialLR(o, 0.7)], milestones=[4]
        ),
    ),
    (
        "ChainedScheduler",
        lambda o: S.ChainedScheduler(
            [S.ConstantLR(o, 0.5, total_iters=3), S.ExponentialLR(o, 0.9)]
        ),
    ),
]
for name, make in SCHEDS:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, sched, lrs = run_sched(make)
    print(f"{name:18s}", " ".join(f"{v:.5g}" for v in lrs))
    sd = sched.state_dict()
    print(
        "   state keys",
        sorted(k for k in sd if not k.startswith("_")),
        "last_epoch",
        sd.get("last_epoch"),
    )

for mode, cyc in [("triangular2", True), ("exp_range", False)]:
    o, sched, lrs = run_sched(
        lambda o, mode=mode, cyc=cyc: S.CyclicLR(
            o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode=mode, gamma=0.9, cycle_momentum=cyc
        ),
        steps=14,
        momentum=0.9,
    )
    print(
        f"CyclicLR {mode}",
        " ".join(f"{v:.5g}" for v in lrs),
        "mom",
        fmt(o.param_groups[0]["momentum"]),
    )
_, _, lrs = run_sched(
    lambda o: S.CyclicLR(
        o,
        0.001,
        0.01,
        step_size_up=2,
        step_size_down=4,
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.95,
    ),
    steps=8,
    opt_cls=torch.optim.Adam,
)
print("CyclicLR adam", " ".join(f"{v:.5g}" for v in lrs))
for strat in ["cos", "linear"]:
    o, sched, lrs = run_sched(
        lambda o, strat=strat: S.OneCycleLR(
            o,
            max_lr=0.5,
            total_steps=12,
            pct_start=0.3,
            anneal_strategy=strat,
            three_phase=strat == "linear",
        ),
        steps=11,
        opt_cls=torch.optim.Adam,
    )
    print(
        f"OneCycle {strat}",
        " ".join(f"{v:.5g}" for v in lrs),
        "beta1",
        fmt(o.param_groups[0]["betas"][0]),
    )
    print(
        "   initial_lr",
        fmt(o.param_groups[0]["initial_lr"]),
        "max_lr",
        fmt(o.param_groups[0]["max_lr"]),
    )

# ReduceLROnPlateau
for tmode in ["rel", "abs"]:
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    pl = S.ReduceLROnPlateau(
        opt,
        mode="min",
        factor=0.5,
        patience=1,
        threshold=0.05,
        threshold_mode=tmode,
        cooldown=2,
        min_lr=0.05,
    )
    metrics = [1.0, 0.99, 0.98, 0.97, 0.9, 0.89, 0.88, 0.87, 0.86, 0.85, 0.84, 0.5, 0.49, 0.48]
    seen = []
    for m in metrics:
        opt.step()
        pl.step(m)
        seen.append(pl.get_last_lr()[0])
    print(
        f"Plateau {tmode}",
        " ".join(f"{v:.4g}" for v in seen),
        "best",
        pl.best,
        "bad",
        pl.num_bad_epochs,
    )
pmax = S.ReduceLROnPlateau(
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1), mode="max", patience=0
)
for m in [0.1, 0.2, 0.2, 0.1]:
    pmax.step(m)
print("Plateau max", pmax.get_last_lr(), sorted(pmax.state_dict())[:6])


class WarmupCosine(S.LRScheduler):
    def __init__(self, optimizer, warmup, total, last_epoch=-1):
        self.warmup, self.total = warmup, total
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e = self.last_epoch
        if e < self.warmup:
            return [b * (e + 1) / self.warmup for b in self.base_lrs]
        prog = (e - self.warmup) / max(1, self.total - self.warmup)
        return [b * 0.5 * (1 + math.cos(math.pi * prog)) for b in self.base_lrs]


p = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD(
    [{"params": [p]}, {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.5}], lr=0.1
)
ws = WarmupCosine(opt, 3, 10)
seen = []
for _ in range(10):
    opt.step()
    ws.step()
    seen.append("/".join(f"{v:.4g}" for v in ws.get_last_lr()))
print("WarmupCosine", " ".join(seen), "base", ws.base_lrs, "epoch", ws.last_epoch)
with warnings.catch_warnings(record=True) as wl:
    warnings.simplefilter("always")
    print("get_lr()", [f"{v:.4g}" for v in ws.get_lr()])
print("warns", len(wl))
cw = S.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=1, eta_min=0.01)
for ep in [0.5, 1.25, 3.9, 4.0, 5.5]:
    cw.step(ep)
    print(
        "  warm restart epoch",
        ep,
        [f"{v:.5g}" for v in cw.get_last_lr()],
        "T_cur",
        f"{cw.T_cur:.4g}",
    )
pl = S.ReduceLROnPlateau(opt, patience=0, min_lr=[0.02, 0.3], eps=0.05)
for m in [1.0, 1.0, 1.0, 1.0]:
    pl.step(m)
print("Plateau groups", [f"{v:.4g}" for v in pl.get_last_lr()])

# SWA
model = mlp()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
swa_model = torch.optim.swa_utils.AveragedModel(model)
swa_sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=3, anneal_strategy="cos")
for _ in range(6):
    opt.zero_grad()
    reg_loss(model).backward()
    opt.step()
    swa_model.update_parameters(model)
    swa_sched.step()
print(
    "SWA",
    swa_model.n_averaged.item(),
    fmt(reg_loss(swa_model).item()),
    [f"{v:.4g}" for v in swa_sched.get_last_lr()],
)
ema = torch.optim.swa_utils.AveragedModel(
    model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9)
)
for _ in range(3):
    opt.zero_grad()
    reg_loss(model).backward()
    opt.step()
    ema.update_parameters(model)
print("EMA", ema.n_averaged.item(), fmt(ema.module[0].weight[0, 0].item()),
      fmt(model[0].weight[0, 0].item()))

# scheduler state_dict round trip
_, sched, _ = run_sched(lambda o: S.StepLR(o, step_size=2, gamma=0.5), steps=5)
sd = sched.state_dict()
p = torch.zeros(2, requires_grad=True)
o2 = torch.optim.SGD([p], lr=0.1)
s2 = S.StepLR(o2, step_size=10, gamma=0.9)
s2.load_state_dict(sd)
print("loaded StepLR", s2.step_size, s2.gamma, s2.last_epoch, s2.get_last_lr())
s2.step()
print("after step", [fmt(v) for v in s2.get_last_lr()], fmt(o2.param_groups[0]["lr"]))


# ---------------------------------------------------------------- typical mistakes
print("== mistakes")
print("scheduler step before optimizer.step")
p = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([p], lr=0.1)
sched = S.StepLR(opt, step_size=1)
show(lambda: sched.step())
print("scheduler with epoch argument")
show(lambda: sched.step(3))
print("scheduler on non-optimizer")
show(lambda: S.StepLR(object(), step_size=1))
print("OneCycleLR stepped too often")
p = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([p], lr=0.1)
oc = S.OneCycleLR(opt, max_lr=1.0, total_steps=2)
opt.step()
oc.step()
show(lambda: oc.step())
show(lambda: oc.step())
show(lambda: S.OneCycleLR(opt, max_lr=1.0))
show(lambda: S.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="quad"))
show(lambda: S.CyclicLR(opt, 0.1, 1.0, mode="bogus"))
show(lambda: S.ReduceLROnPlateau(opt, factor=1.5))
show(lambda: S.ReduceLROnPlateau(opt, mode="middle"))
show(lambda: S.MultiStepLR(opt, milestones=[3, 1]).milestones)
show(lambda: S.LinearLR(opt, start_factor=0))
