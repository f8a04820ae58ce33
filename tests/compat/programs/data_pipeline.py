"""An input pipeline as training scripts build one: a sharded IterableDataset under two
workers (seeded by worker_init_fn), dataset combinators (ConcatDataset, StackDataset,
ChainDataset, Subset, random_split), every sampler including DistributedSampler across
epochs, default_collate / default_convert on mixed structures, variable-length sequences
padded and packed by a custom collate_fn for an LSTM, loader lengths and options, and the
mistakes users make with their error messages."""

import collections
import random

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
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
from torch.utils.data._utils.collate import collate, default_collate_fn_map
from torch.utils.data.dataloader import default_collate, default_convert

torch.manual_seed(0)


# -- an iterable dataset sharded across two workers --------------------------------------
class LineStream(IterableDataset):
    """Records start..end-1; each worker reads a contiguous block of them."""

    def __init__(self, start: int, end: int):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        lo, hi = self.start, self.end
        if info is not None:  # split the range into num_workers contiguous blocks
            per = (hi - lo + info.num_workers - 1) // info.num_workers
            lo = lo + info.id * per
            hi = min(lo + per, hi)
        for i in range(lo, hi):
            yield {"id": i, "x": torch.tensor([float(i), i / 2]),
                   "worker": -1 if info is None else info.id}


def init_worker(worker_id):
    info = get_worker_info()
    # each worker's seed is base_seed + id; numpy and random are seeded from it
    np.random.seed(info.seed % 2**32)
    random.seed(info.seed)


print("main process info:", get_worker_info())
stream = LineStream(0, 10)
print("single process:", [d["id"].tolist() for d in DataLoader(stream, batch_size=4)])
g = torch.Generator().manual_seed(2024)
loader = DataLoader(stream, batch_size=3, num_workers=2, worker_init_fn=init_worker,
                    generator=g, multiprocessing_context="fork")
batches = list(loader)
for b in batches:  # workers take turns: batch k comes from worker k % 2
    print("batch", b["worker"].tolist(), b["id"].tolist(), b["x"].dtype, tuple(b["x"].shape))


class SeedReport(IterableDataset):
    """Each worker yields its own id, seed offset and first numpy / random draws."""

    def __iter__(self):
        info = get_worker_info()
        yield (info.id, info.num_workers, info.seed - info.id,
               int(np.random.randint(0, 1000)), random.randint(0, 1000))


g = torch.Generator().manual_seed(99)
reports = list(DataLoader(SeedReport(), batch_size=None, num_workers=2, generator=g,
                          worker_init_fn=init_worker, multiprocessing_context="fork"))
base = reports[0][2]
for wid, nw, seed_base, np_draw, py_draw in sorted(reports):
    print(f"worker {wid}/{nw}: same base seed {seed_base == base}, numpy {np_draw}, "
          f"random {py_draw}")
g = torch.Generator().manual_seed(99)
again = list(DataLoader(SeedReport(), batch_size=None, num_workers=2, generator=g,
                        worker_init_fn=init_worker, multiprocessing_context="fork"))
print("reproducible with the same generator:", sorted(again) == sorted(reports))



class NoisyDraws(IterableDataset):
    """Without a worker_init_fn each worker still gets its own numpy / random / torch seed."""

    def __iter__(self):
        info = get_worker_info()
        yield (info.id, int(np.random.randint(0, 10**6)), random.randint(0, 10**6),
               torch.randint(0, 10**6, (1,)).item())


torch.manual_seed(31)
print("default worker seeding:", sorted(DataLoader(NoisyDraws(), batch_size=None, num_workers=2,
                                                   multiprocessing_context="fork")))

# -- combinators -------------------------------------------------------------------------
xs = torch.arange(12.0).view(6, 2)
ys = torch.tensor([0, 1, 1, 0, 2, 2])
tds = TensorDataset(xs, ys)
print("tensor dataset:", len(tds), tds[-1], tds[1:3][0].shape)
left, right = TensorDataset(torch.arange(3)), TensorDataset(torch.arange(100, 104))
joined = ConcatDataset([left, right, TensorDataset(torch.arange(200, 202))])
print("concat:", len(joined), joined.cumulative_sizes,
      [joined[i][0].item() for i in [0, 2, 3, 6, 7, 8]],
      [joined[i][0].item() for i in [-1, -3, -9]])
