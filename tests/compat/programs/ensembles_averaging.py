"""Model ensembles, weight averaging and federated learning, as research code writes them.

An ensemble of small MLPs runs vectorized with stack_module_state + functional_call + vmap
(dropout under each randomness mode, per-model gradients by func.grad); models are copied,
flattened to vectors and back; clients train on shards and are merged by FedAvg (weighted by
data size, BatchNorm buffers averaged or not) and FedProx; SWA / EMA through AveragedModel,
SWALR and update_bn, an EMA by hand with foreach ops, and uniform / greedy model soups.
Typical mistakes are caught and printed.
"""

import copy
import math
import tempfile
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def show_error(label, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the program prints what a user would see
        msg = str(e).strip().splitlines()
        print(f"{label}: {type(e).__name__}: {' | '.join(m.strip() for m in msg[:4])}")
    else:
        print(f"{label}: no error")


def norm_of(model):
    return torch.sqrt(sum((p.detach() ** 2).sum() for p in model.parameters())).item()


# ---------------------------------------------------------------- data: two blobs + noise
def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    centers = torch.tensor([[1.5, 0.0, -1.0, 0.5], [-1.0, 1.5, 0.5, -0.5], [0.0, -1.5, 1.0, 1.0]])
    x = centers[y] + 0.9 * torch.randn(n, 4, generator=g)
    return x, y


x_train, y_train = make_data(240, 1)
x_test, y_test = make_data(120, 2)
print("train", tuple(x_train.shape), x_train.dtype, "classes", torch.bincount(y_train).tolist())


class MLP(nn.Module):
    def __init__(self, hidden=16, p=0.0):
        super().__init__()
        self.fc1 = nn.Linear(4, hidden)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(hidden, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 12)
        self.bn = nn.BatchNorm1d(12)
        self.fc2 = nn.Linear(12, 3)
        self.register_buffer("seen", torch.zeros((), dtype=torch.long))
        self.register_buffer("cache", torch.zeros(3), persistent=False)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


def accuracy(model, x=x_test, y=y_test):
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    model.train()
    return acc


def train(model, x, y, epochs=30, lr=0.1, prox_mu=0.0, global_params=None):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for _ in range(epochs):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if prox_mu > 0:
            prox = sum(((p - g) ** 2).sum() for p, g in zip(model.parameters(), global_params))
            loss = loss + prox_mu / 2 * prox
        loss.backward()
        opt.step()
    return loss.item()


# ---------------------------------------------------------------- 1. vectorized ensemble
print("\n== vmap ensemble ==")
models = [MLP(p=0.0) for _ in range(5)]
params, buffers = stack_module_state(models)
print("stacked keys", list(params.keys()))
print("stacked shapes", [tuple(v.shape) for v in params.values()], "buffers", len(buffers))
print("stacked leaf", params["fc1.weight"].is_leaf, params["fc1.weight"].requires_grad)
base = copy.deepcopy(models[0]).to("meta")
print("meta base", base.fc1.weight.device, base.fc1.weight.shape)


def fmodel(p, b, x):
    return functional_call(base, (p, b), (x,))


minibatch = x_test[:8]
same_batch = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
loop = torch.stack([m(minibatch) for m in models])
print(
    "same-batch out",
    tuple(same_batch.shape),
    "matches loop",
    torch.allclose(same_batch, loop, atol=1e-6),
)
per_model_batches = x_test[:40].reshape(5, 8, 4)
diff_batch = vmap(fmodel)(params, buffers, per_model_batches)
print("diff-batch out", tuple(diff_batch.shape), f"{diff_batch.sum().item():.5f}")
print(
    "diff-batch model 3 matches",
    torch.allclose(diff_batch[3], models[3](per_model_batches[3]), atol=1e-6),
)

# dropout inside vmap: randomness modes
dmodels = [MLP(p=0.5) for _ in range(3)]
dparams, dbuffers = stack_module_state(dmodels)
dbase = copy.deepcopy(dmodels[0]).to("meta")


def dmodel(p, b, x):
    return functional_call(dbase, (p, b), (x,))


ones = torch.ones(3, 6, 4)
for mode in ("different", "same"):
    torch.manual_seed(7)
    out = vmap(dmodel, randomness=mode)(dparams, dbuffers, ones)
    h = vmap(lambda p, x: F.dropout(torch.ones(2, 5), 0.5), randomness=mode)(dparams, ones)
    masks_equal = bool((h[0] == h[1]).all() and (h[1] == h[2]).all())
    zeros = int((h == 0).sum())
    print(f"randomness={mode}: out {tuple(out.shape)} zeros {zeros} masks equal {masks_equal}")
show_error("randomness=error", lambda: vmap(dmodel, randomness="error")(dparams, dbuffers, ones))
dbase.eval()
evald = vmap(dmodel, randomness="error")(dparams, dbuffers, ones)
print("eval mode under randomness=error", tuple(evald.shape), f"{evald.mean().item():.5f}")

# ensemble prediction, per-model accuracy
for i, m in enumerate(models):
    train(m, x_train, y_train, epochs=20 + 5 * i, lr=0.05)
params, buffers = stack_module_state(models)
logits = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x_test)
per_acc = (logits.argmax(-1) == y_test).float().mean(1)
print("per-model acc", [f"{a:.4f}" for a in per_acc.tolist()])
ens_prob = logits.softmax(-1).mean(0)
print("ensemble acc", f"{(ens_prob.argmax(-1) == y_test).float().mean().item():.4f}")
print("ensemble nll", f"{F.nll_loss(ens_prob.log(), y_test).item():.5f}")
disagree = (logits.argmax(-1) != logits.argmax(-1)[0]).any(0).float().mean()
print(
    "disagreement", f"{disagree.item():.4f}", "param norms", [f"{norm_of(m):.4f}" for m in models]
)


