"""The CUDA backend's seam: it detects CuPy and a GPU (`ember.cuda.is_available()`), and
has no kernels yet: `run` refuses every primitive, and no primitive sets
`Primitive.cuda_kernel`. Nothing here has run on a GPU.
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


# --- torch.backends.cuda flags (read by programs; no effect without a GPU) -----------

class _MatmulFlags:
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built() -> bool:
    return is_available()


def flash_sdp_enabled() -> bool:
    return False


def enable_flash_sdp(enabled: bool) -> None:
    """No flash-attention kernels here; the flag is accepted and ignored."""


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Accepted and ignored, as above."""


def enable_math_sdp(enabled: bool) -> None:
    """Accepted and ignored: ember always uses the math path."""
