"""Samplers (ember/utils/data/sampler.py) against torch.utils.data."""

import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata


def _bucket(mod, lib):
    class Buckets(mod.Sampler[list[int]]):  # (generic base, as typed samplers write it)
        def __init__(self, n):
            super().__init__()
            self.n = n

        def __iter__(self):
            order = lib.randperm(self.n, generator=lib.Generator().manual_seed(3)).tolist()
            return iter([order[i:i + 2] for i in range(0, self.n, 2)])

        def __len__(self):
            return (self.n + 1) // 2

    return Buckets(5)


def test_generic_sampler_subclass_as_batch_sampler():
    e = [b.tolist() for b in edata.DataLoader(range(10, 15), batch_sampler=_bucket(edata, ember))]
    t = [b.tolist() for b in tdata.DataLoader(range(10, 15), batch_sampler=_bucket(tdata, torch))]
    assert e == t
    assert len(_bucket(edata, ember)) == 3


def test_sampler_takes_no_arguments():
    for mod in (tdata, edata):
        class Old(mod.Sampler):
            def __init__(self, data_source):
                super().__init__(data_source)  # (PyTorch removed this argument)

        with pytest.raises(TypeError, match="takes exactly one argument"):
            Old(range(3))
        with pytest.raises(TypeError, match="takes no arguments"):
            mod.Sampler(range(3))
