"""Memory-saving training as practitioners write it: activation checkpointing
(torch.utils.checkpoint with use_reentrant=False and True, checkpoint_sequential,
early stop, context_fn, determinism_check, nested checkpoints, a loop of checkpointed
transformer blocks), saved-tensor hooks counting what each layer keeps for backward,
save_on_cpu, disable_saved_tensors_hooks, multi-grad hooks, Node pre-hooks, and the
typical mistakes with their messages."""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

torch.manual_seed(0)


def fmt(t, n=4):
    return [round(v, n) for v in t.detach().flatten().tolist()]


def err(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def grads(model):
    return [p.grad.clone() for p in model.parameters()]


def same(a, b, tol=1e-6):
    return all(torch.allclose(x, y, atol=tol, rtol=tol) for x, y in zip(a, b))


# -- 1. a checkpointed MLP block: gradients equal the plain run -----------------------
class Block(nn.Module):
    def __init__(self, d, p=0.0):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.drop = nn.Dropout(p)

    def forward(self, x, scale=1.0):
        return x + scale * self.fc2(self.drop(F.gelu(self.fc1(x))))


block = Block(6)
x = torch.randn(4, 6, requires_grad=True)

out = block(x)
out.pow(2).sum().backward()
plain, plain_x = grads(block), x.grad.clone()
print("plain loss", f"{out.pow(2).sum().item():.5f}")

for reentrant in (False, True):
    block.zero_grad()
    x.grad = None
    out = checkpoint(block, x, use_reentrant=reentrant)
    print("reentrant" if reentrant else "non-reentrant", "grad_fn",
          type(out.grad_fn).__name__, "shape", tuple(out.shape))
    out.pow(2).sum().backward()
    print("  same param grads", same(plain, grads(block)),
          "same x grad", torch.allclose(plain_x, x.grad, atol=1e-6))
    print("  x.grad[0]", fmt(x.grad[0]))

# the warning when use_reentrant is not passed
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    checkpoint(block, x)
print("warnings", len(caught), [w.category.__name__ for w in caught])
print("mentions use_reentrant", any("use_reentrant" in str(w.message) for w in caught))

# reentrant checkpoint with no input requiring grad: a warning, and no param grads
xd = torch.randn(4, 6)
block.zero_grad(set_to_none=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = checkpoint(block, xd, use_reentrant=True)
print("no-grad input, reentrant: requires_grad", out.requires_grad,
      "warning", [str(w.message) for w in caught])
try:
    out.sum().backward()
except RuntimeError as e:
    print("backward:", err(e))
out = checkpoint(block, xd, use_reentrant=False)
print("no-grad input, non-reentrant: requires_grad", out.requires_grad)
out.sum().backward()
print("fc1.weight.grad norm", f"{block.fc1.weight.grad.norm().item():.5f}")

# kwargs are forwarded by the non-reentrant form only
block.zero_grad()
out = checkpoint(block, x, scale=0.5, use_reentrant=False)
print("kwargs out[0]", fmt(out[0]))
print("matches direct call", torch.allclose(out, block(x, scale=0.5)))
try:
    checkpoint(block, x, scale=0.5, use_reentrant=True)
except ValueError as e:
    print("reentrant kwargs:", err(e))

# -- 2. dropout inside: preserve_rng_state replays the same mask ----------------------
drop_block = Block(6, p=0.5)
for reentrant in (False, True):
    torch.manual_seed(1)
    drop_block.zero_grad(set_to_none=True)
    xr = x.detach().clone().requires_grad_()
    drop_block(xr).sum().backward()
    ref = grads(drop_block)
    torch.manual_seed(1)
    drop_block.zero_grad(set_to_none=True)
    xr2 = x.detach().clone().requires_grad_()
    checkpoint(drop_block, xr2, use_reentrant=reentrant).sum().backward()
    print("dropout reentrant" if reentrant else "dropout non-reentrant",
          "same grads", same(ref, grads(drop_block)),
          "same x grad", torch.allclose(xr.grad, xr2.grad, atol=1e-6))
    print("  rng after", f"{torch.rand(1).item():.5f}")

# preserve_rng_state=False with dropout under the reentrant form: the mask differs
torch.manual_seed(1)
drop_block.zero_grad(set_to_none=True)
drop_block(x.detach()).sum().backward()
ref = grads(drop_block)
torch.manual_seed(1)
drop_block.zero_grad(set_to_none=True)
checkpoint(drop_block, x.detach().requires_grad_(), use_reentrant=True,
           preserve_rng_state=False).sum().backward()
print("preserve_rng_state=False same grads", same(ref, grads(drop_block)))

# -- 3. checkpoint_sequential ----------------------------------------------------------
torch.manual_seed(2)
seq = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(6)])
inp = torch.randn(5, 8, requires_grad=True)
seq(inp).sum().backward()
ref, ref_inp = grads(seq), inp.grad.clone()
for segments in (1, 2, 3, 6):
    for reentrant in (False, True):
        seq.zero_grad()
        inp.grad = None
        out = checkpoint_sequential(seq, segments, inp, use_reentrant=reentrant)
        out.sum().backward()
        print(f"segments={segments} reentrant={reentrant}",
              "out sum", f"{out.sum().item():.5f}",
              "same", same(ref, grads(seq)) and torch.allclose(ref_inp, inp.grad, atol=1e-6))

