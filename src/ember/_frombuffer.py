"""`frombuffer`: a 1-D tensor over any object with the buffer protocol, sharing its memory."""

from __future__ import annotations

import numpy as np

from . import _dtype as dt
from ._tensor import Tensor


def frombuffer(buffer, *, dtype: dt.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """`count` elements of `dtype` read from `buffer` starting `offset` bytes in (all that
    fit when `count` is -1). Writes through the tensor change the buffer, as in PyTorch."""
    from .ops.creation import from_numpy

    try:
        nbytes = memoryview(buffer).nbytes
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    size = dtype.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset > nbytes - 1:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % size:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (nbytes - offset) // size
    elif offset + count * size > nbytes:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    arr = np.frombuffer(buffer, dtype=np.dtype(dtype.np), count=count, offset=offset)
    t = from_numpy(arr)
    return t.requires_grad_(True) if requires_grad else t
