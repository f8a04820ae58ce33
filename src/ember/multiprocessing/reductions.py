"""How ForkingPickler (multiprocessing's queues and pipes) sends an ember tensor.

A tensor put on a multiprocessing queue keeps its shape, strides, dtype, class and
`requires_grad`, and its place in its storage, as in torch; ember sends the storage's bytes
rather than a handle to shared memory (see `Tensor.share_memory_` for memory that forked
processes share), and of a view that reaches little of its storage only that span."""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

import numpy as np

from .. import _dtype as dt
from .._device import as_device
from .._storage import Storage
from .._tensor import Tensor, _make


def _rebuild_tensor(cls: type, data: np.ndarray | None, nbytes: int, device: str,
                    dtype_name: str, shape: tuple, stride: tuple, offset: int,
                    requires_grad: bool) -> Tensor:
    storage = Storage(data, nbytes, as_device(device))
    t = _make(storage, shape, stride, offset, dt.BY_NAME[dtype_name])
    if cls is not Tensor:
        return Tensor._make_subclass(cls, t, requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def reduce_tensor(t: Tensor):
    """How ForkingPickler (multiprocessing's queues and pipes) sends a tensor."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., putting "
            "it on the queue).")
    s = t.untyped_storage()
    shape, stride, offset = tuple(t.shape), t.stride(), t.storage_offset()
    data, nbytes = s.data, s.nbytes()
    if data is not None:
        # NOTE: torch sends a handle to shared memory; ember sends bytes, so a view that
        # reaches less than half of its storage (a dataset's row of a large tensor) sends
        # only the span it reaches, re-based to offset 0, not the whole storage each time.
        size = t.element_size()
        last = offset + sum((n - 1) * st for n, st in zip(shape, stride)) if t.numel() else -1
        if 2 * (last + 1 - offset) * size < nbytes:
            data = s.bytes[offset * size:(last + 1) * size]
            nbytes, offset = data.nbytes, 0
    return _rebuild_tensor, (type(t), data, nbytes, str(s.device), t.dtype.name, shape,
                             stride, offset, t.requires_grad)


ForkingPickler.register(Tensor, reduce_tensor)
