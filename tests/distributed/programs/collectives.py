"""Every collective on this rank, checked against the same computation done locally.

Rank r's inputs are drawn from a generator seeded with r, so every rank can rebuild every
other rank's inputs and work out what each collective must give. Prints one line per rank.
"""

import datetime
import os

import numpy as np

import ember
import ember.distributed as dist

dist.init_process_group(timeout=datetime.timedelta(seconds=20))
me, n = dist.get_rank(), dist.get_world_size()


def data(rank, shape=(3, 4), dtype=np.float32):
    return np.random.default_rng(rank).standard_normal(shape).astype(dtype)


def check(got, want, what):
    got = got.numpy() if isinstance(got, ember.Tensor) else np.asarray(got)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64),
                               rtol=1e-5, atol=1e-6, err_msg=what)


every = np.stack([data(r) for r in range(n)])

# all_reduce with each op, synchronous and asynchronous
for op, local in [(dist.ReduceOp.SUM, every.sum(0)), (dist.ReduceOp.AVG, every.mean(0)),
                  (dist.ReduceOp.MAX, every.max(0)), (dist.ReduceOp.MIN, every.min(0)),
                  (dist.ReduceOp.PRODUCT, every.prod(0))]:
    t = ember.from_numpy(data(me))
    assert dist.all_reduce(t, op=op) is None
    check(t, local, f"all_reduce {op}")
    t = ember.from_numpy(data(me))
    work = dist.all_reduce(t, op=op, async_op=True)
    assert work.wait() and work.is_completed()
    check(t, local, f"async all_reduce {op}")

# no copy for a contiguous tensor: MPI writes into the tensor's own storage
arr = data(me)
t = ember.from_numpy(arr)
dist.all_reduce(t)
check(arr, every.sum(0), "all_reduce in place in the shared NumPy array")

# a non-contiguous tensor, integers, bfloat16 and bool
t = ember.from_numpy(data(me)).t()
dist.all_reduce(t)
check(t, every.sum(0).T, "all_reduce on a transposed view")
ints = ember.arange(6) * (me + 1)
dist.all_reduce(ints)
check(ints, np.arange(6) * sum(range(1, n + 1)), "all_reduce int64")
half = ember.from_numpy(data(me)).to(ember.bfloat16)
dist.all_reduce(half, op=dist.ReduceOp.MAX)
check(half.float(), every.max(0).astype(np.float32).astype("bfloat16").astype(np.float32),
      "bfloat16 max")
flags = ember.tensor([me == 0, False, True])
dist.all_reduce(flags)
check(flags, [True, False, True], "bool sum is logical or")

# broadcast from the last rank
t = ember.from_numpy(data(me))
dist.broadcast(t, src=n - 1)
check(t, every[n - 1], "broadcast")
t = ember.from_numpy(data(me))
dist.broadcast(t, src=0, async_op=True).wait()
check(t, every[0], "async broadcast")

# gathers and scatters
outs = [ember.zeros(3, 4) for _ in range(n)]
dist.all_gather(outs, ember.from_numpy(data(me)))
for r in range(n):
    check(outs[r], every[r], "all_gather")
out = ember.zeros(n * 3, 4)
dist.all_gather_into_tensor(out, ember.from_numpy(data(me)), async_op=True).wait()
check(out, every.reshape(n * 3, 4), "all_gather_into_tensor")
out = ember.zeros(3, 4)
dist.reduce_scatter_tensor(out, ember.from_numpy(data(me, (n * 3, 4))))
check(out, np.stack([data(r, (n * 3, 4)) for r in range(n)]).sum(0)[me * 3:(me + 1) * 3],
      "reduce_scatter_tensor")
glist = [ember.zeros(3, 4) for _ in range(n)] if me == 1 else None
dist.gather(ember.from_numpy(data(me)), glist, dst=1)
if me == 1:
    for r in range(n):
        check(glist[r], every[r], "gather")
slist = [ember.full((3, 4), float(r)) for r in range(n)] if me == 0 else None
t = ember.zeros(3, 4)
dist.scatter(t, slist, src=0)
check(t, np.full((3, 4), float(me)), "scatter")
t = ember.from_numpy(data(me))
dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
if me == 0:
    check(t, every.sum(0), "reduce")

# all_to_all: rank i's j-th input arrives as rank j's i-th output
ins = [ember.full((2,), 10.0 * me + j) for j in range(n)]
outs = [ember.zeros(2) for _ in range(n)]
dist.all_to_all(outs, ins)
for i in range(n):
    check(outs[i], np.full(2, 10.0 * i + me), "all_to_all")

out = ember.zeros(2 * n)
dist.all_to_all_single(out, ember.arange(2.0 * n) + 100 * me)
check(out, [100 * i + 2 * me + k for i in range(n) for k in range(2)], "all_to_all_single")

# point to point round a ring, blocking and not
right, left = (me + 1) % n, (me - 1) % n
got = ember.zeros(3, 4)
if me % 2 == 0:
    dist.send(ember.from_numpy(data(me)), dst=right)
    sender = dist.recv(got, src=left)
else:
    sender = dist.recv(got)
    dist.send(ember.from_numpy(data(me)), dst=right)
assert sender == left, (sender, left)
check(got, every[left], "send/recv")
works = [dist.isend(ember.from_numpy(data(me)), dst=right), dist.irecv(got, src=left)]
for w in works:
    w.wait()
check(got, every[left], "isend/irecv")

# Python objects
objs = [None] * n
dist.all_gather_object(objs, {"rank": me, "tensor": ember.tensor([float(me)])})
assert [o["rank"] for o in objs] == list(range(n))
assert [o["tensor"].item() for o in objs] == [float(r) for r in range(n)]
box = [me, f"from rank {me}"]
dist.broadcast_object_list(box, src=n - 1)
assert box == [n - 1, f"from rank {n - 1}"], box

# a subgroup of ranks 0 and 1: its collectives see only those two
pair = dist.new_group([0, 1])
if me < 2:
    t = ember.from_numpy(data(me))
    dist.all_reduce(t, group=pair)
    check(t, every[:2].sum(0), "all_reduce on a subgroup")
    assert dist.get_world_size(pair) == 2 and dist.get_rank(pair) == me
else:
    assert dist.get_rank(pair) == -1

# bad arguments: the exception types PyTorch raises
for bad, kind in [(lambda: dist.all_reduce([1.0]), TypeError),
                  (lambda: dist.all_gather([ember.zeros(2)] * (n + 1), ember.zeros(2)), ValueError),
                  (lambda: dist.broadcast(ember.zeros(2), src=n), ValueError),
                  (lambda: dist.send(ember.zeros(2), dst=me), ValueError)]:
    try:
        bad()
    except kind:
        pass
    else:
        raise AssertionError(f"no {kind.__name__}")

dist.barrier()
env = {k: os.environ.get(k) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                      "MASTER_ADDR", "MASTER_PORT")}
print(f"rank {me} of {n} ok {env}", flush=True)
dist.destroy_process_group()
