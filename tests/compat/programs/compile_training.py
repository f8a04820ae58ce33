"""torch.compile in ordinary CPU training code: the module wrapper, decorated functions and
train steps, modes, backends, recompiles, graph breaks, and the mistakes users make."""

import copy
import io
import os
import tempfile

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def r(t, nd=4):
    """A tensor's values rounded, as text (compiled numerics may differ in last bits)."""
    return [round(v, nd) + 0.0 for v in t.detach().flatten().tolist()]


# --- the module wrapper -------------------------------------------------------------
class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.bn(self.fc1(x)))))


net = SmallNet()
cnet = torch.compile(net, backend="eager")
print(type(cnet).__name__, isinstance(cnet, nn.Module), cnet._orig_mod is net)
print("compiled keys:", list(cnet.state_dict().keys())[:4])
print("orig keys:", list(net.state_dict().keys())[:4])
print("named_parameters:", [n for n, _ in cnet.named_parameters()])
print("same weight object:", cnet.fc1.weight is net.fc1.weight, cnet.fc1.in_features)
print("parameter count:", sum(p.numel() for p in cnet.parameters()))
print(cnet)

x = torch.randn(8, 6)
cnet.train()
print("training flags:", cnet.training, net.training, net.drop.training)
out_a = cnet(x)
out_b = cnet(x)
print("train mode, dropout differs between calls:", not torch.equal(out_a, out_b))
print("running_mean after 2 train calls:", r(net.bn.running_mean[:4]))
print("num_batches_tracked:", net.bn.num_batches_tracked.item())
cnet.eval()
print("training flags:", cnet.training, net.training, net.drop.training)
with torch.no_grad():
    e1 = cnet(x)
    e2 = cnet(x)
    eager = net(x)
print("eval mode deterministic:", torch.equal(e1, e2), "max |compiled - eager|:",
      round((e1 - eager).abs().max().item(), 6))
print("num_batches_tracked after eval:", net.bn.num_batches_tracked.item())

# saving through the wrapper, and the usual fix for the prefix
buf = io.BytesIO()
torch.save(cnet.state_dict(), buf)
buf.seek(0)
sd = torch.load(buf)
fresh = SmallNet()
try:
    fresh.load_state_dict(sd)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
clean = {k.removeprefix("_orig_mod."): v for k, v in sd.items()}
print(fresh.load_state_dict(clean))
print("loaded equal:", torch.equal(fresh.fc2.weight, net.fc2.weight))
res = cnet.load_state_dict(cnet.state_dict())
print("reload through the wrapper:", res.missing_keys, res.unexpected_keys)
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "orig.pt")
    torch.save(cnet._orig_mod.state_dict(), path)
    sd2 = torch.load(path)
    print("saved _orig_mod keys:", list(sd2)[:3], len(sd2))

# --- @torch.compile on functions -----------------------------------------------------
@torch.compile
def gelu_mlp(x, w1, w2):
    return F.gelu(x @ w1) @ w2


w1, w2 = torch.randn(6, 10), torch.randn(10, 2)
y1 = gelu_mlp(x, w1, w2)
print("default backend:", list(y1.shape), r(y1[0]),
      torch.allclose(y1, F.gelu(x @ w1) @ w2, atol=1e-5))


@torch.compile(backend="aot_eager", mode="reduce-overhead")
def scaled(x, s):
    return (x * s).tanh().sum(dim=1)


