"""The distributed layers of `ember.mlx.nn` on every process of a launch, checked against
the plain layers each process also builds (every rank draws the same parameters and data
from the same seed). Prints "rank r of n ok" when every check passes.

Checked: `AllToShardedLinear` then `ShardedToAllLinear` (the tensor-parallel MLP) gives
the plain MLP's output, its input gradient and each rank's slice of the weight gradients;
the quantized pair gives `QuantizedLinear`'s outputs; `fully_shard` gives the plain
model's output and, per rank, its block of the gradients (the mean over the ranks, which
all compute the same loss here).
"""

import numpy as np

import ember.mlx.core as mx
import ember.mlx.nn as nn
from ember.mlx.nn.layers.distributed import shard_linear
from ember.mlx.utils import tree_flatten

world = mx.distributed.init()
r, n = world.rank(), world.size()
assert n > 1, "launch this program on several processes"


def close(got, want, tol=1e-5):
    # float32 sums over a different grouping of the same terms: a few ulps apart
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=tol, atol=tol)


mx.random.seed(0)
up, down = nn.Linear(8, 4 * n), nn.Linear(4 * n, 6)
x = mx.random.normal((3, 8))


def plain(x):
    return down(nn.relu(up(x)))


# -- tensor parallel MLP: all-to-sharded, then sharded-to-all ---------------------------------
tp_up, tp_down = shard_linear(up, "all-to-sharded"), shard_linear(down, "sharded-to-all")
assert tp_up.weight.shape == (4, 8) and tp_down.weight.shape == (6, 4)
assert repr(tp_up) == f"AllToShardedLinear(input_dims=8, output_dims={4 * n}, bias=True)"


def parallel(x):
    return tp_down(nn.relu(tp_up(x)))


close(parallel(x), plain(x))
close(mx.grad(lambda x: parallel(x).sum())(x), mx.grad(lambda x: plain(x).sum())(x))
_, g_tp = nn.value_and_grad(tp_up, lambda x: parallel(x).sum())(x)
_, g = nn.value_and_grad(up, lambda x: plain(x).sum())(x)
close(g_tp["weight"], g["weight"][4 * r:4 * (r + 1)])
close(g_tp["bias"], g["bias"][4 * r:4 * (r + 1)])

# fused segments: each of the two halves of the rows is cut separately
fused = shard_linear(up, "all-to-sharded", segments=2)
halves = np.split(np.array(up.weight), 2)
close(fused.weight, np.concatenate([np.split(h, n)[r] for h in halves]), 0)

# -- the quantized pair ----------------------------------------------------------------------
q_up, q_down = nn.QuantizedLinear(64, 8 * n), nn.QuantizedLinear(64 * n, 5)
q_up.bias, q_down.bias = mx.random.normal((8 * n,)), mx.random.normal((5,))
xq = mx.random.normal((2, 64))
close(shard_linear(q_up, "all-to-sharded")(xq), q_up(xq)[:, 8 * r:8 * (r + 1)])
sharded_down = shard_linear(q_down, "sharded-to-all")
wide = mx.random.normal((2, 64 * n))
close(sharded_down(wide[:, 64 * r:64 * (r + 1)]), q_down(wide), 1e-4)

# -- fully sharded: the model's output, and the mean gradients' blocks ------------------------
mx.random.seed(1)
model = nn.Sequential(nn.Linear(6, 2 * n), nn.ReLU(), nn.Linear(2 * n, 2 * n))
full = {k: np.array(v) for k, v in tree_flatten(model.parameters())}
xs = mx.random.normal((4, 6))
want = model(xs)
_, g_full = nn.value_and_grad(model, lambda x: model(x).sum())(xs)
g_full = {k: np.array(v) for k, v in tree_flatten(g_full)}
sharded = nn.fully_shard(model)
assert type(sharded).__name__ == "FullyShardedModule"
assert repr(sharded).startswith("FullyShardedModule(num_sharded_params=4\n")
for k, v in tree_flatten(sharded.parameters()):
    name = k.removeprefix("module.")
    rows = full[name].shape[0] // n
    close(v, full[name][rows * r:rows * (r + 1)], 0)
close(sharded(xs), want)
_, g_sh = nn.value_and_grad(sharded, lambda x: sharded(x).sum())(xs)
for k, v in tree_flatten(g_sh):
    name = k.removeprefix("module.")
    rows = full[name].shape[0] // n
    close(v, g_full[name][rows * r:rows * (r + 1)])  # the mean over ranks of equal grads
print(f"rank {r} of {n} ok")
