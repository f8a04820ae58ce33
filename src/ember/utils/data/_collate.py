"""Collation: turn a list of samples into a batch (tensors stacked, structure kept)."""

from __future__ import annotations

import collections.abc
import re

import numpy as np

from ... import _dtype as dt
from ..._tensor import Tensor

_np_str = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def default_convert(data):
    """NumPy arrays and scalars to tensors, recursively; everything else unchanged."""
    from ...ops.creation import as_tensor

    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and not _np_str.search(data.dtype.str):
        return as_tensor(data)
    if isinstance(data, np.generic) and not _np_str.search(data.dtype.str):
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack tensors / arrays / numbers along a new first dim; recurse into dicts,
    namedtuples and sequences; keep strings as lists (PyTorch's rules)."""
    from ...ops.creation import as_tensor, tensor
    from ...ops.join import stack
    from .dataset import SampleBatch

    if isinstance(batch, SampleBatch):  # already one tensor per field
        return list(batch.columns)
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray) or (isinstance(elem, np.generic) and elem.ndim == 0 and
                                        not isinstance(elem, (np.str_, np.bytes_))):
        if _np_str.search(elem.dtype.str):
            raise TypeError(_ERR.format(elem.dtype))
        if isinstance(elem, np.ndarray):
            return default_collate([as_tensor(b) for b in batch])
        return as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=dt.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return type(elem)([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))
