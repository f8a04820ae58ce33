"""DataLoader, samplers, datasets and collation, against torch.utils.data."""

import collections
import os

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata

from helpers import assert_same

Point = collections.namedtuple("Point", ["x", "y"])


class Squares(edata.Dataset):
    """Sample i is a dict holding tensors, a number, a string and a namedtuple."""

    def __init__(self, lib, n=10):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        lib = self.lib
        return {"x": lib.tensor([i, i * i], dtype=lib.float32), "label": i % 3,
                "weight": i / 2, "name": f"s{i}",
                "point": Point(lib.tensor(float(i)), np.array([i, -i]))}


class TorchSquares(Squares, tdata.Dataset):
    pass


def _batches(lib, data_mod, dataset, **kw):
    return list(data_mod.DataLoader(dataset, **kw))


def _same_batches(be, bt):
    assert len(be) == len(bt)
    for e, t in zip(be, bt):
        _same_structure(e, t)


def _same_structure(e, t):
    if isinstance(t, torch.Tensor):
        assert_same(e, t)
    elif isinstance(t, dict):
        assert type(e) is dict and e.keys() == t.keys()
        for k in t:
            _same_structure(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e).__name__ == type(t).__name__ and len(e) == len(t)
        for a, b in zip(e, t):
            _same_structure(a, b)
    else:
        assert e == t


@pytest.mark.parametrize("kw", [
    dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=1),
    dict(batch_size=None), dict(batch_size=4, collate_fn=lambda b: len(b)),
])
def test_batches_match_torch(kw):
    be = _batches(ember, edata, Squares(ember), **kw)
    bt = _batches(torch, tdata, TorchSquares(torch), **kw)
    _same_batches(be, bt)
    assert len(edata.DataLoader(Squares(ember), **kw)) == len(
        tdata.DataLoader(TorchSquares(torch), **kw))


def test_collation_of_nested_structures_and_dtypes():
    batch = edata.default_collate([(1.5, 2, True, "a", np.float32(1.0)),
                                   (2.5, 3, False, "b", np.float32(2.0))])
    expect = tdata.default_collate([(1.5, 2, True, "a", np.float32(1.0)),
                                    (2.5, 3, False, "b", np.float32(2.0))])
    _same_structure(batch, expect)
    with pytest.raises(RuntimeError, match="equal size"):
        edata.default_collate([[1, 2], [1]])


def test_tensor_dataset_and_shuffle_with_generator_is_reproducible():
    x = ember.arange(20.0).reshape(10, 2)
    ds = edata.TensorDataset(x, ember.arange(10))
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    a = [b[1].tolist() for b in edata.DataLoader(ds, batch_size=4, shuffle=True, generator=g1)]
    b = [b[1].tolist() for b in edata.DataLoader(ds, batch_size=4, shuffle=True, generator=g2)]
    assert a == b
    assert sorted(sum(a, [])) == list(range(10))


def test_tensor_dataset_batches_equal_torchs_stacked_samples():
    # ember gathers a TensorDataset batch with one index op per tensor (`__getitems__`);
    # the batches must equal torch's per-sample stacking, and a custom collate_fn still
    # receives a list of sample tuples.
    x = np.arange(66, dtype=np.float32).reshape(11, 2, 3)
    y = np.arange(11) % 4
    ember.manual_seed(2)
    torch.manual_seed(2)
    de = edata.DataLoader(edata.TensorDataset(ember.tensor(x), ember.tensor(y)), batch_size=4,
                          shuffle=True)
    dt_ = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=4,
                           shuffle=True)
    for be, bt in zip(de, dt_, strict=True):
        assert isinstance(be, list) and len(be) == 2
        for e, t in zip(be, bt):
            assert_same(e, t, check_stride=True)
    seen = []
    ds = edata.TensorDataset(ember.tensor(x), ember.tensor(y))
    for batch in edata.DataLoader(ds, batch_size=5, collate_fn=lambda b: seen.append(b) or b):
        assert isinstance(batch, list) and isinstance(batch[0], tuple)
        assert_same(batch[-1][0], torch.tensor(x)[len(seen) * 5 - 5 + len(batch) - 1])


@pytest.mark.parametrize("sampler", [[0, -1, 2, 4], [3, -5, 1], [np.int64(2), 0, -2, 1],
                                     [0, 2, 5], [1, -6, 9], [True, False]])
def test_tensor_dataset_reads_a_samplers_indices_as_torch_does(sampler):
    """Negative indices count from the end; the first index out of range raises torch's
    IndexError; indices that are not integers are read one sample at a time, as torch
    reads them (bools: samples that do not stack, torch's RuntimeError)."""
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    got = []
    for L, data in ((ember, edata), (torch, tdata)):
        ds = data.TensorDataset(L.tensor(x), L.arange(5))
        try:
            got.append([[t.tolist() for t in b]
                        for b in data.DataLoader(ds, batch_size=3, sampler=sampler)])
        except (IndexError, RuntimeError) as e:
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]


