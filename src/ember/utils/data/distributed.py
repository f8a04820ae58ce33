"""DistributedSampler: each of `num_replicas` processes reads its own slice of a dataset.

Shuffling draws one `randperm` from a generator seeded with `seed + epoch`, so every
replica computes the same order and takes every `num_replicas`-th index from its rank.
Without `num_replicas` / `rank` it asks the default process group for them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed

            if not distributed.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = distributed.get_world_size()
            if rank is None:
                rank = distributed.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            from ...ops.random_ops import randperm
            from ...random import Generator

            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Reshuffle differently in each epoch (call before iterating)."""
        self.epoch = epoch
