"""The CUDA backend's seam: it detects CuPy and a GPU (`ember.cuda.is_available()`), and
has no kernels yet: `run` refuses every primitive, and no primitive sets
`Primitive.cuda_kernel`. Nothing here has run on a GPU.
"""

from __future__ import annotations

import functools

from .. import _algorithms


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
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        """Whether float32 products may use TF32: the matmul precision is not "highest"."""
        return _algorithms.matmul_precision[0] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        # NOTE: PyTorch's legacy switch: True sets the precision to "high", False to
        # "highest" (ember's products are full float32 either way)
        if not isinstance(value, bool):
            raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                               f"{type(value).__name__}")
        _algorithms.matmul_precision[0] = "high" if value else "highest"


matmul = _MatmulFlags()


def is_built() -> bool:
    return is_available()


# --- scaled-dot-product-attention backend switches (torch.backends.cuda.*_sdp) -------
# NOTE: global, as PyTorch keeps them in its global context; all on by default, and on the
# CPU they decide whether F.scaled_dot_product_attention may take the fused (flash) kernel
# or the math composite (nn.attention.sdpa_kernel sets them).

SDP_ENABLED = {"cudnn": True, "flash": True, "mem_efficient": True, "math": True,
               "overrideable": True}
SDP_PRIORITY = [1, 2, 0, 3, 4]  # PyTorch's default order of SDPBackend values


def flash_sdp_enabled() -> bool:
    return SDP_ENABLED["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return SDP_ENABLED["mem_efficient"]


def math_sdp_enabled() -> bool:
    return SDP_ENABLED["math"]


def cudnn_sdp_enabled() -> bool:
    return SDP_ENABLED["cudnn"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the fused (flash) attention kernel."""
    SDP_ENABLED["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient kernel (a CUDA kernel: never taken here)."""
    SDP_ENABLED["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math composite."""
    SDP_ENABLED["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN kernel (a CUDA kernel: never taken here)."""
    SDP_ENABLED["cudnn"] = bool(enabled)