@torch.compile(backend="eager", mode="max-autotune", fullgraph=True)
def full(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


@torch.compile(backend="aot_eager", dynamic=True)
def dyn(x):
    return x.softmax(-1).max(dim=-1).values


@torch.compile(backend="aot_eager", dynamic=False)
def static(x):
    return x.pow(2).mean(0)


print("reduce-overhead:", r(scaled(x, 0.5)[:3]), r(scaled(x, 2.0)[:3]))
print("fullgraph:", r(full(torch.linspace(-3, 3, 5))))
for n in (8, 5, 3):
    xb = torch.randn(n, 4)
    print(f"dynamic batch {n}:", list(dyn(xb).shape), list(static(xb).shape),
          round(static(xb).sum().item(), 4))


calls = []


@torch.compile(backend="eager")
def branchy(x):
    calls.append(x.shape[0])
    if x.sum() > 0:
        return x * 2
    return -x


pos, neg = torch.ones(3), -torch.ones(3)
print("data-dependent branch:", branchy(pos).tolist(), branchy(neg).tolist(), calls)


@torch.compile(backend="eager")
def with_item(x):
    m = x.max().item()
    print(f"  inside: max = {m:.4f}")
    return x / m


print("item/print:", r(with_item(torch.tensor([1.0, 2.0, 4.0]))))
print("item/print:", r(with_item(torch.tensor([3.0, 6.0]))))


@torch.compile(backend="eager", fullgraph=True)
def prints(x):
    print("tracing")
    return x + 1


try:
    prints(torch.ones(2))
except Exception as e:
    print("fullgraph=True with print:", type(e).__name__)


@torch.compiler.disable
def python_helper(x):
    return x.numpy().sum()


@torch.compile(backend="eager")
def uses_helper(x):
    inside = torch.compiler.is_compiling()
    total = python_helper(x)
    return x * total, inside


y, inside = uses_helper(torch.arange(4.0))
print("disable helper:", y.tolist(), "is_compiling inside:", inside,
      "outside:", torch.compiler.is_compiling())

# --- in-place updates of buffers, no_grad, inference_mode ------------------------------
class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))
        self.register_buffer("ema", torch.zeros(4))
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        self.count += 1
        self.ema.mul_(0.9).add_(0.1 * x.mean(0))
        return self.lin(x)


ctr = torch.compile(Counter(), backend="aot_eager")
for _ in range(3):
    ctr(torch.full((2, 4), 2.0))
print("buffers:", ctr.count.item(), r(ctr.ema))
with torch.no_grad():
    o = ctr(torch.ones(2, 4))
print("no_grad:", o.requires_grad, o.grad_fn)
with torch.inference_mode():
    o = ctr(torch.ones(2, 4))
print("inference_mode:", o.requires_grad, o.is_inference(), ctr.count.item())
o = ctr(torch.ones(2, 4))
print("grad mode:", o.requires_grad, ctr.count.item())

# --- gradients of a compiled model equal eager's ---------------------------------------
torch.manual_seed(1)
mlp = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))
cmlp = torch.compile(mlp, backend="aot_eager")
xs, ys = torch.randn(16, 6), torch.randn(16, 1)
F.mse_loss(mlp(xs), ys).backward()
eager_grads = [p.grad.clone() for p in mlp.parameters()]
mlp.zero_grad()
F.mse_loss(cmlp(xs), ys).backward()
diffs = [(p.grad - g).abs().max().item() for p, g in zip(mlp.parameters(), eager_grads)]
print("grad max |diff|:", [round(d, 6) for d in diffs])
print("grad shapes:", [list(p.grad.shape) for p in cmlp.parameters()])

# --- a compiled train step with optimizer.step inside ----------------------------------
torch.manual_seed(2)
reg = nn.Linear(3, 1)
opt = torch.optim.SGD(reg.parameters(), lr=0.1, momentum=0.9)
true_w = torch.tensor([[1.5, -2.0, 0.5]])
data = torch.randn(64, 3)
target = data @ true_w.T + 0.3


@torch.compile(backend="aot_eager")
def train_step(xb, yb):
    opt.zero_grad()
    loss = F.mse_loss(reg(xb), yb)
    loss.backward()
    opt.step()
    return loss


for step in range(40):
    loss = train_step(data, target)
    if step % 10 == 0 or step == 39:
        print(f"step {step:2d} loss {loss.item():.4f}")
print("learned:", r(reg.weight), r(reg.bias))


# --- CNN, MLP and transformer block: eager vs compiled --------------------------------
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3, padding=1)
        self.head = nn.Linear(8 * 2 * 2, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


class Block(nn.Module):
    def __init__(self, d=16, heads=2):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 32), nn.GELU(), nn.Linear(32, d))
        self.out = nn.Linear(d, 3)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.ff(self.ln2(x))
        return self.out(x.mean(1))


