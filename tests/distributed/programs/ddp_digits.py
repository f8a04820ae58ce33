"""DDP on the digits MLP: 2 ranks x 20 steps against one process on the concatenated batches.

Also checks, on the way: gradients are averaged before `backward()` returns, with bucket
all-reduces started while backward was still producing gradients; `no_sync()` accumulates
locally; `find_unused_parameters` handles a head that only one rank uses; a checkpoint
saved on rank 0 (into the folder given as argv[1]) loads on every rank.
"""

import datetime
import os
import sys

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset

STEPS, BATCH = 20, 16

dist.init_process_group(timeout=datetime.timedelta(seconds=30))
me, n = dist.get_rank(), dist.get_world_size()


def digits_mlp(seed):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128),
                         nn.ReLU(), nn.Linear(128, 10))


def flat(tensors):
    return ember.cat([t.detach().reshape(-1) for t in tensors])


def gathered(t):
    out = [ember.zeros_like(t) for _ in range(n)]
    dist.all_gather(out, t)
    return out


rng = np.random.default_rng(0)
images = ember.from_numpy(rng.random((n * BATCH * STEPS, 1, 8, 8), dtype=np.float32))
labels = ember.from_numpy(rng.integers(0, 10, n * BATCH * STEPS))
data = TensorDataset(images, labels)

# Each rank starts from a different seed: DDP must broadcast rank 0's parameters.
model = digits_mlp(seed=100 + me)
ddp = DDP(model, bucket_cap_mb=0.02)
assert len(ddp._buckets) > 2
opt = ember.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
sampler = DistributedSampler(data, shuffle=True, seed=7)
loader = DataLoader(data, batch_size=BATCH, sampler=sampler)

for step, (x, y) in enumerate(loader):
    if step == 0:
        # The local gradient of this rank's batch, without communication...
        F.cross_entropy(model(x), y).backward()
        local = flat(p.grad for p in model.parameters())
        opt.zero_grad()
    loss = F.cross_entropy(ddp(x), y)
    opt.zero_grad()
    loss.backward()
    if step == 0:
        # ...and after DDP's backward returned: the mean over ranks, identical everywhere,
        synced = flat(p.grad for p in model.parameters())
        expect = ember.stack(gathered(local)).mean(0)
        assert ember.allclose(synced, expect, atol=1e-6), (synced - expect).abs().max()
        assert all(ember.equal(g, synced) for g in gathered(synced))
        # with the first bucket's all-reduce started before the last gradient was ready.
        kinds = [k for k, _ in ddp._events]
        assert kinds.index("launch") < len(kinds) - 1 - kinds[::-1].index("ready"), kinds
    opt.step()

params = flat(model.parameters())
assert all(ember.equal(p, params) for p in gathered(params)), "replicas differ"

ckpt = os.path.join(sys.argv[1], "ddp.pt")
if me == 0:
    ember.save({"model": ddp.state_dict(), "optimizer": opt.state_dict()}, ckpt)
dist.barrier()
restored = DDP(digits_mlp(seed=5))
restored.load_state_dict(ember.load(ckpt)["model"])
assert ember.equal(flat(restored.parameters()), params)

if me == 0:
    # One process, same start, on the batches of all ranks concatenated step by step.
    ref = digits_mlp(seed=100)
    ref_opt = ember.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    parts = [DataLoader(data, batch_size=BATCH,
                        sampler=DistributedSampler(data, n, r, shuffle=True, seed=7))
             for r in range(n)]
    for batches in zip(*parts):
        x = ember.cat([b[0] for b in batches])
        y = ember.cat([b[1] for b in batches])
        ref_opt.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        ref_opt.step()
    want = flat(ref.parameters())
    diff = (params - want).abs().max().item()
    assert diff < 1e-5, f"DDP and single-process training differ by {diff}"

# no_sync: two local micro-batches, then one synchronised: the sum of all three, averaged.
x = ember.from_numpy(np.random.default_rng(me).random((3, 4, 64), dtype=np.float32))
opt.zero_grad()
with ddp.no_sync():
    for i in range(2):
        ddp(x[i]).sum().backward()
ddp(x[2]).sum().backward()
got = flat(p.grad for p in model.parameters())
ref_model = digits_mlp(0)
ref_model.load_state_dict(model.state_dict())
for i in range(3):
    ref_model(x[i]).sum().backward()
local = flat(p.grad for p in ref_model.parameters())
assert ember.allclose(got, ember.stack(gathered(local)).mean(0), atol=1e-5)


# find_unused_parameters: rank 0 uses head a only, the others head b only.
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x):
        return (self.a if me == 0 else self.b)(self.body(x))


ember.manual_seed(0)
heads = TwoHeads()
ddp2 = DDP(heads, find_unused_parameters=True)
x = ember.ones(3, 4)
for _ in range(2):  # twice: the second forward must not find the first reduction unfinished
    heads.zero_grad()
    ddp2(x).sum().backward()
with ember.no_grad():
    local_a = (heads.body(x).sum(0)[None, :] * ember.ones(2, 1)) if me == 0 else None
if me == 0:
    assert ember.allclose(heads.a.weight.grad, local_a / n, atol=1e-6)
assert ember.equal(heads.a.weight.grad, gathered(heads.a.weight.grad)[0])

print(f"rank {me} ok", flush=True)
dist.destroy_process_group()
