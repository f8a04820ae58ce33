"""Tensor parallelism with mlx.nn's distributed layers, on the group this process forms.

A small Llama-style block (attention with a fused QKV projection, a SwiGLU MLP) is split
as mlx-lm splits models across devices: the projections into the hidden space become
`AllToShardedLinear` (each rank keeps its rows: its heads, its slice of the MLP), the
projections back `ShardedToAllLinear` (each rank keeps its columns and the partial
products are summed with `all_sum`), by `shard_linear` and by `shard_inplace` with
segments for the fused weights. Run alone, the group is this process (rank 0 of 1) and
every collective is the identity, so the sharded block must compute what the plain one
computes: outputs, gradients and a few AdamW steps are checked. Then the quantized
sharded layers (from `nn.quantize`d ones), `fully_shard` / `FullyShardedModule` with a
bfloat16 compute dtype trained by SGD, a save / load round trip of the sharded weights,
and typical mistakes caught.
Run on ember with `python -m ember.run tensor_parallel.py`.
"""

import os
import tempfile

from mlx.nn.layers.distributed import shard_inplace, shard_linear
from mlx.utils import tree_flatten, tree_map

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

group = mx.distributed.init()
print(f"group: rank {group.rank()} of {group.size()}")


def count(tree):
    return sum(v.size for _, v in tree_flatten(tree))


def max_diff(a, b):
    return mx.abs(a - b).max().item()


