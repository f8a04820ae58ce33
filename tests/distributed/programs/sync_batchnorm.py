"""SyncBatchNorm on several ranks, each holding one slice of a batch, against BatchNorm in
one process on the whole batch: outputs and input gradients of each slice, the weight and
bias gradients summed over ranks, and the running statistics after three steps."""

import datetime

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn

dist.init_process_group(timeout=datetime.timedelta(seconds=30))
me, n = dist.get_rank(), dist.get_world_size()
assert dist.get_world_size(dist.group.WORLD) == n  # (torch's spelling of the default group)

rng = np.random.default_rng(0)
batches = [rng.normal(2.0, 3.0, (4 * n, 5, 3, 3)).astype(np.float64) for _ in range(3)]
grads = [rng.normal(size=b.shape) for b in batches]


def model(sync):
    bn = nn.BatchNorm2d(5, momentum=0.3, dtype=ember.float64)
    with ember.no_grad():
        bn.weight.copy_(ember.linspace(0.5, 1.5, 5, dtype=ember.float64))
        bn.bias.copy_(ember.linspace(-1, 1, 5, dtype=ember.float64))
    return nn.SyncBatchNorm.convert_sync_batchnorm(bn) if sync else bn


whole, part = model(sync=False), model(sync=True)
mine = slice(4 * me, 4 * me + 4)
for x, g in zip(batches, grads):
    xw = ember.tensor(x, requires_grad=True)
    xp = ember.tensor(x[mine], requires_grad=True)
    yw, yp = whole(xw), part(xp)
    yw.backward(ember.tensor(g))
    yp.backward(ember.tensor(g[mine]))
    assert np.allclose(yp.detach().numpy(), yw.detach().numpy()[mine], rtol=1e-10, atol=1e-12)
    assert np.allclose(xp.grad.numpy(), xw.grad.numpy()[mine], rtol=1e-9, atol=1e-12)
for name in ("weight", "bias"):
    local = getattr(part, name).grad.clone()
    dist.all_reduce(local)
    assert np.allclose(local.numpy(), getattr(whole, name).grad.numpy(), rtol=1e-10), name
for name in ("running_mean", "running_var", "num_batches_tracked"):
    assert np.allclose(getattr(part, name).numpy(), getattr(whole, name).numpy(),
                       rtol=1e-12), name
assert type(part).__name__ == "SyncBatchNorm"
part.eval()
assert np.allclose(part(ember.tensor(batches[0])).detach().numpy(),
                   whole.eval()(ember.tensor(batches[0])).detach().numpy())
print(f"rank {me} ok")
dist.destroy_process_group()
