"""`mx.distributed` on every process of a launch, checked against values worked out by hand.

Rank r's inputs are built from r alone (r + 1, r % 2, ...), so each process knows what
every collective must give. Prints "rank r of n ok" when every check passes.
"""

import numpy as np

import ember.mlx.core as mx
import ember.mlx.nn as nn

D = mx.distributed
world = D.init()
r, n = world.rank(), world.size()
assert n > 1, "launch this program on several processes"
assert (D.init().rank(), D.init().size()) == (r, n)  # (the same group every time)
assert D.init(strict=True, backend="mpi").size() == n and D.is_available("mpi")
tri = n * (n + 1) // 2  # the sum of r + 1 over the ranks


def same(got, want, dtype=None):
    assert dtype is None or got.dtype == dtype, (got.dtype, dtype)
    np.testing.assert_array_equal(np.array(got.astype(mx.float32) if got.dtype in (
        mx.bfloat16, mx.float16) else got), np.asarray(want))


def raises(kind, message, call):
    try:
        call()
    except kind as e:
        assert str(e) == message, str(e)
    else:
        raise AssertionError(f"no {kind.__name__}: {message}")


# -- reductions: shapes and dtypes kept, every type -----------------------------------------
base = np.arange(6).reshape(2, 3)
for dt in [mx.float32, mx.float16, mx.bfloat16, mx.int32, mx.uint32, mx.int8, mx.uint16,
           mx.int64, mx.float64]:
    x = mx.array(base * (r + 1)).astype(dt)
    same(D.all_sum(x), base * tri, dt)
    same(D.all_max(x), base * n, dt)
    same(D.all_min(x), base, dt)
same(D.all_sum(mx.array(100, mx.int8)), np.int64(100 * n).astype(np.int8), mx.int8)  # (wraps)
same(D.all_sum(3), 3 * n, mx.int32)  # (a Python number: an int32 array)
same(D.all_sum(mx.array(0.5)), 0.5 * n, mx.float32)  # (0-d stays 0-d)
flags = mx.array([r == 0, False, True])
same(D.all_sum(flags), [True, False, True], mx.bool_)  # (bools sum as a logical or)
same(D.all_min(flags), [n == 1, False, True], mx.bool_)
c = mx.array([complex(r, -r), complex(1, r)])
same(D.all_sum(c), [complex(tri - n, n - tri), complex(n, tri - n)], mx.complex64)
same(D.all_max(c), [complex(n - 1, 1 - n), complex(1, n - 1)], mx.complex64)
same(D.all_min(c), [0, 1], mx.complex64)  # (real part first, then imaginary)
halves = mx.array([0.1, 1000.0], mx.float16) * (r + 1)
want = np.float16(0.1) * np.float16(1)
for k in range(2, n + 1):  # (float16 sums fold rank by rank in float16)
    want = np.float16(want + np.float16(np.float16(0.1) * np.float16(k)))
assert np.array(D.all_sum(halves))[0] == want

# -- all_gather, sum_scatter -----------------------------------------------------------------
x = mx.array(base + 10 * r, mx.int32)
same(D.all_gather(x), np.concatenate([base + 10 * k for k in range(n)]), mx.int32)
same(D.all_gather(mx.array(r, mx.bfloat16)), np.arange(n), mx.bfloat16)  # (0-d: a vector)
blocks = mx.array(np.arange(2 * n * 2).reshape(2 * n, 2) * (r + 1)).astype(mx.float32)
same(D.sum_scatter(blocks), (np.arange(2 * n * 2).reshape(2 * n, 2) * tri)[2 * r:2 * r + 2])
raises(ValueError, f"[sum_scatter] Invalid shape=({n + 1},2) for a group of size {n}. The "
       "first dimension (axis 0) must be divisible by the group size and input mst have at "
       "least one.", lambda: D.sum_scatter(mx.zeros((n + 1, 2))))
raises(ValueError, f"[sum_scatter] Invalid shape=() for a group of size {n}. The first "
       "dimension (axis 0) must be divisible by the group size and input mst have at least "
       "one.", lambda: D.sum_scatter(mx.array(1.0)))