# per-model gradients via grad under vmap
def loss_fn(p, b, x, y):
    return F.cross_entropy(functional_call(base, (p, b), (x,)), y)


grads = vmap(grad(loss_fn), in_dims=(0, 0, None, None))(params, buffers, x_train[:32], y_train[:32])
print("grad keys", sorted(grads.keys()))
print("grad norms", [f"{g.norm().item():.5f}" for g in grads["fc2.weight"]])
m2 = models[2]
m2.zero_grad()
F.cross_entropy(m2(x_train[:32]), y_train[:32]).backward()
print(
    "grad[2] matches backward",
    torch.allclose(grads["fc1.weight"][2], m2.fc1.weight.grad, atol=1e-6),
)
with torch.no_grad():
    for k in params:
        params[k] -= 0.1 * grads[k]
print(
    "after ensemble SGD step", f"{params['fc2.bias'].sum().item():.5f}", params["fc2.bias"].grad_fn
)

# typical mistakes
show_error("mixed archs", lambda: stack_module_state([MLP(16), MLP(8)]))
mixed = stack_module_state([MLP(), MLP().double()])[0]
print("mixed dtypes stack to", mixed["fc1.weight"].dtype, mixed["fc1.bias"].requires_grad)
show_error("mixed dtypes call", lambda: vmap(fmodel, in_dims=(0, 0, None))(mixed, {}, x_test[:2]))
partial = {k: v[0] for k, v in params.items() if k != "fc2.bias"}
show_error("missing key", lambda: functional_call(base, partial, (x_test[:2],)))
partial_real = {k: v[0].detach() for k, v in params.items() if k != "fc2.bias"}
out = functional_call(models[0], partial_real, (x_test[:2],))
print("missing key on real module", tuple(out.shape), f"{out.sum().item():.5f}")
show_error(
    "numpy value", lambda: functional_call(models[0], {"fc1.bias": [0.0] * 16}, (x_test[:2],))
)
show_error(
    "wrong path",
    lambda: functional_call(models[0], {"layer1.weight": torch.ones(1)}, (x_test[:2],)),
)
half_frozen = [MLP(), MLP()]
half_frozen[0].fc1.requires_grad_(False)
show_error("partly frozen", lambda: stack_module_state(half_frozen))
frozen_p, _ = stack_module_state([m.requires_grad_(False) for m in half_frozen])
print("all frozen stack", frozen_p["fc1.weight"].requires_grad, frozen_p["fc2.bias"].is_leaf)
show_error("strict", lambda: functional_call(models[0], partial_real, (x_test[:2],), strict=True))
extra = dict(partial_real, **{"fc2.bias": params["fc2.bias"][0].detach(), "head.w": torch.ones(1)})
show_error(
    "unexpected strict", lambda: functional_call(models[0], extra, (x_test[:2],), strict=True)
)
show_error(
    "vmap size mismatch", lambda: vmap(fmodel)(params, buffers, x_test[:12].reshape(3, 4, 4))
)

