"""ATen ops by name: calling torch.ops.aten directly, selective activation checkpointing
with an op-list and a logging policy, and a FlopCounterMode with a custom formula."""

from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import (
    CheckpointPolicy,
    checkpoint,
    create_selective_checkpoint_contexts,
)
from torch.utils.flop_counter import FlopCounterMode

torch.manual_seed(0)
aten = torch.ops.aten

# --- the namespace: packets, overloads, schemas
print(repr(aten.mm), str(aten.mm), repr(aten.mm.default), aten.mm.default.name())
print(aten.add.Tensor._schema)
print(aten.sum.dim_IntList._schema)
print(aten.native_layer_norm.default._schema)
print(aten.add.Tensor.overloadpacket is aten.add, aten.view.default.is_view,
      aten.mm.default.is_view)
for name in ("nope", "mm.nope"):
    try:
        op = aten
        for part in name.split("."):
            op = getattr(op, part)
    except AttributeError as e:
        print("AttributeError:", e)

# --- calling ATen ops with ATen's conventions
x = torch.randn(4, 6)
w = torch.randn(3, 6)
b = torch.randn(3)
y = aten.addmm(b, x, aten.t(w), beta=0.5, alpha=2)
print("addmm", tuple(y.shape), f"{y.sum().item():.5f}",
      torch.allclose(y, 0.5 * b + 2 * x @ w.t(), atol=1e-5))
print("add.Scalar", aten.add.Scalar(torch.arange(3), 2, 3))
print("add (packet, picks Scalar)", aten.add(torch.arange(3), 1))
print("sum over []", aten.sum.dim_IntList(torch.arange(6.0).view(2, 3), []))
print("amax", aten.amax(torch.tensor([[1.0, 5.0], [3.0, 2.0]]), [1], True).flatten())
out, mean, rstd = aten.native_layer_norm(x, [6], None, None, 1e-5)
print("native_layer_norm", tuple(out.shape), tuple(mean.shape), tuple(rstd.shape),
      f"{mean.sum().item():.5f} {rstd.sum().item():.5f}")
q = torch.randn(1, 2, 4, 8)
o, lse = aten._scaled_dot_product_flash_attention_for_cpu(q, q, q, is_causal=True)
print("flash", tuple(o.shape), tuple(lse.shape), lse.dtype, f"{lse.sum().item():.4f}")
print("softmax", aten._softmax(torch.tensor([1.0, 2.0, 3.0]), 0, False))
print("embedding", aten.embedding(torch.arange(8.0).view(4, 2), torch.tensor([3, 0])))
print("index_select", aten.index_select(torch.arange(6).view(3, 2), 0, torch.tensor([2, 2])))
print("full", aten.full([2, 2], 7, dtype=torch.float64))
print("zeros", aten.zeros([3], dtype=torch.int32), aten.ones([2]).dtype)
print("split", [tuple(t.shape) for t in aten.split.Tensor(torch.arange(7), 3)])
conv = aten.convolution(torch.ones(1, 1, 4, 4), torch.ones(2, 1, 3, 3), None, [1, 1], [1, 1],
                        [1, 1], False, [0, 0], 1)
print("convolution", tuple(conv.shape), conv[0, 0])
try:
    aten.mm(torch.ones(2, 3))
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
try:
    aten.mm.default(torch.ones(2, 3), torch.ones(2, 3))
except RuntimeError as e:
    print("RuntimeError:", e)

# gradients flow through ATen calls
a = torch.randn(3, 4, requires_grad=True)
h = aten.gelu(aten.mm(a, torch.ones(4, 2)), approximate="tanh")
aten.sum.default(h).backward()
print("grad", f"{a.grad.abs().sum().item():.5f}")

# --- selective activation checkpointing
block = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 8))
inp = torch.randn(5, 8, requires_grad=True)
seen = []


def policy(ctx, op, *args, **kwargs):
    seen.append(str(op))
    if op in (aten.addmm.default, aten.mm.default):
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


ref = block(inp).pow(2).sum()
ref.backward()
want = inp.grad.clone()
inp.grad = None
y = checkpoint(block, inp, use_reentrant=False,
               context_fn=lambda: create_selective_checkpoint_contexts(policy))
y.pow(2).sum().backward()
print("policy saw", Counter(seen).most_common())
print("grads equal", torch.allclose(inp.grad, want, atol=1e-6))

ops_to_save = [aten.mm.default, aten._scaled_dot_product_flash_attention_for_cpu.default]


def attention(t):
    return F.scaled_dot_product_attention(t, t, t, is_causal=True).relu()


t = torch.randn(1, 2, 4, 8, requires_grad=True)
z = checkpoint(attention, t, use_reentrant=False,
               context_fn=lambda: create_selective_checkpoint_contexts(ops_to_save))
z.sum().backward(retain_graph=True)
print("attention grad", f"{t.grad.abs().sum().item():.5f}")
try:
    z.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# --- FlopCounterMode keyed by ATen packets, with a custom formula
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))


def addmm_flop(bias_shape, a_shape, b_shape, *args, out_shape=None, **kwargs):
    return 3 * a_shape[0] * a_shape[1] * b_shape[1]  # a made-up cost model


with FlopCounterMode(display=False, custom_mapping={aten.addmm: addmm_flop}) as counter:
    model(torch.randn(16, 8)).sum().backward()
counts = counter.get_flop_counts()["Global"]
for op in sorted(counts, key=str):
    print(op, type(op).__name__, counts[op], op is getattr(aten, str(op).split(".")[1]))
print("total", counter.get_total_flops())
