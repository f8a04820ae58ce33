"""How the C heap treats the NumPy buffers ember allocates and frees on every op.

Every op returns a fresh array, and a training step frees and reallocates the same
few tens of megabytes each time. With glibc's defaults the freed top of the heap
goes back to the OS and the next step page-faults it in again, zeroed: measured on
the GPT benchmark step, 5,000 page faults and about 15 ms of kernel time per 50 ms
step. Keeping spare heap at the top makes those buffers come back warm. PyTorch
avoids most of this by allocating less (fused kernels, in-place autograd buffers);
ember, whose kernels are NumPy calls, can ask the allocator instead.

It is a process-wide setting, so importing ember never makes it: a program opts in by
calling `tune_allocator()` once (`python -m ember.run` does). ember's own arrays no longer
need it where native kernels run: the runtime's buffer cache (`native/buffers.py`), NumPy's
memory handler in the thread that loads it, keeps their freed blocks without touching the
C library's settings. It still helps the NumPy-only path (`EMBER_KERNELS=numpy`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc mallopt parameters
MMAP_THRESHOLD = 256 << 20  # larger blocks still get their own mapping
TRIM_THRESHOLD = 256 << 20  # free heap kept before any goes back to the OS


def tune_allocator(mmap_threshold: int = MMAP_THRESHOLD,
                   trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Ask glibc's malloc to serve blocks below `mmap_threshold` from the heap and to keep
    up to `trim_threshold` free bytes there rather than return them to the OS.

    (glibc adapts its mmap threshold up to 32 MiB by itself, but its trim threshold
    follows at twice that, so a step's buffers are returned and faulted in again each
    time; setting either by hand fixes both.) Returns False where there is no glibc.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
                    and libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold))
    except (OSError, AttributeError):
        return False