# ---------------------------------------------------------------- 2. copies and vectors
print("\n== copies and vectors ==")
src = models[0]
clone = copy.deepcopy(src)
print("deepcopy shares storage", clone.fc1.weight.data_ptr() == src.fc1.weight.data_ptr())
vec = parameters_to_vector(src.parameters())
print("vector", tuple(vec.shape), f"{vec.norm().item():.5f}", vec.grad_fn.__class__.__name__)
vector_to_parameters(torch.zeros_like(vec), clone.parameters())
print("zeroed clone norm", norm_of(clone), "source norm", f"{norm_of(src):.5f}")
vector_to_parameters(vec.detach() * 0.5, clone.parameters())
print("half clone norm", f"{norm_of(clone):.5f}", "is_leaf", clone.fc1.weight.is_leaf)
show_error(
    "vector_to_parameters non-tensor", lambda: vector_to_parameters([1.0], clone.parameters())
)
vecs = torch.stack([parameters_to_vector(m.parameters()).detach() for m in models])
cos = F.cosine_similarity(vecs[:, None], vecs[None], dim=-1)
print("pairwise cosine\n", cos)
print("distance to mean", [f"{d:.4f}" for d in (vecs - vecs.mean(0)).norm(dim=1).tolist()])

# ---------------------------------------------------------------- 3. federated averaging
print("\n== FedAvg ==")
torch.manual_seed(3)
sizes = [40, 80, 120]
shards = torch.randperm(240).split(sizes)
global_model = BNNet()
print("state_dict keys", list(global_model.state_dict().keys()))
print("named_buffers", [(n, tuple(b.shape)) for n, b in global_model.named_buffers()])
print(
    "num_batches_tracked",
    global_model.bn.num_batches_tracked.dtype,
    global_model.bn.num_batches_tracked.item(),
)


def fedavg(states, weights, average_ints=False):
    total = sum(weights)
    out = OrderedDict()
    for k in states[0]:
        if states[0][k].is_floating_point():
            out[k] = sum(s[k] * (w / total) for s, w in zip(states, weights))
        elif average_ints:
            out[k] = (
                torch.stack([s[k] for s in states]).float().mean().round().to(states[0][k].dtype)
            )
        else:
            out[k] = states[0][k].clone()
    return out


for rnd in range(3):
    client_states = []
    losses = []
    for idx in shards:
        local = copy.deepcopy(global_model)
        losses.append(train(local, x_train[idx], y_train[idx], epochs=5, lr=0.05))
        local.seen += len(idx)
        client_states.append(local.state_dict())
    new_state = fedavg(client_states, sizes, average_ints=(rnd == 2))
    res = global_model.load_state_dict(new_state)
    print(
        f"round {rnd}: losses {[f'{v:.4f}' for v in losses]} acc {accuracy(global_model):.4f}",
        f"nbt {global_model.bn.num_batches_tracked.item()} seen {global_model.seen.item()}",
        res,
    )
print("running_mean", global_model.bn.running_mean[:4])
print("running_var", global_model.bn.running_var[:4])
print("global norm", f"{norm_of(global_model):.5f}")

