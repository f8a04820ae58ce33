"""Backends: where kernels run. `cpu` is NumPy, `meta` is metadata only; `cuda` is a seam
with no kernels yet (it detects CuPy and a GPU, and runs nothing: see README, "Devices").

The seam: a backend turns tensors into its own arrays, runs a primitive's kernel,
and moves tensors to and from host memory. The cpu and meta paths are inlined in
`ops.registry.apply` for speed; other backends plug in through `get_backend`.
`refuse_unavailable` raises what PyTorch's CPU build raises for the devices ember lacks.
"""

from __future__ import annotations

from .. import _names
from .._device import device
from . import cpu_flags as cpu
from . import cuda, cudnn, mkldnn, mps, openmp, opt_einsum

# PyTorch's names for the backends of the device types it knows but this build lacks.
_BACKEND = {"mps": "MPS", "xla": "XLA", "ipu": "IPU", "vulkan": "Vulkan", "lazy": "Lazy",
            "hip": "HIP", "ve": "VE", "fpga": "FPGA", "maia": "MAIA"}
_CAFFE2 = ("opengl", "opencl", "ideep", "mkldnn")


def refuse_unavailable(dev: device, *, factory: bool = False) -> None:
    """Raise what PyTorch's CPU build raises for a tensor made on (`factory`) or moved to
    `dev` when this build cannot hold tensors there; return when it can (cpu, meta, and
    cuda where CuPy finds a GPU)."""
    kind = dev.type
    if kind == "cpu" or kind == "meta" or (kind == "cuda" and cuda.is_available()):
        return
    if kind in ("cuda", "xpu"):
        raise AssertionError(f"Torch not compiled with {kind.upper()} enabled")
    if kind == "mtia":
        raise AssertionError(
            "Torch not compiled with MTIA enabled. Ensure you have `import "
            "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
            "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")
    if kind in ("hpu", "privateuseone"):
        raise ModuleNotFoundError(f"No module named '{_names.prefix}.{kind}'")
    if kind in _CAFFE2 and factory:
        raise RuntimeError(f"{kind} is a grandfathered Caffe2 device type: no tensor can be "
                           "made there")
    if factory or kind == "lazy" or dev.index is not None:
        op = "empty.memory_format" if factory or kind == "lazy" else "empty_strided"
        raise NotImplementedError(
            f"Could not run 'aten::{op}' with arguments from the '{_BACKEND[kind]}' backend. "
            "This could be because the operator doesn't exist for this backend, or was "
            "omitted during the selective/custom build process (if using custom build).")
    raise RuntimeError(f"PyTorch is not linked with support for {kind} devices")


def get_backend(kind: str):
    if kind == "cuda":
        from . import cuda

        return cuda
    raise RuntimeError(f"no backend for device type '{kind}'")


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
