"""The MPI engine underneath `ember.distributed`: a lazy import of mpi4py and tensor buffers.

mpi4py initialises MPI when `mpi4py.MPI` is imported, so nothing here imports it until a
process group is made: `import ember` and the single-process path never need MPI.
"""

from __future__ import annotations

import numpy as np


def available() -> bool:
    """mpi4py (and the MPI library it loads) can be imported."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def mpi():
    """The `mpi4py.MPI` module (importing it initialises MPI once per process)."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(
            "ember.distributed needs mpi4py and an MPI library; install the `dist` extra "
            "(pip install 'ember[dist]')"
        ) from e
    return MPI


# NumPy kinds MPI can reduce natively; others (float16, bfloat16, bool) are widened first.
_REDUCIBLE = {np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32,
                                    np.int64, np.uint8, np.complex64, np.complex128)}


def reducible(arr: np.ndarray) -> bool:
    return arr.dtype in _REDUCIBLE


def as_bytes(arr: np.ndarray) -> np.ndarray:
    """A byte view of a contiguous array, so MPI moves any dtype (bfloat16 included)."""
    return arr.reshape(-1).view(np.uint8)