# load_state_dict variants
sd = global_model.state_dict()
print(
    "cache in state_dict",
    "cache" in sd,
    "keep_vars grad",
    global_model.state_dict(keep_vars=True)["fc1.weight"].requires_grad,
)
print(
    "state_dict tensors detached",
    sd["fc1.weight"].requires_grad,
    sd["fc1.weight"].data_ptr() == global_model.fc1.weight.data_ptr(),
)
partial_sd = {k: v for k, v in sd.items() if not k.startswith("bn.")}
partial_sd["extra.scale"] = torch.ones(1)
other = BNNet()
res = other.load_state_dict(partial_sd, strict=False)
print("missing", res.missing_keys)
print("unexpected", res.unexpected_keys)
print(
    "result type",
    type(res).__name__,
    "fc1 equal",
    torch.equal(other.fc1.weight, global_model.fc1.weight),
)
show_error("strict load", lambda: BNNet().load_state_dict(partial_sd))
bad = dict(sd)
bad["fc2.weight"] = torch.zeros(4, 12)
show_error("size mismatch", lambda: BNNet().load_state_dict(bad))
show_error("size mismatch non-strict", lambda: BNNet().load_state_dict(bad, strict=False))
target = BNNet()
old_w = target.fc1.weight
target.load_state_dict(sd)
print("copy keeps param object", target.fc1.weight is old_w, type(target.fc1.weight).__name__)
target.load_state_dict(sd, assign=True)
print(
    "assign replaces param",
    target.fc1.weight is old_w,
    type(target.fc1.weight).__name__,
    target.fc1.weight.requires_grad,
    target.fc1.weight.data_ptr() == sd["fc1.weight"].data_ptr(),
)
with tempfile.TemporaryDirectory() as d:
    torch.save(sd, f"{d}/global.pt")
    loaded = torch.load(f"{d}/global.pt", weights_only=True)
print(
    "reloaded keys equal",
    list(loaded) == list(sd),
    "values equal",
    all(torch.equal(loaded[k], sd[k]) for k in sd),
)

# FedProx
print("\n== FedProx ==")
torch.manual_seed(4)
gmodel = MLP()
gparams = [p.detach().clone() for p in gmodel.parameters()]
for mu in (0.0, 0.1, 1.0):
    local = copy.deepcopy(gmodel)
    loss = train(
        local,
        x_train[shards[0]],
        y_train[shards[0]],
        epochs=15,
        lr=0.1,
        prox_mu=mu,
        global_params=gparams,
    )
    drift = torch.sqrt(sum(((p - g) ** 2).sum() for p, g in zip(local.parameters(), gparams)))
    print(f"mu={mu}: loss {loss:.5f} drift {drift.item():.5f}")

# ---------------------------------------------------------------- 4. SWA / EMA
print("\n== SWA and EMA ==")
torch.manual_seed(5)
net = BNNet()
swa = AveragedModel(net)
ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9))
ema_buf = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
print("swa keys", list(swa.state_dict().keys()))
print("n_averaged", swa.n_averaged, swa.n_averaged.dtype)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
sched = SWALR(opt, swa_lr=0.02, anneal_epochs=3, anneal_strategy="cos")
loader = DataLoader(TensorDataset(x_train, y_train), batch_size=48, shuffle=True)
lrs = []
for epoch in range(6):
    for xb, yb in loader:
        opt.zero_grad()
        F.cross_entropy(net(xb), yb).backward()
        opt.step()
    if epoch >= 2:
        swa.update_parameters(net)
    ema.update_parameters(net)
    ema_buf.update_parameters(net)
    sched.step()
    lrs.append(opt.param_groups[0]["lr"])
print("SWALR cos lrs", [f"{v:.5f}" for v in lrs])
print("n_averaged", swa.n_averaged.item(), ema.n_averaged.item())
print("swa bn running_mean before update_bn", swa.module.bn.running_mean[:3])
update_bn(loader, swa)
print("swa bn running_mean after update_bn", swa.module.bn.running_mean[:3])
print(
    "swa nbt", swa.module.bn.num_batches_tracked.item(), "momentum restored", swa.module.bn.momentum
)
print("ema_buf running_var", ema_buf.module.bn.running_var[:3])
print(
    "acc net/swa/ema/ema_buf",
    f"{accuracy(net):.4f} {accuracy(swa):.4f} {accuracy(ema):.4f} {accuracy(ema_buf):.4f}",
)
print(
    "norms net/swa/ema", f"{norm_of(net):.5f} {norm_of(swa.module):.5f} {norm_of(ema.module):.5f}"
)
opt2 = torch.optim.SGD(MLP().parameters(), lr=0.5)
lin = SWALR(opt2, swa_lr=0.05, anneal_epochs=4, anneal_strategy="linear")
lin_lrs = []
for _ in range(6):
    opt2.step()
    lin.step()
    lin_lrs.append(opt2.param_groups[0]["lr"])
