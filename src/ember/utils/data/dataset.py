"""Datasets: map-style (`__getitem__` + `__len__`) and iterable, and ways to combine them."""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

import numpy as np

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ...ops.index import index_by
from ...ops.index_key import index_error

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: `dataset[i]` is one sample; subclasses define `__getitem__`.
    Generic in the sample type, so `Dataset[Tensor]` works in annotations and bases."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset that is a stream: subclasses must define `__iter__` (it is abstract, as
    `collections.abc.Iterable` makes it: a subclass without one cannot be instantiated)."""

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are tuples of the i-th rows of tensors that share their first dimension."""

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices) -> SampleBatch | list:
        """The samples at `indices`: for a list of integers (what samplers give), gathered
        with one indexing op per tensor, the list read and bounds-checked once (with the
        error `dataset[i]` raises at the first index out of range); for anything else, one
        sample per index, as PyTorch's loader reads them (and always so when a subclass
        overrides `__getitem__`)."""
        if type(self).__getitem__ is not TensorDataset.__getitem__:
            return [self[i] for i in indices]  # (a subclass's own __getitem__ must run)
        key = np.asarray(indices) if indices.__class__ is list else None
        if key is None or key.dtype.kind not in "iu" or key.ndim != 1:
            return [self[i] for i in indices]
        n = len(self)
        bad = (key >= n) | (key < -n)
        if bad.any():
            raise index_error(int(key[bad.argmax()]), 0, n)
        key = key.astype(np.int64, copy=False)
        return SampleBatch(tuple(index_by(t, (key,)) for t in self.tensors))

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class SampleBatch(Sequence):
    """Samples held as one batched tensor per field (what `TensorDataset.__getitems__`
    returns). It reads as a sequence of sample tuples; `default_collate` takes the
    fields as they are, which equals stacking the samples one by one."""

    def __init__(self, columns: tuple) -> None:
        self.columns = columns

    def __len__(self) -> int:
        return self.columns[0].size(0)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return tuple(c[i] for c in self.columns)


class StackDataset(Dataset):
    """Zip datasets of equal length: samples are tuples (positional) or dicts (keyword)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if args:
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            values = list(kwargs.values())
            self._length = len(values[0])
            if any(self._length != len(d) for d in values):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """The samples at `indices`, each dataset read in one call where it can be (through
        its own `__getitems__`), then zipped into per-sample tuples or dicts."""
        keys = list(self.datasets) if isinstance(self.datasets, dict) else None
        parts = self.datasets.values() if keys is not None else self.datasets
        columns = []
        for d in parts:
            getitems = getattr(d, "__getitems__", None)
            column = list(getitems(indices)) if callable(getitems) else [d[i] for i in indices]
            if len(column) != len(indices):
                raise ValueError("Nested dataset's output size mismatch. Expected "
                                 f"{len(indices)}, got {len(column)}")
            columns.append(column)
        if keys is not None:
            return [dict(zip(keys, row)) for row in zip(*columns)]
        return [tuple(row) for row in zip(*columns)]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Datasets end to end; index i finds its dataset by binary search on cumulative sizes."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    @property
    def cummulative_sizes(self) -> list[int]:
        """The old, misspelt name of `cumulative_sizes` (deprecated)."""
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=user_stacklevel())
        return self.cumulative_sizes

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths, generator=None) -> list[Subset]:
    """Split into non-overlapping Subsets of the given lengths (or fractions summing to 1)."""
    from ...ops.random_ops import randperm
    from ...random import default_generator

    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                              "dataset.", stacklevel=user_stacklevel())
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset!"
        )
    perm = randperm(sum(lengths), generator=generator or default_generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out
