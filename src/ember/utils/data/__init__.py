"""ember.utils.data: datasets, samplers, collation and the DataLoader (PyTorch's API)."""

from ._collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "DataLoader", "get_worker_info", "default_collate", "default_convert", "Dataset",
    "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
    "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
]


def __getattr__(name: str):
    from ...compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