# -- 4. early stop, context_fn, determinism_check, debug -------------------------------
calls = []


def counted(t):
    calls.append(1)
    return torch.sin(t).exp() * t


for early in (True, False):
    calls.clear()
    with torch.utils.checkpoint.set_checkpoint_early_stop(early):
        t = torch.randn(3, requires_grad=True)
        y = checkpoint(counted, t, use_reentrant=False)
        y.sum().backward()
    print("early_stop", early, "forward calls", len(calls),
          "grad ok", torch.allclose(t.grad, (torch.cos(t) * torch.sin(t).exp() * t
                                             + torch.sin(t).exp()).detach(), atol=1e-6))

ctx_log = []


class Tag:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        ctx_log.append(self.name + " in")

    def __exit__(self, *exc):
        ctx_log.append(self.name + " out")


t = torch.randn(3, requires_grad=True)
y = checkpoint(counted, t, use_reentrant=False, context_fn=lambda: (Tag("fwd"), Tag("re")))
print("after forward", ctx_log)
y.sum().backward()
print("after backward", ctx_log)
try:
    checkpoint(counted, t, use_reentrant=True, context_fn=lambda: (Tag("a"), Tag("b")))
except ValueError as e:
    print("context_fn reentrant:", err(e))
y = checkpoint(counted, t, use_reentrant=False, determinism_check="none")
y.sum().backward()
print("determinism_check none grad", fmt(t.grad))
try:
    checkpoint(counted, t, use_reentrant=False, determinism_check="strict")
except ValueError as e:
    print("bad determinism_check:", err(e))

# -- 5. nested checkpoints --------------------------------------------------------------
torch.manual_seed(3)
inner = nn.Linear(5, 5)
outer = nn.Linear(5, 5)


def inner_fn(h):
    return torch.relu(inner(h))


def outer_fn(h):
    return outer(checkpoint(inner_fn, h, use_reentrant=False)).tanh()


h = torch.randn(2, 5, requires_grad=True)
outer_fn(h).sum().backward()
ref = [inner.weight.grad.clone(), outer.weight.grad.clone(), h.grad.clone()]
inner.zero_grad()
outer.zero_grad()
h.grad = None
checkpoint(outer_fn, h, use_reentrant=False).sum().backward()
print("nested same", all(torch.allclose(a, b, atol=1e-6) for a, b in
                         zip(ref, [inner.weight.grad, outer.weight.grad, h.grad])))
print("nested h.grad", fmt(h.grad))


# -- 6. a stack of checkpointed transformer blocks --------------------------------------
class TransformerBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class Tiny(nn.Module):
    def __init__(self, vocab=11, d=16, heads=2, depth=3, ckpt=False):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(TransformerBlock(d, heads) for _ in range(depth))
        self.head = nn.Linear(d, vocab)
        self.ckpt = ckpt

    def forward(self, idx):
        x = self.emb(idx)
        for blk in self.blocks:
            if self.ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(x)


