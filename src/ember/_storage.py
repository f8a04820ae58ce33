"""Storage: one flat buffer on one device, shared by every view of it.

On the CPU the buffer is a 1-D NumPy array (of whatever dtype it was made
with); tensors reinterpret its bytes through their own dtype, shape, stride and
offset, as PyTorch's untyped storage does. On `meta` there is no buffer, only
a byte count.
"""

from __future__ import annotations

import numpy as np

from ._device import CPU, device
from ._memory import tracker as _memory


class Storage:
    """A flat block of memory: `data` (1-D array, or None on meta) and its size in bytes."""

    __slots__ = ("data", "_nbytes", "device", "_bytes", "__weakref__")

    def __init__(self, data: np.ndarray | None, nbytes: int, dev: device = CPU) -> None:
        self.data = data
        self._nbytes = nbytes
        self.device = dev
        self._bytes = None
        if _memory.on and data is not None:  # (a peak is being measured: count the buffer)
            _memory.add(data)

    @property
    def bytes(self) -> np.ndarray:
        """The buffer as uint8, for views that reinterpret it with another dtype."""
        b = self._bytes
        if b is None:
            b = self._bytes = self.data.view(np.uint8)
        return b

    def data_ptr(self) -> int:
        if self.data is None or not self._nbytes:
            return 0  # meta and zero-byte storages have no address, as in PyTorch
        return self.data.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self._nbytes

    size = nbytes
    __len__ = nbytes

    def element_size(self) -> int:
        return 1

    def __repr__(self) -> str:
        return f"UntypedStorage(device={self.device}, nbytes={self._nbytes})"