def make(kind):
    torch.manual_seed(3)
    if kind == "cnn":
        return CNN(), torch.randn(8, 1, 8, 8)
    if kind == "mlp":
        return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3)), torch.randn(8, 10)
    return Block(), torch.randn(8, 5, 16)


for kind in ("cnn", "mlp", "transformer"):
    losses = {}
    for compiled in (False, True):
        model, inputs = make(kind)
        labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        backend = "aot_eager" if kind == "transformer" else "eager"
        run = torch.compile(model, backend=backend) if compiled else model
        seq = []
        for _ in range(4):
            opt.zero_grad()
            loss = F.cross_entropy(run(inputs), labels)
            loss.backward()
            opt.step()
            seq.append(round(loss.item(), 4))
        losses[compiled] = seq
    print(f"{kind:11s} eager {losses[False]} compiled {losses[True]}")

# --- shapes that change between calls, reset --------------------------------------------
head = torch.compile(nn.Linear(4, 2), backend="eager")
for n in (8, 5, 8):
    print("batch", n, "->", list(head(torch.randn(n, 4)).shape))
torch.compiler.reset()
torch._dynamo.reset()
print("after reset:", list(head(torch.randn(2, 4)).shape))
print("Module.compile:", nn.Linear(2, 2).compile(backend="eager"))

# --- the wrapper is a window onto the original ---------------------------------------
torch.manual_seed(4)
seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
cseq = torch.compile(seq, backend="aot_eager")
print("len:", len(cseq), "dir has append:", "append" in dir(cseq))
cseq.scale = 2.0
print("attribute set through wrapper lands on original:", seq.scale)
cseq.extra_head = nn.Linear(2, 1)
print("keys after surgery:", list(cseq.state_dict())[-2:], list(seq.state_dict())[-2:])
del cseq.extra_head
print("deleted:", hasattr(seq, "extra_head"))
cseq.training = False
print("training mirrored:", seq.training, cseq.training)
cseq.train()
seen = []
orig_hook = seq.register_forward_hook(
    lambda mod, args, out: seen.append(f"orig {list(out.shape)}"))
hook = cseq.register_forward_hook(lambda mod, args, out: seen.append(type(mod).__name__))
cseq(torch.randn(3, 4))
hook.remove()
cseq(torch.randn(2, 4))
orig_hook.remove()
print("hooks:", seen)
seq2 = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
seq2.compile(backend="eager")
print("Module.compile keeps keys:", list(seq2.state_dict())[:2], type(seq2).__name__)

# --- a compiled step with clipping and a scheduler; a compiled loss -----------------
torch.manual_seed(5)
clf = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.AdamW(clf.parameters(), lr=0.05, weight_decay=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
feats, labels = torch.randn(32, 5), torch.randint(0, 3, (32,))


@torch.compile(backend="aot_eager")
def smooth_ce(logits, target):
    return F.cross_entropy(logits, target, label_smoothing=0.1)


@torch.compile(backend="eager")
def clipped_step(xb, yb):
    opt.zero_grad(set_to_none=True)
    loss = smooth_ce(clf(xb), yb)
    loss.backward()
    norm = nn.utils.clip_grad_norm_(clf.parameters(), max_norm=1.0)
    opt.step()
    return loss.detach(), norm


for epoch in range(7):
    loss, norm = clipped_step(feats, labels)
    sched.step()
    print(f"epoch {epoch} loss {loss.item():.4f} grad-norm {norm.item():.4f} "
          f"lr {sched.get_last_lr()[0]:.4f}")
acc = (clf(feats).argmax(1) == labels).float().mean().item()
print(f"train accuracy {acc:.4f}")

# --- stance, explicit graph breaks, kwargs and structured outputs -------------------
@torch.compile(backend="eager")
def structured(a, *, scale=1.0, bias=None):
    out = {"y": a * scale, "norm": a.norm()}
    torch._dynamo.graph_break()
    if bias is not None:
        out["y"] = out["y"] + bias
    return out, (a.shape[0], a.dtype)


o, meta = structured(torch.arange(3.0), scale=2.0, bias=torch.ones(3))
print("structured:", o["y"].tolist(), round(o["norm"].item(), 4), meta)
o, meta = structured(torch.arange(4.0))
print("structured:", o["y"].tolist(), round(o["norm"].item(), 4), meta)
torch.compiler.set_stance("force_eager")
print("force_eager:", uses_helper(torch.ones(2))[1])
torch.compiler.set_stance("default")
print("default stance:", uses_helper(torch.ones(2))[1])
print("recompile limit:", torch._dynamo.config.cache_size_limit)
print("backends:", torch.compiler.list_backends())


# --- compiled methods, pickling a compiled model ---------------------------------------
class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)

    @torch.compile(backend="eager")
    def forward(self, x):
        return self.proj(x).softmax(-1)

    @torch.compile(backend="aot_eager")
    def score(self, x, temperature=1.0):
        return (self.forward(x) / temperature).sum(0)


