"""Looking inside autograd: tensor hooks (modify / observe / remove), retain_grad,
post-accumulate-grad hooks running an optimizer step, Module backward and forward hooks,
saved_tensors_hooks and save_on_cpu, walking grad_fn.next_functions, Node hooks,
register_multi_grad_hook, a new-style custom Function (needs_input_grad,
mark_non_differentiable, set_materialize_grads, once_differentiable, double backward),
gradcheck/gradgradcheck, detect_anomaly, retain_graph, inputs=, grad layout reuse,
and the usual mistakes with their messages."""

import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


def fmt(t):
    return [round(v, 4) for v in t.detach().flatten().tolist()]


def err(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0]}"


# -- tensor hooks -------------------------------------------------------------------
x = torch.randn(3, requires_grad=True)
order = []
h1 = x.register_hook(lambda g: order.append(("double", fmt(g))) or g * 2)
h2 = x.register_hook(lambda g: order.append(("observe", fmt(g))))
y = x * x
y.retain_grad()
y.register_hook(lambda g: order.append(("y", fmt(g))))
y.sum().backward()
print(order)
print("x.grad", fmt(x.grad), "y.grad", fmt(y.grad))
h1.remove()
h2.remove()
x.grad = None
(x * 3).sum().backward()
print("after remove", fmt(x.grad), len(order))

try:
    torch.ones(2).register_hook(lambda g: g)
except RuntimeError as e:
    print(err(e))
z = torch.ones(3, requires_grad=True)
z.register_hook(lambda g: torch.ones(4))
try:
    (z * 2).sum().backward()
except RuntimeError as e:
    print(err(e))

# -- post-accumulate-grad hook doing the optimizer step ---------------------------
lin = nn.Linear(4, 2)
opts = {p: torch.optim.SGD([p], lr=0.1) for p in lin.parameters()}
stepped = []


def step_hook(p):
    stepped.append(tuple(p.shape))
    opts[p].step()
    opts[p].zero_grad()


for p in lin.parameters():
    p.register_post_accumulate_grad_hook(step_hook)
inp = torch.randn(5, 4)
before = lin.weight.detach().clone()
lin(inp).pow(2).mean().backward()
print("stepped", stepped, "grad", lin.weight.grad)
print("delta", fmt((lin.weight.detach() - before)[0]))

# -- Module hooks ---------------------------------------------------------------------
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
log = []


def bwd_hook(mod, gin, gout):
    log.append(("bwd", type(mod).__name__, [tuple(g.shape) if g is not None else None for g in gin],
                [tuple(g.shape) for g in gout]))


def bwd_pre(mod, gout):
    log.append(("bwd_pre", type(mod).__name__))
    return (gout[0] * 0.5,)


def fwd_pre(mod, args, kwargs):
    log.append(("fwd_pre", len(args), sorted(kwargs)))
    return (args[0] + 1,), kwargs


def fwd_hook(mod, args, out):
    log.append(("fwd", tuple(out.shape)))


handles = [net[0].register_full_backward_hook(bwd_hook),
           net[2].register_full_backward_pre_hook(bwd_pre),
           net.register_forward_pre_hook(fwd_pre, with_kwargs=True),
           net.register_forward_hook(fwd_hook, always_call=True)]
data = torch.randn(2, 3, requires_grad=True)
out = net(data)
out.sum().backward()
for entry in log:
    print(entry)
print("data.grad", fmt(data.grad))
for h in handles:
    h.remove()

# -- saved tensor hooks ---------------------------------------------------------------
counts = {"pack": 0, "unpack": 0}


def pack(t):
    counts["pack"] += 1
    return t.clone()


def unpack(t):
    counts["unpack"] += 1
    return t