torch.manual_seed(4)
model = Tiny()
torch.manual_seed(4)
model_ck = Tiny(ckpt=True)
tokens = torch.randint(0, 11, (2, 7))
targets = torch.roll(tokens, -1, dims=1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
opt_ck = torch.optim.SGD(model_ck.parameters(), lr=0.1)
for step in range(3):
    losses = []
    for m, o in ((model, opt), (model_ck, opt_ck)):
        o.zero_grad()
        loss = F.cross_entropy(m(tokens).reshape(-1, 11), targets.reshape(-1))
        loss.backward()
        o.step()
        losses.append(loss.item())
    print(f"step {step} loss {losses[0]:.5f} ckpt {losses[1]:.5f}")
print("weights agree", all(torch.allclose(a, b, atol=1e-5) for a, b in
                           zip(model.parameters(), model_ck.parameters())))

# -- 7. saved_tensors_hooks: count what each layer keeps for backward --------------------
def count_saved(fn, *args):
    packed = []

    def pack(t):
        packed.append((tuple(t.shape), str(t.dtype)))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(*args)
    return out, packed


torch.manual_seed(5)
xin = torch.randn(4, 6, requires_grad=True)
layers = {
    "linear": nn.Linear(6, 3),
    "relu": nn.ReLU(),
    "tanh": nn.Tanh(),
    "sigmoid": nn.Sigmoid(),
    "gelu": nn.GELU(),
    "silu": nn.SiLU(),
    "softmax": nn.Softmax(dim=-1),
    "logsoftmax": nn.LogSoftmax(dim=-1),
    "mul": lambda t: t * t,
    "div": lambda t: t / (t.abs() + 1),
    "pow": lambda t: t.pow(3),
    "mse": lambda t: F.mse_loss(t, torch.zeros_like(t)),
    "add": lambda t: t + 1.0,
    "exp": torch.exp,
    "sum": lambda t: t.sum(),
    "matmul": lambda t: t @ t.T,
}
for name, layer in layers.items():
    _, packed = count_saved(layer, xin)
    print(f"{name:10s} saved {len(packed)}", sorted(packed))

_, packed = count_saved(block, xin)
print("Block saved", len(packed), "elements", sum(
    int(torch.tensor(s).prod()) if s else 1 for s, _ in packed))

# under checkpoint the outer graph keeps only the block's inputs
for reentrant in (False, True):
    _, packed = count_saved(lambda t, r=reentrant: checkpoint(block, t, use_reentrant=r), xin)
    print(f"checkpointed Block saved (reentrant={reentrant})", len(packed),
          sorted(set(s for s, _ in packed)))

# pack/unpack counting with a backward pass
unpacked = []
with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1,
                                              lambda t: unpacked.append(t.shape) or t):
    y = torch.tanh(xin) * xin
y.sum().backward()
print("unpacked in backward", len(unpacked), [tuple(s) for s in unpacked])

# the user's hooks see a checkpointed block's inputs only, and unpack them on each replay
packs, unpacks = [], []
with torch.autograd.graph.saved_tensors_hooks(
        lambda t: packs.append(tuple(t.shape)) or t,
        lambda t: unpacks.append(tuple(t.shape)) or t):
    y = checkpoint(lambda t, s: torch.tanh(t * s) * t, xin, 2.0, use_reentrant=False)
print("packed", packs, "unpacked", unpacks)
y.sum().backward(retain_graph=True)
print("after backward 1: unpacked", unpacks)
y.sum().backward()
print("after backward 2: unpacked", unpacks)

# hooks entered inside the checkpointed function see its ops, in the forward and the replay
inner_packs = []


def hooked_block(t):
    with torch.autograd.graph.saved_tensors_hooks(
            lambda u: inner_packs.append(tuple(u.shape)) or u, lambda u: u):
        return torch.sigmoid(t @ t.T).sum(dim=1)


xin.grad = None
y = checkpoint(hooked_block, xin, use_reentrant=False)
print("inner packs forward", sorted(inner_packs))
y.sum().backward()
print("inner packs after backward", sorted(inner_packs), "grad sum", f"{xin.grad.sum().item():.5f}")