print("SWALR linear lrs", [f"{v:.5f}" for v in lin_lrs], lin.get_last_lr())
show_error("SWALR bad strategy", lambda: SWALR(opt2, swa_lr=0.05, anneal_strategy="exp"))
show_error("SWALR bad epochs", lambda: SWALR(opt2, swa_lr=0.05, anneal_epochs=-1))

# EMA by hand
print("\n== hand EMA ==")
torch.manual_seed(6)
student = MLP()
teacher = copy.deepcopy(student).requires_grad_(False)
teacher2 = copy.deepcopy(student).requires_grad_(False)
teacher3 = copy.deepcopy(student).requires_grad_(False)
opt = torch.optim.Adam(student.parameters(), lr=0.01)
decay = 0.95
for _ in range(20):
    opt.zero_grad()
    F.cross_entropy(student(x_train), y_train).backward()
    opt.step()
    with torch.no_grad():
        sp = list(student.parameters())
        torch._foreach_lerp_(list(teacher.parameters()), sp, 1 - decay)
        tp2 = list(teacher2.parameters())
        torch._foreach_mul_(tp2, decay)
        torch._foreach_add_(tp2, sp, alpha=1 - decay)
        for t3, s in zip(teacher3.parameters(), sp):
            t3.lerp_(s, 1 - decay)
d12 = max((a - b).abs().max().item() for a, b in zip(teacher.parameters(), teacher2.parameters()))
d13 = max((a - b).abs().max().item() for a, b in zip(teacher.parameters(), teacher3.parameters()))
print("foreach lerp vs mul+add", d12 < 1e-6, "vs lerp_", d13 < 1e-6)
print("teacher norm", f"{norm_of(teacher):.5f}", "student norm", f"{norm_of(student):.5f}")
print("teacher acc", f"{accuracy(teacher):.4f}", "student acc", f"{accuracy(student):.4f}")
print("teacher requires_grad", teacher.fc1.weight.requires_grad, teacher.fc1.weight.grad)
w = torch.tensor([1.0, 2.0, 3.0])
print("lerp tensor weight", torch.lerp(w, torch.zeros(3), torch.tensor([0.0, 0.5, 1.0])))
print("foreach_lerp scalar", torch._foreach_lerp([w, w * 2], [torch.zeros(3)] * 2, 0.25))

# ---------------------------------------------------------------- 5. model soups
print("\n== model soups ==")
torch.manual_seed(8)
pretrained = MLP(hidden=24)
train(pretrained, x_train, y_train, epochs=10, lr=0.05)
ingredients = []
for i, (lr, ep) in enumerate([(0.02, 10), (0.05, 15), (0.1, 10), (0.2, 20)]):
    m = copy.deepcopy(pretrained)
    torch.manual_seed(100 + i)
    perm = torch.randperm(240)[:160]
    train(m, x_train[perm], y_train[perm], epochs=ep, lr=lr)
    ingredients.append(m)
val_x, val_y = x_test[:60], y_test[:60]
scores = [accuracy(m, val_x, val_y) for m in ingredients]
print("ingredient val acc", [f"{s:.4f}" for s in scores])

soup = copy.deepcopy(pretrained)
with torch.no_grad():
    for name, p in soup.named_parameters():
        p.copy_(torch.stack([dict(m.named_parameters())[name] for m in ingredients]).mean(0))
print("uniform soup acc", f"{accuracy(soup, val_x, val_y):.4f}", f"{accuracy(soup):.4f}")

order = sorted(range(len(ingredients)), key=lambda i: -scores[i])
chosen = [order[0]]
best = scores[order[0]]
for i in order[1:]:
    cand_states = [ingredients[j].state_dict() for j in chosen + [i]]
    cand = copy.deepcopy(pretrained)
    cand.load_state_dict(
        {k: torch.stack([s[k] for s in cand_states]).mean(0) for k in cand_states[0]}
    )
    acc = accuracy(cand, val_x, val_y)
    keep = acc >= best
    print(f"try {i}: acc {acc:.4f} keep {keep}")
    if keep:
        chosen.append(i)
        best = acc
print("greedy soup", chosen, f"{best:.4f}")

# in-place averaging under no_grad, and the mistake of doing it with grad on
avg = copy.deepcopy(ingredients[0])
with torch.no_grad():
    for p, *qs in zip(avg.parameters(), *(m.parameters() for m in ingredients[1:])):
        p.add_(sum(qs)).div_(len(ingredients))