def caught(label, fn):
    """Run fn and print the exception type and message it raised (or its result)."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the type is printed
        print(f"  {label}: {type(e).__name__}: {e}")
    else:
        print(f"  {label}: no error -> {out!r}")


class Attention(nn.Module):
    def __init__(self, dims, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dims, 3 * dims, bias=False)
        self.o = nn.Linear(dims, dims, bias=False)

    def __call__(self, x):
        b, t, _ = x.shape
        q, k, v = mx.split(self.qkv(x), 3, axis=-1)
        # the heads this rank holds: the sharded projection's width says how many
        heads = q.shape[-1] // (x.shape[-1] // self.heads)
        q, k, v = (a.reshape(b, t, heads, -1).transpose(0, 2, 1, 3) for a in (q, k, v))
        out = mx.fast.scaled_dot_product_attention(q, k, v, scale=q.shape[-1] ** -0.5,
                                                   mask="causal")
        return self.o(out.transpose(0, 2, 1, 3).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, dims, hidden):
        super().__init__()
        self.gate_up = nn.Linear(dims, 2 * hidden)
        self.down = nn.Linear(hidden, dims)

    def __call__(self, x):
        gate, up = mx.split(self.gate_up(x), 2, axis=-1)
        return self.down(nn.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, dims=16, heads=4, hidden=32):
        super().__init__()
        self.norm1, self.norm2 = nn.RMSNorm(dims), nn.RMSNorm(dims)
        self.attn, self.mlp = Attention(dims, heads), MLP(dims, hidden)

    def __call__(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def tensor_parallel(block):
    """Shard `block` in place for tensor parallelism: new layers where the computation
    must communicate, the fused weights cut per segment (q, k, v; gate, up)."""
    block.attn.qkv = shard_linear(block.attn.qkv, "all-to-sharded", segments=3, group=group)
    block.attn.o = shard_linear(block.attn.o, "sharded-to-all", group=group)
    block.mlp.gate_up = nn.AllToShardedLinear.from_linear(block.mlp.gate_up, segments=2)
    block.mlp.down = nn.ShardedToAllLinear.from_linear(block.mlp.down)
    return block


# -- the plain block and its tensor-parallel copy ---------------------------------------------
mx.random.seed(0)
plain = Block()
parallel = Block()
parallel.update(plain.parameters())
tensor_parallel(parallel)
print(parallel)
print("parameters: plain", count(plain.parameters()), "parallel",
      count(parallel.parameters()))
print("shapes:", tree_map(lambda a: a.shape, parallel.mlp.parameters()))

x = mx.random.normal((2, 5, 16))
print(f"forward max diff {max_diff(plain(x), parallel(x)):.2e}")
y = parallel(x)
print("output", y.shape, y.dtype, f"mean {y.mean().item():.5f} std {y.std().item():.5f}")

target = mx.random.normal((2, 5, 16))


def loss_fn(model, x, target):
    return nn.losses.mse_loss(model(x), target)


_, g_plain = nn.value_and_grad(plain, loss_fn)(plain, x, target)
_, g_par = nn.value_and_grad(parallel, loss_fn)(parallel, x, target)
diffs = [max_diff(a, b) for (_, a), (_, b) in zip(tree_flatten(g_plain), tree_flatten(g_par))]
print(f"gradients: {len(diffs)} arrays, max diff {max(diffs):.2e}")
gx = mx.grad(lambda x: loss_fn(parallel, x, target))(x)
gx_plain = mx.grad(lambda x: loss_fn(plain, x, target))(x)
print(f"input gradient max diff {max_diff(gx, gx_plain):.2e}")

# -- a few AdamW steps on both: the same trajectory ---------------------------------------
for name, model in (("plain", plain), ("parallel", parallel)):
    opt = optim.AdamW(learning_rate=1e-2)
    step = nn.value_and_grad(model, loss_fn)
    losses = []
    for _ in range(6):
        loss, grads = step(model, x, target)
        grads = nn.average_gradients(grads, group=group)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        losses.append(f"{loss.item():.5f}")
    print(f"{name:>8} losses", " ".join(losses))
print(f"after training max diff {max_diff(plain(x), parallel(x)):.2e}")

# -- shard_inplace: the same parameters cut, the layers kept -------------------------------
mx.random.seed(1)
fused = MLP(8, 12)
before = fused.gate_up.weight
shard_inplace(fused.gate_up, "all-to-sharded", segments=[0.5], group=group)
shard_inplace(fused.down, "sharded-to-all", group=group)
print("shard_inplace kept", type(fused.gate_up).__name__, fused.gate_up.weight.shape,
      "equal", mx.array_equal(before, fused.gate_up.weight).item())
shard_inplace(fused, lambda path, w: 0 if path.endswith("weight") else None, group=group)
print("custom predicate:", tree_map(lambda a: a.shape, fused.parameters()))

# -- quantized: sharded copies of nn.quantize's layers --------------------------------------
mx.random.seed(2)
mlp = MLP(64, 64)
nn.quantize(mlp, group_size=32, bits=4)
q_mlp = MLP(64, 64)
q_mlp.gate_up = shard_linear(mlp.gate_up, "all-to-sharded", segments=2)
q_mlp.down = nn.QuantizedShardedToAllLinear.from_quantized_linear(mlp.down)
print(q_mlp)
print("trainable after from_quantized_linear:", count(q_mlp.trainable_parameters()))
q_mlp.unfreeze()
print("trainable after unfreeze:", sorted(k for k, _ in tree_flatten(q_mlp.trainable_parameters())))
xq = mx.random.normal((3, 64))
print(f"quantized forward max diff {max_diff(mlp(xq), q_mlp(xq)):.2e}")
print("dtypes:", q_mlp.gate_up.weight.dtype, q_mlp.gate_up.scales.dtype,
      q_mlp.gate_up.biases.dtype, q_mlp.gate_up.bias.dtype)
fresh = nn.QuantizedAllToShardedLinear(64, 16, bias=False, group_size=32, bits=8)
print(fresh, fresh.weight.shape, fresh.scales.shape)

# -- fully sharded: the group of one keeps the model; the wrapper gathers each call ----------
mx.random.seed(3)
model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
print("fully_shard on a group of one returns the model:", nn.fully_shard(model) is model)
fsdp = nn.FullyShardedModule(model, compute_dtype=mx.bfloat16)
print(fsdp)
xs, ys = mx.random.normal((16, 8)), mx.random.normal((16, 4))
out = fsdp(xs)
print("output dtype", out.dtype, "parameters dtype", model.layers[0].weight.dtype)


def fsdp_loss(m, x, y):
    return nn.losses.mse_loss(m(x).astype(mx.float32), y)


opt = optim.SGD(learning_rate=0.1, momentum=0.9)
step = nn.value_and_grad(fsdp, fsdp_loss)
losses = []
for i in range(8):
    loss, grads = step(fsdp, xs, ys)
    if i == 0:
        print("gradient dtypes:", sorted({str(g.dtype) for _, g in tree_flatten(grads)}))
    opt.update(fsdp, grads)
    mx.eval(fsdp.parameters(), opt.state)
    losses.append(f"{loss.item():.4f}")
print("FSDP SGD losses", " ".join(losses))
print("keys:", [k for k, _ in tree_flatten(fsdp.parameters())])

# -- the sharded weights saved and loaded back ----------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "shard-rank0.safetensors")
    parallel.save_weights(path)
    copy = tensor_parallel(Block())
    copy.load_weights(path)
    print(f"reloaded shard: forward max diff {max_diff(copy(x), parallel(x)):.2e}")

# -- typical mistakes -------------------------------------------------------------------------
print("mistakes:")
caught("unknown sharding", lambda: shard_linear(nn.Linear(4, 4), "row-wise"))
caught("unknown sharding in place", lambda: shard_inplace(nn.Linear(4, 4), "columns"))
caught("predicate returning a string",
       lambda: shard_inplace(nn.Linear(4, 4), lambda p, w: "rows"))
caught("segments not splitting evenly",
       lambda: nn.AllToShardedLinear.from_linear(nn.Linear(4, 6), segments=4))
caught("sharded input of the wrong width",
       lambda: nn.ShardedToAllLinear(8, 4)(mx.ones((2, 6))).shape)
caught("quantized shard off the group size",
       lambda: nn.QuantizedShardedToAllLinear(40, 8, group_size=32))
with_scalar = nn.Linear(4, 4)
with_scalar.temperature = mx.array(1.0)
caught("fully sharding a scalar", lambda: nn.FullyShardedModule(with_scalar))
caught("gathering with the wrong input", lambda: fsdp(mx.ones((2, 5))).shape)