added = left + right
print("added:", type(added).__name__, len(added), added[4])
try:
    joined[-10]
except ValueError as e:
    print("concat out of range:", type(e).__name__, e)

pairs = StackDataset(tds, TensorDataset(torch.arange(6) * 10))
first = pairs[2]
print("stack tuple:", len(pairs), type(first).__name__, first[0][0].tolist(), first[1])
named = StackDataset(image=xs, label=ys, weight=torch.linspace(0, 1, 6))
print("stack dict:", named[5])
print("stack dict batch:", next(iter(DataLoader(named, batch_size=4))))
try:
    StackDataset(xs, ys[:4])
except ValueError as e:
    print("stack mismatch:", e)



class Augmented(TensorDataset):
    """A TensorDataset whose samples get a flip on odd indices (its __getitem__ must run)."""

    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        return (x.flip(0) if i % 2 else x), y


aug = Augmented(xs, ys)
print("augmented batch:", next(iter(DataLoader(aug, batch_size=4)))[0].tolist())
print("augmented subset:", next(iter(DataLoader(Subset(aug, [1, 2]), batch_size=2)))[0].tolist())
print("augmented stack:", next(iter(DataLoader(StackDataset(aug, ys), batch_size=2))))
chain = ChainDataset([LineStream(0, 2), LineStream(5, 7)])
print("chain:", [d["id"] for d in chain], len(LineStream(0, 2).__dict__))
sub = Subset(tds, [5, 0, 3])
print("subset:", len(sub), [sub[i][1].item() for i in range(len(sub))], sub.indices)

gen = torch.Generator().manual_seed(42)
train, val, test = random_split(range(20), [12, 5, 3], generator=gen)
print("split lengths:", list(train), list(val), list(test))
gen = torch.Generator().manual_seed(42)
parts = random_split(range(11), [0.6, 0.2, 0.2], generator=gen)
print("split fractions:", [len(p) for p in parts], [p.indices for p in parts])
torch.manual_seed(5)
print("split default generator:", [p.indices for p in random_split(range(6), [0.5, 0.5])])

# -- samplers ----------------------------------------------------------------------------
data = list(range(10))
print("sequential:", list(SequentialSampler(data)), len(SequentialSampler(data)))
gs = torch.Generator().manual_seed(11)
print("random:", list(RandomSampler(data, generator=gs)))
print("random replacement:", list(RandomSampler(data, replacement=True, num_samples=40,
                                                generator=gs)))
print("random n=13:", list(RandomSampler(data, num_samples=13, generator=gs)),
      len(RandomSampler(data, num_samples=13)))
print("subset random:", list(SubsetRandomSampler([3, 6, 9, 12], generator=gs)))
class_counts = torch.bincount(ys).double()
weights = (1.0 / class_counts)[ys]
print("balanced weights:", [round(w, 4) for w in weights.tolist()])
print("weighted repl:", list(WeightedRandomSampler(weights, 12, generator=gs)))
print("weighted no repl:", list(WeightedRandomSampler([1, 2, 3, 4, 0.5], 5, replacement=False,
                                                      generator=gs)))
balanced = DataLoader(tds, batch_size=4, sampler=WeightedRandomSampler(weights, 8, generator=gs))
print("balanced labels:", [y.tolist() for _, y in balanced])
for drop in (False, True):
    bs = BatchSampler(RandomSampler(data, generator=torch.Generator().manual_seed(3)), 4, drop)
    print("batch sampler drop_last", drop, list(bs), len(bs))

