"""The CUDA backend: CuPy arrays behind the same kernels (NumPy API, via CuPy's protocols).

Only used where CuPy and a GPU are present; `ember.cuda.is_available()` says so.
Primitives whose NumPy kernel CuPy cannot run set `Primitive.cuda_kernel`.
"""

from __future__ import annotations

import functools


@functools.cache
def _cupy():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:
        pass
    return None


def is_available() -> bool:
    return _cupy() is not None


def device_count() -> int:
    cp = _cupy()
    return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def require() -> object:
    cp = _cupy()
    if cp is None:
        raise RuntimeError(
            "Found no NVIDIA driver on your system (or CuPy is not installed). ember runs CUDA "
            "tensors through CuPy; use device='cpu' on this machine."
        )
    return cp


def run(prim, args, params):
    raise NotImplementedError(
        f"the cuda backend has no kernel for '{prim.name}' yet; it runs only where a GPU exists"
    )