# save_on_cpu gives the same gradients
xin.grad = None
with torch.autograd.graph.save_on_cpu(pin_memory=False):
    z = block(xin).pow(2).mean()
z.backward()
g_cpu = xin.grad.clone()
xin.grad = None
block(xin).pow(2).mean().backward()
print("save_on_cpu same grad", torch.allclose(g_cpu, xin.grad), f"{z.item():.6f}")

# disable_saved_tensors_hooks: registering hooks inside raises
with torch.autograd.graph.disable_saved_tensors_hooks("no hooks in this region, please"):
    try:
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
    except RuntimeError as e:
        print("disabled:", err(e))
    print("plain ops still fine", f"{(xin * 2).sum().item():.4f}")
    try:
        checkpoint(block, xin, use_reentrant=False)
    except RuntimeError as e:
        print("non-reentrant checkpoint there:", err(e))
    out = checkpoint(block, xin, use_reentrant=True)
    print("reentrant checkpoint there:", type(out.grad_fn).__name__)

# -- 8. register_multi_grad_hook, Node pre-hooks ----------------------------------------
a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
c = torch.randn(3, requires_grad=True)
seen_all, seen_any = [], []
ha = torch.autograd.graph.register_multi_grad_hook(
    (a, b, c), lambda gs: seen_all.append([None if g is None else fmt(g) for g in gs]))
hb = torch.autograd.graph.register_multi_grad_hook(
    (a, b, c), lambda g: seen_any.append(fmt(g)), mode="any")
(a * b).sum().backward()
print("mode all", seen_all)
print("mode any", seen_any)
(2 * c).sum().backward()
print("mode all", len(seen_all), seen_all[-1])
print("mode any", len(seen_any), seen_any[-1])
ha.remove()
hb.remove()
(a + c).sum().backward()
print("after remove", len(seen_all), len(seen_any))

w = torch.randn(3, requires_grad=True)
y = (w * 3).exp()
pre = []


def prehook(grad_outputs):
    pre.append(fmt(grad_outputs[0]))
    return (grad_outputs[0] * 0.5,)


handle = y.grad_fn.register_prehook(prehook)
print("node", y.grad_fn.name())
y.sum().backward()
print("prehook saw", pre, "w.grad", fmt(w.grad))
handle.remove()

# prehook on a checkpointed output's node
w.grad = None
yc = checkpoint(lambda t: (t * 3).exp(), w, use_reentrant=False)
yc.grad_fn.register_prehook(prehook)
yc.sum().backward()
print("ckpt prehook", len(pre), "w.grad", fmt(w.grad))

# -- 9. retain_graph and backward twice ------------------------------------------------
w.grad = None
y = (w.sin() * w).sum()
y.backward(retain_graph=True)
y.backward()
print("twice with retain_graph", fmt(w.grad))
try:
    y.backward()
except RuntimeError as e:
    print("third:", err(e))

for reentrant in (False, True):
    w.grad = None
    y = checkpoint(lambda t: t.sin() * t, w, use_reentrant=reentrant).sum()
    y.backward()
    try:
        y.backward()
        print(f"ckpt twice (reentrant={reentrant}): no error, grad", fmt(w.grad))
    except RuntimeError as e:
        print(f"ckpt twice (reentrant={reentrant}):", type(e).__name__,
              "second time" in str(e))
    w.grad = None
    y = checkpoint(lambda t: t.sin() * t, w, use_reentrant=reentrant).sum()
    y.backward(retain_graph=True)
    try:
        y.backward()
        print(f"ckpt retain_graph twice (reentrant={reentrant}) grad", fmt(w.grad))
    except RuntimeError as e:
        print(f"ckpt retain_graph twice (reentrant={reentrant}):", err(e))

# -- 10. .detach() vs .data under checkpoint --------------------------------------------
v = torch.randn(4, requires_grad=True)


def uses_detach(t):
    return t * t.detach()


def uses_data(t):
    return t * t.data


for fn in (uses_detach, uses_data):
    v.grad = None
    checkpoint(fn, v, use_reentrant=False).sum().backward()
    g1 = v.grad.clone()
    v.grad = None
    fn(v).sum().backward()
    print(fn.__name__, "grad", fmt(g1), "plain same", torch.allclose(g1, v.grad))

