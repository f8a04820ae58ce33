"""Inspecting the autograd graph as a tutorial does: grad_fn names and types, a walk over
next_functions down to the AccumulateGrad leaves, the tensors each node saved
(_saved_self / _saved_other / _saved_result / _saved_dim ...) and what backward frees,
_raw_saved_* hooks, node pre-hooks and hooks on multi-output nodes, node metadata,
GradientEdge, allow_mutation_on_saved_tensors, and the usual mistakes' messages."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.graph import (
    GradientEdge,
    allow_mutation_on_saved_tensors,
    get_gradient_edge,
)

torch.manual_seed(0)


def fmt(t):
    return [round(v, 4) for v in t.detach().flatten().tolist()]


def err(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:110]}"


def walk(fn, depth=0, seen=None):
    """Print the graph below `fn`, one node per line, leaves by their shape."""
    seen = set() if seen is None else seen
    if fn is None:
        print("  " * depth + "None")
        return
    if fn.name().endswith("AccumulateGrad"):
        print("  " * depth + f"AccumulateGrad -> leaf {tuple(fn.variable.shape)}")
        return
    print("  " * depth + fn.name() + ("  (seen)" if id(fn) in seen else ""))
    if id(fn) in seen:
        return
    seen.add(id(fn))
    for nxt, _ in fn.next_functions:
        walk(nxt, depth + 1, seen)


def saved(fn):
    """The `_saved_*` attributes of a node, as the autograd tutorial lists them."""
    out = {}
    for name in sorted(dir(fn)):
        if name.startswith("_saved_") and not name.endswith("_sym_strides"):
            v = getattr(fn, name)
            out[name] = f"tensor{tuple(v.shape)}" if isinstance(v, torch.Tensor) else v
    return out


# -- names, types and the walk ----------------------------------------------------------
x = torch.randn(3, requires_grad=True)
w = torch.randn(3, 3, requires_grad=True)
y = (w @ x).tanh()
loss = (y ** 2).sum()
print("loss.grad_fn:", repr(loss.grad_fn).split(" at ")[0] + ">", "name:", loss.grad_fn.name())
print("type:", type(loss.grad_fn), "leaf grad_fn:", x.grad_fn, "is_leaf:", x.is_leaf)
walk(loss.grad_fn)
acc = w.grad_fn
print("w has no grad_fn:", acc is None)
mv = y.grad_fn.next_functions[0][0]
print("MvBackward0 edges:", [(type(n).__name__, nr) for n, nr in mv.next_functions])
print("AccumulateGrad.variable is w:", mv.next_functions[0][0].variable is w)

# edges for numbers and tensors that don't require grad
c = torch.randn(3)
for label, t in [("x * 2", x * 2), ("x * c", x * c), ("x + 1", x + 1), ("x.clamp(c)", x.clamp(c)),
                 ("x.clamp(min=c)", x.clamp(min=c)), ("x.clamp(0, 1)", x.clamp(0, 1)),
                 ("where", torch.where(c > 0, x, 0.0))]:
    print(f"{label:15s}", t.grad_fn.name(),
          [None if n is None else n.name() for n, _ in t.grad_fn.next_functions])

# views, in-place ops and multi-output ops
print("views:", x[0].grad_fn.name(), x[1:].grad_fn.name(), x.view(3, 1).grad_fn.name(),
      x.unsqueeze(0).grad_fn.name(), w.t().grad_fn.name(), w.T.grad_fn.name(),
      w.mT.grad_fn.name(), w.H.grad_fn.name(), w.unbind(0)[1].grad_fn.name())
z = w.clone()
z[0] = x
print("after z[0] = x:", z.grad_fn.name())
z.mul_(2)
print("after mul_:", z.grad_fn.name(), z._version)
v = z.clone()
row = v[1]
v.add_(1)
print("view of a changed base:", row.grad_fn.name())
print("max(dim):", w.max(1).values.grad_fn.name(), "sort:", w.sort(0)[0].grad_fn.name(),
      "topk:", w.topk(2).values.grad_fn.name(), "aminmax:", torch.aminmax(w).min.grad_fn.name())
print("atleast_3d:", torch.atleast_3d(x).grad_fn.name(), torch.atleast_3d(w).grad_fn.name())
print("broadcast_to:", x.broadcast_to(2, 3).grad_fn.name())

# -- what nodes save ---------------------------------------------------------------------
a = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, 3, requires_grad=True)
p = a.pow(2)
print("pow saved self is a:", p.grad_fn._saved_self is a, "exponent:", p.grad_fn._saved_exponent)
e = a.exp()
print("exp saved result equal:", e.grad_fn._saved_result.equal(e),
      "same object:", e.grad_fn._saved_result is e)
print("mul:", saved((a * b).grad_fn))
print("mul by 3:", saved((a * 3).grad_fn), repr((a * 3).grad_fn._saved_other))
print("mul by 0.5:", repr((a * 0.5).grad_fn._saved_other))
print("add alpha:", saved(a.add(b, alpha=2).grad_fn))
print("sum(1):", saved(a.sum(1).grad_fn))
print("mean:", saved(a.mean().grad_fn))
print("max(1):", saved(a.max(1)[0].grad_fn))
print("softmax:", saved(a.softmax(1).grad_fn))
print("transpose:", saved(a.transpose(0, 1).grad_fn), "select:", saved(a[1].grad_fn))
print("slice:", saved(a[:, 1:3].grad_fn))
print("mm:", saved((a @ b.t()).grad_fn))
print("clamp:", saved(a.clamp(-0.5, 0.5).grad_fn))
print("cat:", saved(torch.cat([a, b], 1).grad_fn), "stack:", saved(torch.stack([a, b]).grad_fn))
print("unbind:", saved(a.unbind(1)[0].grad_fn))
print("gelu:", saved(F.gelu(a).grad_fn), "leaky_relu:", saved(F.leaky_relu(a, 0.1).grad_fn))
print("elu:", saved(F.elu(a).grad_fn))
print("hardtanh:", saved(F.hardtanh(a).grad_fn))
lin = nn.Linear(3, 2)
out = lin(a)
print("Linear:", out.grad_fn.name(), [None if n is None else n.name()
                                      for n, _ in out.grad_fn.next_functions])

# saved tensors are freed by backward; saved numbers stay
s = a.sum(1)
r = (a * b).sum()
r.backward()
try:
    print(r.grad_fn.next_functions[0][0]._saved_self)
except RuntimeError as ex:
    print(err(ex))
print("sum dim after backward:", s.grad_fn._saved_dim)
r2 = (a * b).sum()
r2.backward(retain_graph=True)
print("retained:", tuple(r2.grad_fn.next_functions[0][0]._saved_self.shape))
try:
    print(e.grad_fn._saved_self)
except AttributeError as ex:
    print(err(ex))

# -- hooks on what a node saved ----------------------------------------------------------
events = []
q = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
sq = q.pow(2)
sq.grad_fn._raw_saved_self.register_hooks(
    lambda t: events.append(("pack", fmt(t))) or t * 10,
    lambda t: events.append(("unpack", fmt(t))) or t)
sq.sum().backward()
print(events, "grad:", fmt(q.grad))
try:
    sq.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
except RuntimeError as ex:
    print(err(ex))
mul2 = q * 2
try:
    mul2.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
except RuntimeError as ex:
    print(err(ex))

# -- node hooks ----------------------------------------------------------------------------
m = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], requires_grad=True)
vals, idx = m.max(1)
calls = []
vals.grad_fn.register_prehook(lambda go: calls.append(("pre", len(go), fmt(go[0]))))
vals.grad_fn.register_hook(lambda gi, go: calls.append(("post", len(gi), fmt(gi[0]), len(go))))
(vals * torch.tensor([1.0, 2.0])).sum().backward()
print(calls, "idx:", idx.tolist(), "grad:", fmt(m.grad))
m.grad = None
sv, si = m.sort(1)
sv.grad_fn.register_prehook(lambda go: calls.append(("sort", len(go))))
sv[:, 0].sum().backward()
print(calls[-1], fmt(m.grad))

m.grad = None
h = (m * 3)
h.grad_fn.register_prehook(lambda go: (go[0] * 10,))
handle = h.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))
h.sum().backward()
print("replaced:", fmt(m.grad))
handle.remove()
m.grad = None
h2 = m * 3
h2.sum().backward()
print("after remove:", fmt(m.grad))

# metadata and sequence numbers
n1 = (m * 2).grad_fn
n1.metadata["layer"] = "scale"
print("metadata:", n1.metadata, type(n1.metadata).__name__)

# -- GradientEdge and mutation of saved tensors ------------------------------------------
x2 = torch.tensor([1.0, 2.0], requires_grad=True)
hid = x2 * 3
out2 = (hid ** 2).sum()
edge = get_gradient_edge(hid)
print("edge:", type(edge).__name__, isinstance(edge, GradientEdge), edge.node.name(),
      edge.output_nr)
print("grad wrt edge:", fmt(torch.autograd.grad(out2, edge, retain_graph=True)[0]))
print("grad wrt edge and leaf:", [fmt(g) for g in torch.autograd.grad(out2, [edge, x2])])
try:
    get_gradient_edge(torch.ones(2))
except RuntimeError as ex:
    print(err(ex))

with allow_mutation_on_saved_tensors():
    base = torch.ones(2, 3, requires_grad=True)
    cl = base.clone()
    sq2 = (cl ** 2).sum()
    cl.sin_()
    sq2.backward()
    print("mutated after save:", fmt(base.grad))

base2 = torch.ones(3, requires_grad=True).clone()
sq3 = (base2 ** 2).sum()
base2.mul_(2)
try:
    sq3.backward()
except RuntimeError as ex:
    print(err(ex))
try:
    with allow_mutation_on_saved_tensors():
        with allow_mutation_on_saved_tensors():
            pass
except RuntimeError as ex:
    print(err(ex))