def test_shuffle_order_matches_torch_for_the_same_seed():
    ember.manual_seed(7)
    torch.manual_seed(7)
    de = edata.DataLoader(edata.TensorDataset(ember.arange(13)), batch_size=5, shuffle=True)
    dt_ = tdata.DataLoader(tdata.TensorDataset(torch.arange(13)), batch_size=5, shuffle=True)
    for _ in range(2):  # two epochs: the per-epoch seed draws must stay in step too
        assert [b[0].tolist() for b in de] == [b[0].tolist() for b in dt_]
    assert ember.rand(3).tolist() == torch.rand(3).tolist()


def test_samplers_match_torch():
    w = [0.1, 0.5, 0.2, 0.9]
    ge, gt = ember.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert list(edata.WeightedRandomSampler(w, 8, generator=ge)) == list(
        tdata.WeightedRandomSampler(w, 8, generator=gt))
    assert list(edata.SubsetRandomSampler([3, 5, 7, 9], generator=ge)) == list(
        tdata.SubsetRandomSampler([3, 5, 7, 9], generator=gt))
    assert list(edata.RandomSampler(range(50), replacement=True, num_samples=40,
                                    generator=ge)) == list(
        tdata.RandomSampler(range(50), replacement=True, num_samples=40, generator=gt))
    assert list(edata.BatchSampler(edata.SequentialSampler(range(7)), 3, False)) == \
        [[0, 1, 2], [3, 4, 5], [6]]


@pytest.mark.parametrize("n", [2, 6, 7])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_batches_and_laziness_match_torch(n, drop_last):
    """Batches of 3 from a random permutation (the same draws), the last one kept or
    dropped; and the sampler read only as far as the batches handed out (a generator
    sampler: how many indices it gave when the first batch arrived)."""
    ge, gt = ember.Generator().manual_seed(2), torch.Generator().manual_seed(2)
    ours = list(edata.BatchSampler(edata.RandomSampler(range(n), generator=ge), 3, drop_last))
    theirs = list(tdata.BatchSampler(tdata.RandomSampler(range(n), generator=gt), 3,
                                     drop_last))
    assert ours == theirs

    def counted(pulled):
        for i in range(n):
            pulled.append(i)
            yield i

    for mod in (edata, tdata):
        pulled: list = []
        batches = iter(mod.BatchSampler(counted(pulled), 3, drop_last))
        if n >= 3:
            next(batches)
            assert len(pulled) == 3


def test_random_split_matches_torch():
    ge, gt = ember.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    se = edata.random_split(range(10), [0.3, 0.7], generator=ge)
    st = tdata.random_split(range(10), [0.3, 0.7], generator=gt)
    assert [list(s) for s in se] == [list(s) for s in st]
    with pytest.raises(ValueError):
        edata.random_split(range(10), [3, 3])


def test_concat_subset_stack_datasets():
    a, b = list(range(5)), list(range(10, 13))
    cat = edata.ConcatDataset([a, b])
    assert len(cat) == 8 and cat[6] == 11 and cat[-1] == 12
    sub = edata.Subset(cat, [7, 0, 5])
    assert [sub[i] for i in range(3)] == [12, 0, 10]
    st = edata.StackDataset(x=a, y=a)
    assert st[2] == {"x": 2, "y": 2}
    with pytest.raises(ValueError):
        edata.StackDataset(a, b)


class Stream(edata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = edata.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


def test_iterable_dataset_batches_and_errors():
    assert [b.tolist() for b in edata.DataLoader(Stream(7), batch_size=3)] == \
        [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in edata.DataLoader(Stream(7), batch_size=3, drop_last=True)] \
        == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError):
        edata.DataLoader(Stream(3), shuffle=True)


def test_invalid_options_raise_like_torch():
    ds = list(range(4))
    for mod in (edata, tdata):
        with pytest.raises(ValueError):
            mod.DataLoader(ds, num_workers=-1)
        with pytest.raises(ValueError):
            mod.DataLoader(ds, sampler=mod.SequentialSampler(ds), shuffle=True)
        with pytest.raises(ValueError):
            mod.DataLoader(ds, batch_sampler=[[0]], batch_size=2)
        with pytest.raises(ValueError):
            mod.DataLoader(ds, prefetch_factor=2)
        with pytest.raises(ValueError):
            mod.DataLoader(ds, persistent_workers=True)


def test_two_workers_yield_the_same_batches_as_none():
    ds = Squares(ember, 11)
    single = _batches(ember, edata, ds, batch_size=3)
    multi = _batches(ember, edata, ds, batch_size=3, num_workers=2)
    _same_batches(multi, [_to_torch_tree(b) for b in single])