torch.manual_seed(6)
sc = Scorer()
xs4 = torch.randn(3, 4)
print("compiled methods:", r(sc(xs4)[0]), r(sc.score(xs4)), r(sc.score(xs4, 2.0)))
buf = io.BytesIO()
torch.save(cseq, buf)
buf.seek(0)
loaded = torch.load(buf, weights_only=False)
print("pickled wrapper:", type(loaded).__name__, list(loaded.state_dict())[:2],
      torch.equal(loaded(xs4), cseq(xs4)))
copied = copy.deepcopy(seq2)
print("deepcopy of Module.compile()d:", type(copied).__name__, torch.equal(copied(xs4), seq2(xs4)))

# --- errors inside compiled code ----------------------------------------------------
bad_inputs = {
    "wrong feature size": lambda: cseq(torch.randn(2, 5)),
    "wrong rank for conv": lambda: torch.compile(CNN(), backend="eager")(torch.randn(8, 8)),
    "bad view": lambda: full(torch.randn(2, 3)).view(7),
    "dtype mismatch": lambda: torch.compile(lambda a: a @ a.double(), backend="eager")(
        torch.ones(3)),
    "label out of range": lambda: smooth_ce(torch.randn(2, 3), torch.tensor([0, 3])),
}
for what, bad in bad_inputs.items():
    try:
        bad()
        print(what, "accepted")
    except Exception as e:
        print(f"{what}: {type(e).__name__} (RuntimeError: {isinstance(e, RuntimeError)}): "
              f"{str(e).splitlines()[0]}")


@torch.compile(backend="eager", fullgraph=True)
def strict_check(x):
    if x.shape[0] > 2:
        raise ValueError("batch too large")
    return x * 2


@torch.compile(backend="eager")
def lenient_check(x):
    if x.shape[0] > 2:
        raise ValueError("batch too large")
    return x * 2


for fn in (lenient_check, strict_check):
    try:
        print(fn(torch.ones(2)).tolist())
        fn(torch.ones(3))
    except Exception as e:
        print(f"{type(e).__name__}: {str(e).splitlines()[0][:18]}")


# --- typical mistakes ---------------------------------------------------------------
mistakes = {
    "non-callable": lambda: torch.compile(42),
    "compile None": lambda: torch.compile()(None),
    "unknown mode": lambda: torch.compile(net, mode="fastest"),
    "unknown backend": lambda: torch.compile(net, backend="not_a_backend"),
    "mode and options": lambda: torch.compile(net, mode="max-autotune",
                                              options={"max_autotune": True}),
    "unknown option": lambda: torch.compile(net, options={"max_autotuning": True}),
    "option type": lambda: torch.compile(net, options={"max_autotune": "yes"}),
    "dynamic not bool": lambda: torch.compile(net, dynamic="auto"),
}
for what, bad in mistakes.items():
    try:
        bad()
        print(what, "accepted")
    except Exception as e:
        print(f"{what}: {type(e).__name__}: {str(e).split(', known')[0]}")
print("done")