for shuffle, drop_last in [(False, False), (True, False), (True, True)]:
    for epoch in range(2):
        shards = []
        for rank in range(3):
            ds = DistributedSampler(range(10), num_replicas=3, rank=rank, shuffle=shuffle,
                                    seed=7, drop_last=drop_last)
            ds.set_epoch(epoch)
            shards.append(list(ds))
        print(f"distributed shuffle={shuffle} drop_last={drop_last} epoch {epoch}:", shards,
              len(ds), ds.total_size)
try:
    DistributedSampler(range(10), num_replicas=2, rank=2)
except ValueError as e:
    print("bad rank:", type(e).__name__, e)
per_rank = DataLoader(tds, batch_size=2, sampler=DistributedSampler(tds, num_replicas=2, rank=1,
                                                                     seed=3))
print("rank 1 loader:", [y.tolist() for _, y in per_rank], len(per_rank))

# -- collation ---------------------------------------------------------------------------
Sample = collections.namedtuple("Sample", ["pixels", "label", "meta"])


def show(obj, indent="  "):
    if isinstance(obj, torch.Tensor):
        print(f"{indent}tensor {tuple(obj.shape)} {obj.dtype} {obj.tolist()}")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            print(f"{indent}{k}:")
            show(v, indent + "  ")
    elif isinstance(obj, (list, tuple)):
        print(f"{indent}{type(obj).__name__} of {len(obj)}")
        for v in obj:
            show(v, indent + "  ")
    else:
        print(f"{indent}{type(obj).__name__} {obj!r}")


samples = [
    {"ints": 3, "floats": 0.5, "flags": True, "name": "cat", "arr": np.array([1, 2], np.int16),
     "f32": np.float32(1.5), "pair": (1, 2.0), "nest": {"t": torch.ones(2, dtype=torch.half)},
     "rec": Sample(np.zeros(2, dtype=np.float32), 4, {"src": "a"})},
    {"ints": -7, "floats": 2.25, "flags": False, "name": "dog", "arr": np.array([3, 4], np.int16),
     "f32": np.float32(-2.0), "pair": (3, 4.5), "nest": {"t": torch.zeros(2, dtype=torch.half)},
     "rec": Sample(np.ones(2, dtype=np.float32), 5, {"src": "b"})},
]
collated = default_collate(samples)
show(collated)
print("namedtuple kept:", type(collated["rec"]).__name__)
show(default_collate([[1, 2, 3], [4, 5, 6]]))
show(default_collate([np.float64(1.0), np.float64(2.5)]))
show(default_collate([b"ab", b"cd"]))
converted = default_convert([np.arange(3), (np.float32(2.0), "s", 4), {"m": np.eye(2)}])
show(converted)


class Tagged(dict):
    """A dict that carries the split it came from (collation keeps the attribute)."""

    split = "none"


t1, t2 = Tagged(v=1.0), Tagged(v=2.0)
t1.split = t2.split = "train"
tagged = default_collate([t1, t2])
print("dict subclass:", type(tagged).__name__, tagged.split, tagged)


class Box:
    """A custom sample type: collated by summing its payloads."""

    def __init__(self, w: float):
        self.w = w


def collate_boxes(batch, *, collate_fn_map=None):
    return torch.tensor([b.w for b in batch]).sum()


box_map = {**default_collate_fn_map, Box: collate_boxes}
boxed = DataLoader([(Box(float(i)), i) for i in range(5)], batch_size=3,
                   collate_fn=lambda batch: collate(batch, collate_fn_map=box_map))
print("custom collate map:", list(boxed))
print("convert leaves tensors:", default_convert(torch.ones(1)).dtype)


# -- variable-length sequences: pad, pack, run an LSTM, unpack ---------------------------
class Sentences(Dataset[tuple[torch.Tensor, int]]):
    def __init__(self, lengths, vocab):
        gen = torch.Generator().manual_seed(17)
        self.seqs = [torch.randint(1, vocab, (n,), generator=gen) for n in lengths]

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return self.seqs[i], i % 2


def pad_collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(list(seqs), batch_first=True, padding_value=0)
    return padded, lengths, torch.tensor(labels)


