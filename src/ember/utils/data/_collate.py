"""Collation: turn a list of samples into a batch (tensors stacked, structure kept).

`collate` dispatches on the first sample's type through a table of per-type functions
(`default_collate_fn_map`, PyTorch's extension point: add an entry for a custom type,
or pass your own table), then recurses into mappings, namedtuples and sequences.
Containers keep their type: a mutable one is copied and refilled (so a dict subclass
keeps its attributes), an immutable one rebuilt, and a plain dict / list is the fallback
when neither works.
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ... import _dtype as dt
from ..._tensor import Tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn",
           "default_collate_err_msg_format", "np_str_obj_array_pattern"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}")

CollateMap = dict  # {type or tuple of types: fn(batch, *, collate_fn_map)}


def _rebuild(elem, values, mapping: bool):
    """A container like `elem` holding `values` (a dict for mappings, a list otherwise)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping if mapping
                      else collections.abc.MutableSequence):
            clone = copy.copy(elem)
            if mapping:
                clone.update(values)
            else:
                for i, v in enumerate(values):
                    clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:  # (no copy / update / item assignment, or no one-argument constructor)
        return dict(values) if mapping else list(values)


def default_convert(data):
    """NumPy arrays and scalars to tensors, recursively; everything else unchanged (what
    the loader applies to each sample when it does not batch)."""
    from ...ops.creation import as_tensor

    if isinstance(data, Tensor):
        return data
    kind = type(data)
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "bytes_", "string_"):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {k: default_convert(data[k]) for k in data}, mapping=True)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data], mapping=False)
    return data


def collate(batch, *, collate_fn_map: CollateMap | None = None):
    """Batch `batch` (a sequence of samples): the first sample's type picks a function from
    `collate_fn_map` (exact type first, then the first isinstance match); otherwise mappings,
    namedtuples and sequences are collated field by field."""
    elem = batch[0]
    kind = type(elem)
    if collate_fn_map is not None:
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        return _rebuild(elem, values, mapping=True)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return kind(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # (PyTorch gives plain tuples back as lists)
        return _rebuild(elem, columns, mapping=False)
    raise TypeError(default_collate_err_msg_format.format(kind))


def collate_tensor_fn(batch, *, collate_fn_map: CollateMap | None = None):
    """Tensors stacked along a new first dimension."""
    from ...ops.join import stack

    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map: CollateMap | None = None):
    """NumPy arrays become tensors, then collate as tensors (string / object arrays refuse)."""
    from ...ops.creation import as_tensor

    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str):
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map: CollateMap | None = None):
    """NumPy scalars become one 1-d tensor of their (promoted) dtype."""
    from ...ops.creation import as_tensor

    return as_tensor(np.array(list(batch)))


def collate_float_fn(batch, *, collate_fn_map: CollateMap | None = None):
    """Python floats become a float64 tensor (their precision, not the default dtype)."""
    from ...ops.creation import tensor

    return tensor(list(batch), dtype=dt.float64)


def collate_int_fn(batch, *, collate_fn_map: CollateMap | None = None):
    """Python ints (and bools) become an int64 (bool) tensor, as `torch.tensor` infers."""
    from ...ops.creation import tensor

    return tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map: CollateMap | None = None):
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map: CollateMap = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Stack tensors / arrays / numbers along a new first dim; recurse into dicts,
    namedtuples and sequences; keep strings as lists (PyTorch's rules)."""
    from .dataset import SampleBatch

    if isinstance(batch, SampleBatch):  # already one tensor per field
        return list(batch.columns)
    return collate(batch, collate_fn_map=default_collate_fn_map)
