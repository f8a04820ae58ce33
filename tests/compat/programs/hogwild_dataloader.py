"""Data loading and multiprocessing as training scripts use them: map-style and sharded
iterable datasets under DataLoader worker processes (worker_init_fn, generator=,
persistent_workers, prefetch_factor, drop_last, pin_memory, custom collate), default_collate
and default_convert on nested structures, the samplers, random_split / ConcatDataset / Subset
/ StackDataset / ChainDataset, then Hogwild training of a model in shared memory by two
forked processes, and tensors passed through a Queue and a SimpleQueue."""

import collections
import random

import numpy as np
import torch
import torch.multiprocessing as mp
from torch import nn
from torch.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    get_worker_info,
    random_split,
)
from torch.utils.data.dataloader import default_collate, default_convert

torch.manual_seed(0)


class Squares(Dataset):
    def __init__(self, n: int):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.arange(3, dtype=torch.float32) + i
        return x, i % 3


class Shards(IterableDataset):
    """Yields start..end-1, each worker its own interleaved shard."""

    def __init__(self, start: int, end: int):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return iter(range(self.start + info.id, self.end, info.num_workers))  # shard by id


def seed_worker(worker_id):  # (numpy and random get the worker's own torch seed)
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


def describe(batch):
    if isinstance(batch, torch.Tensor):
        return f"{tuple(batch.shape)} {batch.dtype}"
    return type(batch).__name__


# -- a map-style dataset through worker processes ----------------------------------------
squares = Squares(10)
g = torch.Generator().manual_seed(7)
loader = DataLoader(squares, batch_size=4, shuffle=True, num_workers=2, generator=g,
                    worker_init_fn=seed_worker, persistent_workers=True, prefetch_factor=2,
                    pin_memory=True, multiprocessing_context="fork")
for epoch in range(2):
    for x, y in loader:
        print(epoch, describe(x), y.tolist(), x[:, 0].tolist(), x.is_pinned())
print("len", len(loader), loader.drop_last, loader.prefetch_factor)
del loader  # (its persistent workers stop here, before the processes forked below)

shards = DataLoader(Shards(0, 11), batch_size=3, num_workers=2, drop_last=False)
print("sharded:", sorted(v for b in shards for v in b.tolist()))


def pad_collate(samples):
    longest = max(len(s) for s in samples)
    out = torch.zeros(len(samples), longest, dtype=torch.long)
    for i, s in enumerate(samples):
        out[i, :len(s)] = torch.tensor(s)
    return out, torch.tensor([len(s) for s in samples])


ragged = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10], [11]]
for padded, lengths in DataLoader(ragged, batch_size=2, collate_fn=pad_collate, drop_last=True):
    print("padded", padded.tolist(), lengths.tolist())

# -- collation of nested structures -------------------------------------------------------
Point = collections.namedtuple("Point", ["x", "y"])
dict_batch = default_collate([{"a": torch.ones(2), "b": 1.5, "c": "s"},
                              {"a": torch.zeros(2), "b": 2.5, "c": "t"}])
print({k: describe(v) if k != "c" else v for k, v in dict_batch.items()}, dict_batch["b"])
pts = default_collate([Point(1, 2.0), Point(3, 4.0)])
print(type(pts).__name__, pts.x, pts.y.dtype)
arrs = default_collate([np.arange(3, dtype=np.int32), np.arange(3, 6, dtype=np.int32)])
print(describe(arrs), arrs.tolist())
print(default_collate([(np.float64(1.5), True), (np.float64(2.5), False)]))
conv = default_convert({"n": np.array([1.0, 2.0]), "t": (np.int16(3), [np.zeros(2)])})
print(describe(conv["n"]), conv["t"][0], describe(conv["t"][1][0]))

# -- samplers -----------------------------------------------------------------------------
gs = torch.Generator().manual_seed(3)
print("random w/ repl:", list(RandomSampler(range(5), replacement=True, num_samples=8,
                                            generator=gs)))
print("random n=7:", list(RandomSampler(range(5), num_samples=7, generator=gs)))
print("sequential:", list(SequentialSampler(range(4))))
print("subset:", list(SubsetRandomSampler([10, 20, 30, 40], generator=gs)))
weights = torch.tensor([0.1, 0.0, 5.0, 1.0], dtype=torch.double)
print("weighted:", list(WeightedRandomSampler(weights, 6, replacement=True, generator=gs)))
print("weighted no repl:", list(WeightedRandomSampler(weights, 3, replacement=False,
                                                      generator=gs)))
print("batches:", list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)),
      len(BatchSampler(range(7), 3, drop_last=True)))


class EvensFirst(Sampler):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(list(range(0, self.n, 2)) + list(range(1, self.n, 2)))

    def __len__(self):
        return self.n


print("custom:", [y.tolist() for _, y in DataLoader(squares, batch_size=4,
                                                     sampler=EvensFirst(6))])
by_batch = DataLoader(squares, batch_sampler=BatchSampler(EvensFirst(5), 2, False))
print("batch_sampler:", [x[:, 0].tolist() for x, _ in by_batch], len(by_batch))