print(
    "in-place avg matches soup",
    all(torch.allclose(a, b, atol=1e-6) for a, b in zip(avg.parameters(), soup.parameters())),
)
show_error("in-place on leaf", lambda: avg.fc1.weight.mul_(0.5))
interp = []
for alpha in (0.0, 0.25, 0.5, 0.75, 1.0):
    mix = copy.deepcopy(pretrained)
    with torch.no_grad():
        for p, a, b in zip(mix.parameters(), pretrained.parameters(), ingredients[3].parameters()):
            p.copy_(torch.lerp(a, b, alpha))
    interp.append(F.cross_entropy(mix(x_test), y_test).item())
print("linear interpolation loss", [f"{v:.5f}" for v in interp])
print(
    "barrier", f"{max(interp) - max(interp[0], interp[-1]):.5f}", "final", math.isfinite(interp[-1])
)

# ---------------------------------------------------------------- 6. CNN ensemble with BatchNorm
print("\n== CNN ensemble ==")
torch.manual_seed(9)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout2d(0.25)
        self.head = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.head(self.drop(h).flatten(1))


cnns = [SmallCNN() for _ in range(4)]
images = torch.randn(6, 1, 8, 8)
cparams, cbuffers = stack_module_state(cnns)
print("cnn buffers", {k: tuple(v.shape) for k, v in cbuffers.items()})
cbase = copy.deepcopy(cnns[0]).to("meta")


def cnn_call(p, b, x):
    return functional_call(cbase, (p, b), (x,))


cbase.eval()
for m in cnns:
    m.eval()
ceval = vmap(cnn_call, in_dims=(0, 0, None))(cparams, cbuffers, images)
cloop = torch.stack([m(images) for m in cnns])
print("cnn eval", tuple(ceval.shape), "matches loop", torch.allclose(ceval, cloop, atol=1e-5))
cbase.train()
torch.manual_seed(10)
ctrain = vmap(cnn_call, in_dims=(0, 0, None), randomness="different")(cparams, cbuffers, images)
print("cnn train", tuple(ctrain.shape), f"{ctrain.abs().mean().item():.5f}")
print(
    "batched running_mean updated",
    f"{cbuffers['bn.running_mean'].abs().sum().item():.5f}",
    "nbt",
    cbuffers["bn.num_batches_tracked"].tolist(),
)
cbase.eval()
probs = ceval.softmax(-1)
mean_p = probs.mean(0)
total = torch.distributions.Categorical(probs=mean_p).entropy()
aleatoric = torch.distributions.Categorical(probs=probs).entropy().mean(0)
print("total entropy", total)
print("mutual information", total - aleatoric)
bn_as_params = {k: nn.Parameter(v[0].clone()) for k, v in cbuffers.items() if v.is_floating_point()}
show_error("buffers as Parameters", lambda: functional_call(cnns[0], bn_as_params, (images,)))
chunked = vmap(cnn_call, in_dims=(0, 0, None), chunk_size=2)(cparams, cbuffers, images[:2])
print("chunk_size=2", tuple(chunked.shape))
moved = vmap(cnn_call, in_dims=(0, 0, None), out_dims=1)(cparams, cbuffers, images[:2])
print("out_dims=1", tuple(moved.shape))


def loss_aux(p, b, x, y):
    out = functional_call(cbase, (p, b), (x,))
    return F.cross_entropy(out, y), out.argmax(-1)


targets = torch.tensor([0, 1, 2, 0, 1, 2])
((g, preds),) = [
    vmap(grad(loss_aux, has_aux=True), in_dims=(0, 0, None, None))(
        cparams, cbuffers, images, targets
    )
]
print("grad has_aux", tuple(g["conv.weight"].shape), preds.tolist())
gv = vmap(torch.func.grad_and_value(loss_aux, has_aux=True), in_dims=(0, 0, None, None))
(g2, (vals, _)) = gv(cparams, cbuffers, images, targets)
print("grad_and_value losses", [f"{v:.5f}" for v in vals.tolist()])
print("head grad norms", [f"{v:.5f}" for v in g2["head.weight"].flatten(1).norm(dim=1).tolist()])