sentences = Sentences([3, 6, 2, 5, 4, 1, 6], vocab=20)
seq_loader = DataLoader(sentences, batch_size=3, collate_fn=pad_collate)
torch.manual_seed(3)
embed = nn.Embedding(20, 4, padding_idx=0)
lstm = nn.LSTM(4, 5, batch_first=True)
for padded, lengths, labels in seq_loader:
    packed = pack_padded_sequence(embed(padded), lengths, batch_first=True, enforce_sorted=False)
    print("padded", padded.tolist(), "lengths", lengths.tolist(), "labels", labels.tolist())
    print("  packed batch_sizes", packed.batch_sizes.tolist(), "sorted",
          packed.sorted_indices.tolist(), "unsorted", packed.unsorted_indices.tolist())
    out, (h, c) = lstm(packed)
    unpacked, out_lengths = pad_packed_sequence(out, batch_first=True, total_length=6)
    print("  unpacked", tuple(unpacked.shape), out_lengths.tolist(),
          f"h {h.sum().item():.5f} c {c.sum().item():.5f}",
          f"padding zero {bool((unpacked[lengths < 6, -1] == 0).all())}")



class BucketBatchSampler(Sampler[list[int]]):
    """Batches of similar length: shuffle, sort each window of 4 by length, cut in pairs."""

    def __init__(self, lengths: list[int], batch_size: int, generator: torch.Generator):
        self.lengths, self.batch_size, self.generator = lengths, batch_size, generator

    def __iter__(self):
        order = torch.randperm(len(self.lengths), generator=self.generator).tolist()
        for w in range(0, len(order), 2 * self.batch_size):
            window = sorted(order[w:w + 2 * self.batch_size], key=lambda i: -self.lengths[i])
            for b in range(0, len(window), self.batch_size):
                yield window[b:b + self.batch_size]

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


buckets = BucketBatchSampler([len(s) for s in sentences.seqs], 2, torch.Generator().manual_seed(4))
bucket_loader = DataLoader(sentences, batch_sampler=buckets, collate_fn=pad_collate)
print("buckets:", len(bucket_loader), [(tuple(p.shape), n.tolist()) for p, n, _ in bucket_loader])

seqs = [torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0]), torch.tensor([5.0, 6.0])]
print("time-major:", pad_sequence(seqs).tolist())
print("left padded:", pad_sequence(seqs, batch_first=True, padding_value=-1.0,
                                   padding_side="left").tolist())
print("2-d items:", pad_sequence([torch.ones(2, 3), torch.zeros(1, 3)], batch_first=True).shape)
packed = pack_padded_sequence(pad_sequence(seqs, batch_first=True), torch.tensor([3, 1, 2]),
                              batch_first=True, enforce_sorted=False)
print("packed data:", packed.data.tolist(), packed.batch_sizes.tolist(),
      packed.sorted_indices.tolist())
try:
    pack_padded_sequence(pad_sequence(seqs), torch.tensor([3, 1, 2]))
except RuntimeError as e:
    print("unsorted lengths:", type(e).__name__, str(e).splitlines()[0])

# -- loader lengths, options and epoch-to-epoch shuffling -----------------------------------
for bsz, drop in [(4, False), (4, True), (5, False), (3, True)]:
    print(f"len(batch_size={bsz}, drop_last={drop}):", len(DataLoader(range(10), batch_size=bsz,
                                                                      drop_last=drop)))
opts = DataLoader(tds, batch_size=2, num_workers=2, persistent_workers=True, prefetch_factor=3,
                  timeout=10, pin_memory=False, multiprocessing_context="fork")
print("options:", opts.num_workers, opts.prefetch_factor, opts.timeout, opts.pin_memory,
      opts.persistent_workers, opts.drop_last, type(opts.sampler).__name__,
      type(opts.batch_sampler).__name__)
for epoch in range(2):
    print(f"workers epoch {epoch}:", [y.tolist() for _, y in opts])
del opts
print("default prefetch:", DataLoader(tds).prefetch_factor,
      DataLoader(tds, num_workers=1).prefetch_factor)