def _to_torch_tree(x):
    if isinstance(x, ember.Tensor):
        return torch.from_numpy(x.numpy().copy())
    if isinstance(x, dict):
        return {k: _to_torch_tree(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_to_torch_tree(v) for v in x))
    if isinstance(x, list):
        return [_to_torch_tree(v) for v in x]
    return x


def test_workers_with_iterable_dataset_and_worker_init_fn():
    seen = []
    loader = edata.DataLoader(Stream(9), batch_size=2, num_workers=2,
                              worker_init_fn=lambda wid: seen.append(wid))
    values = sorted(v for b in loader for v in b.tolist())
    assert values == list(range(9))


class Failing(edata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i


def test_failing_worker_raises_in_main_process_with_traceback():
    loader = edata.DataLoader(Failing(), batch_size=2, num_workers=2, timeout=30)
    with pytest.raises(ValueError) as info:
        list(loader)
    msg = str(info.value)
    assert "bad sample 5" in msg and "DataLoader worker process" in msg
    assert "Traceback" in msg


class Dies(edata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def test_dead_worker_raises_instead_of_hanging():
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(edata.DataLoader(Dies(), batch_size=2, num_workers=1))


def test_persistent_workers_serve_several_epochs():
    loader = edata.DataLoader(list(range(6)), batch_size=2, num_workers=2,
                              persistent_workers=True)
    first = [b.tolist() for b in loader]
    second = [b.tolist() for b in loader]
    assert first == second == [[0, 1], [2, 3], [4, 5]]


def test_persistent_workers_shuffle_each_epoch_as_torch_does():
    # a persistent iterator draws its workers' base seed once: the second epoch's shuffle
    # comes straight after the first's in the loader's generator, as in torch
    def orders(mod, data):
        gen = mod.Generator().manual_seed(7)
        loader = data.DataLoader(list(range(8)), batch_size=4, shuffle=True, num_workers=1,
                                 generator=gen, persistent_workers=True)
        return [[b.tolist() for b in loader] for _ in range(3)]

    assert orders(ember, edata) == orders(torch, tdata)


@pytest.mark.parametrize("workers", [0, 1])
def test_pin_memory_without_an_accelerator_warns_as_torch_does(workers):
    def warned(data):
        loader = data.DataLoader([1, 2], pin_memory=True, num_workers=workers)
        with pytest.warns(UserWarning) as record:
            batches = [b.tolist() for b in loader]
        return batches, [str(w.message) for w in record]

    assert warned(edata) == warned(tdata)


def _draws(mod, data, persistent=False):
    """Each worker's first numpy / random / framework draws, seeded by the loader only."""
    import random as pyrandom

    class Draws(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            yield (info.id, info.seed, int(np.random.randint(0, 10**6)),
                   pyrandom.randint(0, 10**6), int(mod.randint(0, 10**6, (1,))))

    loader = data.DataLoader(Draws(), batch_size=None, num_workers=2,
                             generator=mod.Generator().manual_seed(12),
                             persistent_workers=persistent)
    return [sorted(loader) for _ in range(2 if persistent else 1)]


@pytest.mark.parametrize("persistent", [False, True])
def test_worker_rng_seeding_matches_torch(persistent):
    # numpy's generator in a worker is seeded from (worker id, base seed), as torch does,
    # so augmentations written with np.random give torch's numbers; persistent workers
    # are seeded once, so their second epoch continues the streams
    assert _draws(ember, edata, persistent) == _draws(torch, tdata, persistent)


@pytest.mark.parametrize("name", ["batch_size", "batch_sampler", "sampler", "drop_last",
                                  "dataset", "persistent_workers"])
def test_fixed_attributes_refuse_assignment(name):
    def attempt(data):
        loader = data.DataLoader(list(range(4)), batch_size=2)
        with pytest.raises(ValueError) as err:
            setattr(loader, name, None)
        loader.num_workers = 0  # (others stay assignable)
        return str(err.value)

    assert attempt(edata) == attempt(tdata)


def test_iterator_class_names():
    for workers in (0, 1):
        e = iter(edata.DataLoader([1, 2], num_workers=workers))
        t = iter(tdata.DataLoader([1, 2], num_workers=workers))
        assert type(e).__name__ == type(t).__name__
        del e, t


def test_too_many_workers_warns_as_torch_does(monkeypatch):
    # (the machine's CPU count is pinned to 2 so the test does not depend on it)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})

    def warned(data):
        with pytest.warns(UserWarning) as record:
            loader = data.DataLoader(list(range(3)), num_workers=3)
            iter(loader)
        return [str(w.message) for w in record if "worker processes" in str(w.message)]

    messages = warned(edata)
    assert messages == warned(tdata) and len(messages) == 2
    assert "create 3 worker processes in total" in messages[0]