# ---------------------------------------------------------------- 7. more averaging tools
print("\n== averaging tools ==")
torch.manual_seed(11)
net = MLP()
custom = AveragedModel(net, avg_fn=lambda avg, new, n: avg + (new - avg) / (n + 1))
ema_single = AveragedModel(net, avg_fn=torch.optim.swa_utils.get_ema_avg_fn(0.8))
swa_multi = AveragedModel(net, multi_avg_fn=torch.optim.swa_utils.get_swa_multi_avg_fn())
opt = torch.optim.SGD(net.parameters(), lr=0.2)
for _ in range(5):
    opt.zero_grad()
    F.cross_entropy(net(x_train), y_train).backward()
    opt.step()
    for avg_model in (custom, ema_single, swa_multi):
        avg_model.update_parameters(net)
print(
    "custom vs swa_multi",
    max((a - b).abs().max().item() for a, b in zip(custom.parameters(), swa_multi.parameters()))
    < 1e-6,
)
print(
    "ema single norm",
    f"{norm_of(ema_single.module):.5f}",
    "swa norm",
    f"{norm_of(swa_multi.module):.5f}",
)
print("averaged forward", ema_single(x_test[:2]))
two_groups = torch.optim.SGD(
    [{"params": net.fc1.parameters(), "lr": 0.1}, {"params": net.fc2.parameters(), "lr": 0.01}],
    lr=0.1,
)
sw = SWALR(two_groups, swa_lr=[0.05, 0.002], anneal_epochs=2, anneal_strategy="linear")
for _ in range(3):
    two_groups.step()
    sw.step()
    print("two-group lrs", [f"{g['lr']:.5f}" for g in two_groups.param_groups])

# naive averaging of every key: the integer counter is the typical mistake
states = [BNNet().state_dict() for _ in range(3)]
show_error(
    "mean of long buffer",
    lambda: {k: torch.stack([s[k] for s in states]).mean(0) for k in states[0]},
)
double_sd = {k: v.double() if v.is_floating_point() else v for k, v in states[0].items()}
m64 = BNNet()
m64.load_state_dict(double_sd)
print(
    "float64 state into float32 model",
    m64.fc1.weight.dtype,
    torch.equal(m64.fc1.weight, states[0]["fc1.weight"]),
)
print("state_dict metadata", sorted(states[0]._metadata.keys())[:3], states[0]._metadata["bn"])
show_error("load non-mapping", lambda: m64.load_state_dict([1, 2]))

# ---------------------------------------------------------------- 8. FedAvg idioms, printed state
print("\n== FedAvg idioms ==")
torch.manual_seed(12)
clients = [BNNet() for _ in range(3)]
for c, idx in zip(clients, shards):
    train(c, x_train[idx], y_train[idx], epochs=3, lr=0.05)
client_sds = [c.state_dict() for c in clients]
wts = torch.tensor(sizes, dtype=torch.float32)
wts = wts / wts.sum()
print("client weights", wts)
by_einsum = {
    k: torch.einsum("c,c...->...", wts, torch.stack([s[k] for s in client_sds]))
    for k in client_sds[0]
    if client_sds[0][k].is_floating_point()
}
by_tensordot = {
    k: torch.tensordot(wts, torch.stack([s[k] for s in client_sds]), dims=1) for k in by_einsum
}
by_loop = {}
for k in by_einsum:
    acc = torch.zeros_like(client_sds[0][k])
    for w_c, s in zip(wts, client_sds):
        acc += w_c * s[k]
    by_loop[k] = acc
print(
    "einsum vs tensordot",
    max((by_einsum[k] - by_tensordot[k]).abs().max().item() for k in by_einsum) < 1e-6,
)
print(
    "einsum vs loop", max((by_einsum[k] - by_loop[k]).abs().max().item() for k in by_einsum) < 1e-6
)
server = BNNet()
with torch.no_grad():
    sd_server = server.state_dict()
    for k, v in by_einsum.items():
        sd_server[k].copy_(v)
    sd_server["bn.num_batches_tracked"].copy_(max(s["bn.num_batches_tracked"] for s in client_sds))