a = torch.randn(4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    b = (a.exp() * a.sin()).sum()
b.backward()
print("packs", counts, fmt(a.grad))
with torch.autograd.graph.save_on_cpu():
    c = (a * a).tanh().sum()
print(fmt(torch.autograd.grad(c, a)[0]))

# -- walking the graph ------------------------------------------------------------------
w = torch.randn(3, 2, requires_grad=True)
v = torch.randn(2, requires_grad=True)
loss = torch.relu(w @ v).mean() + (w ** 2).sum() * 0.1


def walk(fn, depth=0, seen=None):
    seen = set() if seen is None else seen
    if fn is None:
        return
    print("  " * depth + fn.name())
    if fn in seen:
        return
    seen.add(fn)
    for nxt, _ in fn.next_functions:
        walk(nxt, depth + 1, seen)


walk(loss.grad_fn)
node_log = []
loss.grad_fn.register_prehook(lambda gout: node_log.append(("pre", fmt(gout[0]))))
loss.grad_fn.register_hook(lambda gin, gout: node_log.append(("post", len(gin))))
loss.grad_fn.metadata["tag"] = "top"
loss.backward(retain_graph=True)
print(node_log, loss.grad_fn.metadata)
print("w.grad", fmt(w.grad))
loss.backward(inputs=[v])
print("v.grad twice", fmt(v.grad), "w.grad same", fmt(w.grad))
try:
    loss.backward()
    loss.backward()
except RuntimeError as e:
    print(err(e))

# -- multi grad hooks -------------------------------------------------------------------
p, q = torch.randn(2, requires_grad=True), torch.randn(2, requires_grad=True)
seen_all, seen_any = [], []
torch.autograd.graph.register_multi_grad_hook(
    (p, q), lambda grads: seen_all.append([g is None for g in grads]))
torch.autograd.graph.register_multi_grad_hook(
    (p, q), lambda g: seen_any.append(fmt(g)), mode="any")
(p * 2).sum().backward()
(p * q).sum().backward()
print("all", seen_all, "any", seen_any)


# -- custom Function, new style -------------------------------------------------------
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x, scale):
        return x ** 3 * scale, torch.argmax(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale
        ctx.mark_non_differentiable(output[1])
        ctx.set_materialize_grads(False)

    @staticmethod
    def backward(ctx, g, g_idx):
        (x,) = ctx.saved_tensors
        needs_log.append((ctx.needs_input_grad, g_idx))
        if g is None:
            return None, None
        return g * 3 * x ** 2 * ctx.scale, None


needs_log = []
xd = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
val, idx = Cube.apply(xd, 2.0)
print(val.dtype, idx, idx.requires_grad)
(gx,) = torch.autograd.grad(val.sum(), xd, create_graph=True)
print("first", fmt(gx), gx.requires_grad)
gx.sum().backward()
print("second", fmt(xd.grad))
print("gradcheck", torch.autograd.gradcheck(lambda t: Cube.apply(t, 2.0)[0], (xd,)))
print("gradgradcheck", torch.autograd.gradgradcheck(lambda t: Cube.apply(t, 2.0)[0], (xd,)))
print("needs", needs_log[0], len(needs_log) > 3)


class Clip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1)


xc = torch.tensor([-2.0, 0.3, 1.5], requires_grad=True)
(gc,) = torch.autograd.grad(Clip.apply(xc).sum(), xc, create_graph=True)
print("once", fmt(gc), gc.requires_grad)
try:
    gc.sum().backward()
except RuntimeError as e:
    print(err(e))


class TooMany(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g


try:
    TooMany.apply(torch.ones(2, requires_grad=True)).sum().backward()
except RuntimeError as e:
    print(err(e))


class AddOneInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.add_(1)

    @staticmethod
    def backward(ctx, g):
        return g


try:
    leafish = torch.ones(2, requires_grad=True).clone()
    res = AddOneInPlace.apply(leafish)
    print("inplace", fmt(res), res.grad_fn.name())
    res.sum().backward()
except RuntimeError as e:
    print(err(e))

# -- in-place on saved tensor, anomaly mode --------------------------------------------
s = torch.randn(3, requires_grad=True)
t = s.sigmoid()
u = t * 2
t.mul_(3)
try:
    u.sum().backward()
    (t.sigmoid() * s).sum()
    r = s.exp()
    out = r.pow(2)
    r.add_(1)
    out.sum().backward()
except RuntimeError as e:
    print(err(e))

n = torch.tensor([1.0, 0.0], requires_grad=True)
try:
    with torch.autograd.detect_anomaly(check_nan=True):
        torch.sqrt(n * 0).sum().backward()
except RuntimeError as e:
    print(err(e))
print("anomaly", torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
torch.autograd.set_detect_anomaly(True)
print("anomaly on", torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(False)

# -- torch.autograd.backward, gradient layout reuse --------------------------------------
m1, m2 = torch.randn(2, 2, requires_grad=True), torch.randn(2, requires_grad=True)
torch.autograd.backward([m1 * 2, m2.exp()], grad_tensors=[torch.ones(2, 2), torch.full((2,), 0.5)])
print(fmt(m1.grad), fmt(m2.grad))
model = nn.Linear(3, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
ptrs = []
for _ in range(3):
    opt.zero_grad(set_to_none=False)
    model(torch.randn(4, 3)).sum().backward()
    ptrs.append(model.weight.grad.data_ptr())
    opt.step()
print("same grad buffer", len(set(ptrs)) == 1, model.weight.grad.stride(),
      model.weight.grad.is_contiguous())
wt = torch.randn(3, 4).t().requires_grad_()
(wt * 2).sum().backward()
print("grad stride", wt.stride(), wt.grad.stride())
if hasattr(torch.autograd.graph, "increment_version"):
    iv = torch.zeros(2)
    v0 = iv._version
    torch.autograd.graph.increment_version(iv)
    print("version", iv._version - v0)
