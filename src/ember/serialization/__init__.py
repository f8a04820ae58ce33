"""`ember.save` / `ember.load`: PyTorch's checkpoint files, read and written without torch.

The format (torch >= 1.6) is a stored ZIP holding `data.pkl` (a protocol-2 pickle)
and one raw little-endian blob per storage, `data/<key>`. A tensor in the pickle
is a call to `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`
whose storage is a persistent id `('storage', torch.FloatStorage, key, 'cpu',
numel)`; tensors that share a key share memory (views, tied weights).

Loading is data-only: the pickle runs on ember's own interpreter (`_unpickler.py`)
against a fixed table of stand-ins, so no code named in a file ever runs. Every
view is checked against the bytes actually present before it is made, and a hostile
file is refused (CheckpointError / UnpicklingError) without crashing the interpreter or
building more than a bound proportional to its size. Files from
`torch.save` load here (also the pre-1.6 "legacy" stream format), and files from
`ember.save` load in `torch.load` with its default `weights_only=True`.

Layout: `_dtypes.py` (dtype and storage-class tables), `_save.py` (save),
`_standins.py` and `_allowlist.py` (what a checkpoint's globals resolve to; the
user allowlist), `_numpy.py` (NumPy values, with `weights_only=False` only),
`_load.py` (load, inspection), `_limits.py` (what one load may build, bounded by
the file's size), `_pickling.py` (plain Python pickling of tensors), over
`_pickler.py`, `_unpickler.py` and `_zip.py`.
"""

from __future__ import annotations

from ._allowlist import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._dtypes import _V3_NUMPY, _extra_dtype
from ._load import (
    CheckpointError,
    EmptyCheckpointError,
    NotACheckpointError,
    get_unsafe_globals_in_checkpoint,
    load,
)
from ._pickling import _rebuild_pickled, _reduce_tensor, _storage_from_bytes
from ._save import save
from ._unpickler import UnpicklingError

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "UnpicklingError",
           "CheckpointError", "EmptyCheckpointError", "NotACheckpointError"]


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