print(
    "server took averages in place",
    torch.equal(server.fc2.bias, by_einsum["fc2.bias"]),
    server.bn.num_batches_tracked,
)
print("fc2.bias", server.fc2.bias)
print("bn.running_var", server.bn.running_var)
print("server acc", f"{accuracy(server):.4f}", "norm", f"{norm_of(server):.5f}")
deltas = [
    parameters_to_vector(c.parameters()) - parameters_to_vector(server.parameters())
    for c in clients
]
print("client drift norms", [f"{d.norm().item():.5f}" for d in deltas])
print("update cosine", f"{F.cosine_similarity(deltas[0], deltas[1], dim=0).item():.5f}")
wrong_prefix = {"module." + k: v for k, v in server.state_dict().items()}
res = BNNet().load_state_dict(wrong_prefix, strict=False)
print("prefixed keys: missing", len(res.missing_keys), "unexpected", res.unexpected_keys[:2])
stripped = {k.removeprefix("module."): v for k, v in wrong_prefix.items()}
print("stripped", BNNet().load_state_dict(stripped))
swa_server = AveragedModel(server)
show_error(
    "AveragedModel from plain state", lambda: swa_server.load_state_dict(server.state_dict())
)
print("AveragedModel.module load", swa_server.module.load_state_dict(server.state_dict()))
small = {k: v for k, v in list(server.state_dict().items())[:3]}
print("first three", small)

# ---------------------------------------------------------------- 9. training the stacked ensemble
print("\n== stacked ensemble training ==")
torch.manual_seed(13)
members = [MLP(hidden=12) for _ in range(4)]
sparams, sbuffers = stack_module_state(members)
sbase = copy.deepcopy(members[0]).to("meta")
sopt = torch.optim.Adam(sparams.values(), lr=0.02)


def member_loss(p, b, x, y):
    return F.cross_entropy(functional_call(sbase, (p, b), (x,)), y)


batch_idx = torch.randint(0, 240, (4, 32))
for step in range(25):
    xb, yb = x_train[batch_idx], y_train[batch_idx]  # a different batch per member
    grads, losses = vmap(torch.func.grad_and_value(member_loss))(sparams, sbuffers, xb, yb)
    for k, v in sparams.items():
        v.grad = grads[k]
    sopt.step()
    sopt.zero_grad()
    batch_idx = torch.randint(0, 240, (4, 32))
    if step % 8 == 0:
        print(f"step {step}: member losses {[f'{v:.4f}' for v in losses.tolist()]}")
print(
    "adam state keys",
    sorted(sopt.state[sparams["fc1.weight"]].keys()),
    sopt.state[sparams["fc1.weight"]]["exp_avg"].shape,
)
with torch.no_grad():
    out = vmap(lambda p, b: functional_call(sbase, (p, b), (x_test,)))(sparams, sbuffers)
print("member acc", [f"{a:.4f}" for a in (out.argmax(-1) == y_test).float().mean(1).tolist()])
print("ensemble acc", f"{(out.softmax(-1).mean(0).argmax(-1) == y_test).float().mean().item():.4f}")
for i, m in enumerate(members):  # write the trained members back into ordinary modules
    m.load_state_dict({k: v[i] for k, v in sparams.items()})
print("member 2 acc after unstack", f"{accuracy(members[2]):.4f}", members[2].fc1.weight.is_leaf)
clip = torch.nn.utils.clip_grad_norm_
tmp = MLP()
F.cross_entropy(tmp(x_train), y_train).backward()
print(
    "clip total norm",
    f"{clip(tmp.parameters(), 0.5).item():.5f}",
    f"{clip(tmp.parameters(), 0.5, foreach=True).item():.5f}",
)

# EMA with decay warm-up, written with lerp_ and a tensor weight
ema_model = copy.deepcopy(members[0]).requires_grad_(False)
src_opt = torch.optim.SGD(members[0].parameters(), lr=0.05)
for step in range(12):
    src_opt.zero_grad()
    F.cross_entropy(members[0](x_train), y_train).backward()
    src_opt.step()
    d = min(0.99, (1 + step) / (10 + step))
    with torch.no_grad():
        for e, s in zip(ema_model.parameters(), members[0].parameters()):
            e.lerp_(s, torch.tensor(1 - d))
print("warm-up ema norm", f"{norm_of(ema_model):.5f}", "acc", f"{accuracy(ema_model):.4f}")
