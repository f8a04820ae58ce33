"""meshgrid, cartesian_prod and combinations: coordinate grids and combinations of the
elements of 1-D tensors (views and a stack of join.py's, an index of index.py's)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from .._tensor import Tensor
from .._user_warnings import warn_at_user
from ._aten_text import aten_text
from .join import stack, tensor_args


def meshgrid(*tensors, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors: output i varies along dim i ('ij') or, for the
    first two, swapped ('xy')."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = tensor_args(tensors)  # (parsed before the warning below)
    if indexing is None:
        # (a TORCH_WARN_ONCE in ATen: once a process, at the caller's line, before any check)
        warn_at_user("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument.", once=True)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    # (PyTorch checks every dtype and device before any tensor's dimension)
    for t in tensors:
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {aten_text(t)}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = (1,) * i + (-1,) + (1,) * (len(ts) - i - 1)
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one element from each 1-D tensor, as rows."""
    for t in tensor_args(tensors):
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._shape)}")
    if len(tensors) == 1:
        return tensors[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-`r` combinations of the elements of 1-D `input`, as rows."""
    from .creation import tensor
    from .index import index_by

    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return tensor([], dtype=input._dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(pick(range(input._shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if input.device.type == "meta":
        return index_by(input, (np.broadcast_to(np.zeros((), np.int64), idx.shape),))
    return index_by(input, (idx,))


TENSOR_METHODS: dict = {}

__all__ = ["meshgrid", "cartesian_prod", "combinations"]