# -- send / recv around the ring (even ranks send first, so no pair waits on the other) ------
right, left = (r + 1) % n, (r - 1) % n
msg = mx.arange(4).astype(mx.bfloat16) + r
for turn in (0, 1):
    if (r % 2 == 0) == (turn == 0):
        assert D.send(msg, right) is msg
    else:
        got = D.recv_like(msg, left) if turn else D.recv((4,), mx.bfloat16, left)
        same(got, np.arange(4) + left, mx.bfloat16)
raises(ValueError, f"Invalid destination={n} for a group of size {n}",
       lambda: D.send(msg, n))
raises(ValueError, f"Invalid source=-1 for a group of size {n}",
       lambda: D.recv((1,), mx.float32, -1))

# -- split: by parity, and with the ranks reversed by key ------------------------------------
half = world.split(r % 2)
mates = [k for k in range(n) if k % 2 == r % 2]
assert (half.rank(), half.size()) == (r // 2, len(mates))
same(D.all_sum(mx.array([r + 1]), group=half), [sum(k + 1 for k in mates)])
same(D.all_gather(mx.array([r]), group=half), mates)
if half.size() == 1:  # (a split of one process: collectives return their input)
    raises(ValueError, "Cannot send to a singleton group", lambda: D.send(msg, 0, group=half))
back = world.split(0, key=n - 1 - r)
assert back.rank() == n - 1 - r
same(D.all_gather(mx.array([r]), group=back), np.arange(n)[::-1])

# -- inside lazy graphs: a collective evaluates what it reads --------------------------------
y = mx.ones((3,)) * (r + 1) + 1  # (pending)
s = D.all_sum(y)
assert mx.graph_size() == 0  # (the graph ran; the result is computed)
same(s * 2, np.full(3, 2 * (tri + n)))

# -- derivatives: MLX's rules ----------------------------------------------------------------
w = mx.array([1.0, -2.0, 3.0])
v = mx.array([0.5, 1.5, 2.5]) * (r + 1)
for fn in (D.all_sum, D.all_max, D.all_min):  # (the cotangent passes through unchanged)
    same(mx.grad(lambda v, fn=fn: (fn(v) * w).sum())(v), w)
weights = mx.arange(3 * n).astype(mx.float32)
same(mx.grad(lambda v: (D.all_gather(v) * weights).sum())(v), np.arange(3 * r, 3 * r + 3))
_, tangent = mx.jvp(D.all_sum, [v], [mx.ones(3)])
same(tangent[0], np.full(3, n))
same(mx.vmap(D.all_sum)(mx.ones((2, 3)) * (r + 1)), np.full((2, 3), tri))
raises(ValueError, "[Primitive::vjp] Not implemented for Send.",
       lambda: mx.grad(lambda v: D.send(v, r).sum())(v))  # (to itself: a small message)
same(D.recv_like(v, r), v)
raises(ValueError, "[Primitive::vjp] Not implemented for Sum ReduceScatter.",
       lambda: mx.grad(lambda v: D.sum_scatter(v).sum())(mx.ones(n)))

# -- nn.average_gradients: the mean over the processes, the tree's dtypes kept ---------------
grads = {"w": mx.ones((2, 2)) * (r + 1), "b": [mx.arange(3).astype(mx.float32) * r]}
for size in (32 * 1024**2, 16, 0):  # (one message, one per array, no packing)
    avg = nn.average_gradients(grads, all_reduce_size=size)
    same(avg["w"], np.full((2, 2), (n + 1) / 2), mx.float32)
    same(avg["b"][0], np.arange(3) * (n - 1) / 2, mx.float32)
mixed = nn.average_gradients({"a": mx.array([r], mx.float16), "b": mx.array([2.0 * r])})
same(mixed["a"], [(n - 1) / 2], mx.float16)
same(mixed["b"], [n - 1.0], mx.float32)

print(f"rank {r} of {n} ok")