# -- 11. typical mistakes -----------------------------------------------------------------
def returns_number(t):
    return float((t * 2).sum())


try:
    r = checkpoint(returns_number, v, use_reentrant=False)
    print("non-tensor output:", type(r).__name__, f"{r:.4f}")
except Exception as e:
    print("non-tensor output:", err(e))

try:
    r = checkpoint(returns_number, v, use_reentrant=True)
    print("non-tensor output reentrant:", type(r).__name__, f"{r:.4f}")
except Exception as e:
    print("non-tensor output reentrant:", err(e))


def returns_tuple(t):
    return t * 2, "label", 3


r = checkpoint(returns_tuple, v, use_reentrant=False)
print("tuple output", [type(o).__name__ for o in r], r[1], r[2])
r[0].sum().backward()
print("grad through tuple", fmt(v.grad))


def mutates(t):
    t.mul_(2)
    return t.sin()


leafish = torch.randn(3, requires_grad=True)
try:
    checkpoint(mutates, leafish, use_reentrant=False)
except RuntimeError as e:
    print("mutating a leaf:", err(e))
mid = leafish * 1
try:
    out = checkpoint(mutates, mid, use_reentrant=False)
    out.sum().backward()
    print("mutating a non-leaf: grad", fmt(leafish.grad))
except RuntimeError as e:
    print("mutating a non-leaf:", err(e))

# unpack returning a tensor of another shape
q = torch.randn(2, 3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t.reshape(-1)):
    y = (q * q).sum()
try:
    y.backward()
except RuntimeError as e:
    print("wrong unpack shape:", type(e).__name__)

# pack returning something that is not a tensor, unpack restoring it
store = {}


def pack_key(t):
    key = len(store)
    store[key] = t.clone()
    return key


def unpack_key(key):
    return store[key]


q.grad = None
with torch.autograd.graph.saved_tensors_hooks(pack_key, unpack_key):
    y = (q.exp() * q).sum()
y.backward()
print("keys stored", len(store), "q.grad", fmt(q.grad))

# an input changed in place after the checkpoint: its replay cannot run
for reentrant in (False, True):
    base = torch.randn(3, requires_grad=True)
    mid = base * 1
    y = checkpoint(lambda t: t.sin() * 2, mid, use_reentrant=reentrant)
    mid.add_(1)
    try:
        y.sum().backward()
        print(f"input mutated after (reentrant={reentrant}): grad", fmt(base.grad))
    except RuntimeError as e:
        print(f"input mutated after (reentrant={reentrant}):", err(e))
nograd_in = torch.randn(3)
y = checkpoint(lambda t: t.sin() * base, nograd_in, use_reentrant=False)
nograd_in.mul_(2)
try:
    y.sum().backward()
except RuntimeError as e:
    print("no-grad input mutated after:", err(e))

# an intermediate changed in place inside the block: the replay's values are used
base.grad = None


def mutates_inside(t):
    y = t * 2
    z = y.sin()
    y.mul_(3)
    return z * y


checkpoint(mutates_inside, base, use_reentrant=False).sum().backward()
print("in-place inside the block: grad", fmt(base.grad))
try:
    mutates_inside(base).sum().backward()
except RuntimeError as e:
    print("same block without checkpoint:", err(e)[:60])

# a block that does something else on replay: the determinism check
calls = [0]


def flaky(t):
    calls[0] += 1
    return t.sin() if calls[0] % 2 else t.cos().sin()


def flaky_dtype(t):
    calls[0] += 1
    return t.sin() if calls[0] % 2 else t.double().sin().float()


for fn, check in ((flaky, "default"), (flaky, "none"), (flaky_dtype, "default"),
                  (flaky_dtype, "none")):
    calls[0] = 0
    base.grad = None
    try:
        checkpoint(fn, base, use_reentrant=False, determinism_check=check).sum().backward()
        print(fn.__name__, check, "grad", fmt(base.grad))
    except torch.utils.checkpoint.CheckpointError as e:
        print(fn.__name__, check, err(e))
        print("  is RuntimeError", isinstance(e, RuntimeError),
              [line for line in str(e).splitlines() if line.startswith("Number")])
