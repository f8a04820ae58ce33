"""Backends: where kernels run. `cpu` is NumPy, `meta` is metadata only, `cuda` is CuPy.

The seam: a backend turns tensors into its own arrays, runs a primitive's kernel,
and moves tensors to and from host memory. The cpu and meta paths are inlined in
`ops.registry.apply` for speed; other backends plug in through `get_backend`.
"""

from __future__ import annotations

from .._device import device
from . import cpu_flags as cpu
from . import cuda, cudnn, mkldnn, mps, openmp


def get_backend(kind: str):
    if kind == "cuda":
        from . import cuda

        return cuda
    raise RuntimeError(f"no backend for device type '{kind}'")


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
