"""Datasets (ember/utils/data/dataset.py) against torch.utils.data."""

import collections.abc
import warnings

import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata

from helpers import assert_same


def test_generic_bases_and_abstract_iter():
    for mod in (tdata, edata):
        class Typed(mod.Dataset[int]):  # (a subscripted base, as typed programs write)
            def __getitem__(self, i):
                return i

        assert Typed()[3] == 3
        with pytest.raises(TypeError, match="abstract method __iter__"):
            type("Empty", (mod.IterableDataset,), {})()
        class Stream(mod.IterableDataset[int]):
            def __iter__(self):
                return iter([1])

        assert list(Stream()) == [1]
        assert isinstance(Stream(), collections.abc.Iterable)


def _augmented(mod, lib):
    class Augmented(mod.TensorDataset):
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return x * 10, y

    return Augmented(lib.arange(6.0).view(3, 2), lib.arange(3))


@pytest.mark.parametrize("wrap", ["plain", "subset", "stack"])
def test_tensordataset_subclass_getitem_runs_in_loader(wrap):
    """A subclass's __getitem__ must not be bypassed by batched reads."""
    def loader(mod, lib):
        ds = _augmented(mod, lib)
        if wrap == "subset":
            ds = mod.Subset(ds, [2, 0])
        elif wrap == "stack":
            ds = mod.StackDataset(ds, lib.arange(3))
        return next(iter(mod.DataLoader(ds, batch_size=2)))

    assert_same(loader(edata, ember)[0] if wrap != "stack" else loader(edata, ember)[0][0],
                loader(tdata, torch)[0] if wrap != "stack" else loader(tdata, torch)[0][0])


@pytest.mark.parametrize("kw", [False, True])
def test_stackdataset_getitems(kw):
    def items(mod, lib):
        parts = (mod.TensorDataset(lib.arange(4)), list(range(10, 14)))
        ds = mod.StackDataset(a=parts[0], b=parts[1]) if kw else mod.StackDataset(*parts)
        return ds.__getitems__([3, 1])

    e, t = items(edata, ember), items(tdata, torch)
    assert len(e) == len(t) == 2
    for se, st in zip(e, t):
        assert type(se) is type(st)
        if kw:
            assert list(se) == list(st)
            se, st = list(se.values()), list(st.values())
        assert_same(se[0][0], st[0][0])
        assert se[1] == st[1]


def test_stackdataset_getitems_size_mismatch():
    class Short(edata.Dataset):
        def __len__(self):
            return 3

        def __getitems__(self, idx):
            return [0]

    with pytest.raises(ValueError, match="output size mismatch. Expected 2, got 1"):
        edata.StackDataset(Short(), range(3)).__getitems__([0, 1])


def test_concat_cummulative_sizes_deprecated():
    for mod in (tdata, edata):
        ds = mod.ConcatDataset([range(2), range(3)])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert ds.cummulative_sizes == [2, 5]
        assert [type(x.message) for x in w] == [FutureWarning]
        assert "renamed to `cumulative_sizes`" in str(w[0].message)


def test_concat_negative_and_empty_parts():
    parts = [range(0), range(3), range(0), range(100, 102)]
    e, t = edata.ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert e.cumulative_sizes == t.cumulative_sizes
    assert [e[i] for i in range(-5, 5)] == [t[i] for i in range(-5, 5)]