# -- dataset combinators ------------------------------------------------------------------
full = TensorDataset(torch.arange(10.0).view(10, 1), torch.arange(10) % 2)
parts = random_split(full, [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
print("split:", [len(p) for p in parts], [p.indices for p in parts])
a, b = random_split(range(7), [4, 3], generator=torch.Generator().manual_seed(2))
print(list(a), list(b), type(a).__name__)
both = ConcatDataset([Subset(full, [0, 1, 2]), parts[2]])
print("concat:", len(both), both.cumulative_sizes, [both[i][0].item() for i in range(len(both))])
stack = StackDataset(full, squares)
print("stack:", len(stack), stack[4][0][1].item(), stack[4][1][1])
named = StackDataset(feat=torch.arange(3), label=torch.tensor([5, 6, 7]))
print("stack kw:", default_collate([named[0], named[2]]))
chain = ChainDataset([Shards(0, 3), Shards(10, 12)])
print("chain:", list(chain))

# -- mistakes -----------------------------------------------------------------------------


def report(label, fn):
    try:
        fn()
        print(label, "ok")
    except Exception as e:  # noqa: BLE001
        lines = str(e).splitlines()  # (a worker's traceback names library files: keep its ends)
        print(f"{label}: {type(e).__name__}: {lines[0]}", *lines[-1:] if len(lines) > 1 else [])


report("batch_size + batch_sampler",
       lambda: DataLoader(squares, batch_size=2, batch_sampler=BatchSampler(range(4), 2, False)))
report("shuffle + sampler", lambda: DataLoader(squares, shuffle=True, sampler=range(4)))
report("negative workers", lambda: DataLoader(squares, num_workers=-1))
report("bad split", lambda: random_split(range(10), [3, 4]))
report("ragged collate", lambda: default_collate([torch.zeros(2), torch.zeros(3)]))


class Faulty(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise ValueError(f"corrupt record {i}")
        return torch.tensor(i)


report("bad context", lambda: DataLoader(squares, num_workers=1,
                                         multiprocessing_context="threads"))
report("worker error", lambda: list(DataLoader(Faulty(), batch_size=1, num_workers=1)))

# -- Hogwild: two forked processes train one model in shared memory ----------------------


def train_head(model, k, steps):
    # each worker owns one head: its optimizer never writes the other head's parameters
    opt = torch.optim.SGD(model.heads[k].parameters(), lr=0.1, momentum=0.5)
    gen = torch.Generator().manual_seed(100 + k)
    for _ in range(steps):
        x = torch.randn(8, 3, generator=gen)
        target = x.sum(1, keepdim=True) * (k + 1)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model.heads[k](model.scale * x), target)
        loss.backward()
        opt.step()


model = nn.Module()
model.heads = nn.ModuleList([nn.Linear(3, 1), nn.Linear(3, 1)])
model.register_buffer("scale", torch.tensor(0.5))
print("shared before:", model.heads[0].weight.is_shared(), model.scale.is_shared())
model.share_memory()
print("shared after:", [p.is_shared() for p in model.parameters()], model.scale.is_shared(),
      model.heads[0].weight.requires_grad, model.heads[0].weight.grad)
before = [p.detach().clone() for p in model.parameters()]
ctx = mp.get_context("fork")
workers = [ctx.Process(target=train_head, args=(model, k, 5)) for k in range(2)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print("exit codes:", [w.exitcode for w in workers])
print("moved:", [bool((p != b).all()) for p, b in zip(model.parameters(), before)])
for name, p in model.named_parameters():
    print(name, [round(v, 4) for v in p.flatten().tolist()], p.grad)
print("clone shared:", model.heads[1].bias.clone().is_shared())

buf = torch.zeros(4)
view = buf[1:3]
buf.share_memory_()
print("view follows:", view.is_shared(), view._base is buf, view.storage_offset())


def fill(t, value):
    t.fill_(value)


p = ctx.Process(target=fill, args=(view, 7.0))
p.start()
p.join()
print("after child fill:", buf.tolist())


def record_rank(rank, table, fail_rank):
    if rank == fail_rank:
        raise RuntimeError(f"rank {rank} lost its data")
    table[rank] = (rank + 1) * 10


table = torch.zeros(3, dtype=torch.int64).share_memory_()
mp.start_processes(record_rank, args=(table, -1), nprocs=3, start_method="fork")
print("ranks:", table.tolist(), table.dtype)
try:
    mp.start_processes(record_rank, args=(table, 1), nprocs=2, start_method="fork")
except mp.ProcessRaisedException as e:
    lines = str(e).strip().splitlines()
    print(type(e).__name__, e.error_index, lines[0], "|", lines[-1])


def produce(q, sq, done, n):
    for i in range(n):
        q.put((i, torch.full((2,), float(i)) ** 2))
    sq.put(torch.arange(4).reshape(2, 2).T)
    done.wait()  # (the consumer must receive shared tensors while their sender lives)


q, sq, done = ctx.Queue(), ctx.SimpleQueue(), ctx.Event()
producer = ctx.Process(target=produce, args=(q, sq, done, 3))
producer.start()
received = [q.get() for _ in range(3)]
matrix = sq.get()
done.set()
producer.join()
print("queue:", [(i, t.tolist()) for i, t in received], received[0][1].dtype)
print("simple queue:", matrix.tolist(), matrix.is_contiguous(), matrix.stride())