shuffled = DataLoader(range(8), batch_size=4, shuffle=True,
                      generator=torch.Generator().manual_seed(8))
epochs = [[b.tolist() for b in shuffled] for _ in range(3)]
print("epochs:", epochs)
replay = DataLoader(range(8), batch_size=4, shuffle=True,
                    generator=torch.Generator().manual_seed(8))
print("replayed:", [[b.tolist() for b in replay] for _ in range(3)] == epochs)
torch.manual_seed(12)
a = [b.tolist() for b in DataLoader(range(6), batch_size=6, shuffle=True)]
torch.manual_seed(12)
b = [b.tolist() for b in DataLoader(range(6), batch_size=6, shuffle=True)]
print("global seed shuffle:", a, a == b)
print("no batching:", list(DataLoader(tds, batch_size=None))[4])
stream_len = DataLoader(LineStream(0, 5), batch_size=2)
print("iterable batches:", [d["id"].tolist() for d in stream_len])


# -- typical mistakes ----------------------------------------------------------------------
def report(label, fn):
    try:
        out = fn()
        print(label, "ok", out)
    except Exception as e:  # noqa: BLE001
        message = str(e).splitlines()[0].split(" object at 0x")[0]  # (no addresses)
        print(f"{label}: {type(e).__name__}: {message}")


report("batch_size with batch_sampler",
       lambda: DataLoader(tds, batch_size=4, batch_sampler=BatchSampler(range(6), 2, False)))
report("drop_last with batch_sampler",
       lambda: DataLoader(tds, drop_last=True, batch_sampler=BatchSampler(range(6), 2, False)))
report("shuffle with batch_sampler",
       lambda: DataLoader(tds, shuffle=True, batch_sampler=BatchSampler(range(6), 2, False)))
report("shuffle with sampler", lambda: DataLoader(tds, shuffle=True,
                                                  sampler=SequentialSampler(tds)))
report("shuffle iterable", lambda: DataLoader(LineStream(0, 4), shuffle=True))
report("sampler iterable", lambda: DataLoader(LineStream(0, 4), sampler=range(4)))
report("batch_sampler iterable",
       lambda: DataLoader(LineStream(0, 4), batch_sampler=BatchSampler(range(4), 2, False)))
report("prefetch without workers", lambda: DataLoader(tds, prefetch_factor=2))
report("persistent without workers", lambda: DataLoader(tds, persistent_workers=True))
report("set batch_size later", lambda: setattr(DataLoader(tds), "batch_size", 8))
report("set dataset later", lambda: setattr(DataLoader(tds), "dataset", sub))
report("set num_workers later", lambda: setattr(DataLoader(tds), "num_workers", 0))
report("negative timeout", lambda: DataLoader(tds, timeout=-1))
report("split lengths", lambda: random_split(range(10), [4, 4]))
report("split fractions", lambda: random_split(range(10), [0.5, 0.6]))
report("ragged tensors", lambda: default_collate([torch.zeros(3), torch.zeros(4)]))
report("ragged lists", lambda: default_collate([[1, 2], [3]]))
report("unknown type", lambda: default_collate([object(), object()]))
report("stream without __iter__", lambda: type("Empty", (IterableDataset,), {})())
report("len of stream", lambda: len(LineStream(0, 3)))
report("len of stream loader", lambda: len(DataLoader(LineStream(0, 3), batch_size=2)))
report("sampler num_samples", lambda: RandomSampler(data, num_samples=0))
report("sampler replacement", lambda: RandomSampler(data, replacement=1))
report("weighted 2-d", lambda: WeightedRandomSampler(torch.ones(2, 2), 3))
report("weighted too many", lambda: list(WeightedRandomSampler([1.0, 1.0], 3, replacement=False)))
report("batch sampler size", lambda: BatchSampler(range(4), 0, False))
report("tensor dataset sizes", lambda: TensorDataset(torch.zeros(3), torch.zeros(4)))
report("concat iterable", lambda: ConcatDataset([LineStream(0, 2)]))
report("index past end", lambda: tds[6])
