"""`mx.fast.metal_kernel`, `cuda_kernel` and `precompiled_cuda_kernel`: kernels written as
Metal or CUDA source, which MLX's Linux CPU build (the one ember matches) cannot run.

MLX still binds them there: `metal_kernel` builds a kernel object whose call checks its
arguments and then raises "No Metal back-end"; the CUDA ones raise "No CUDA back-end" once
their binding accepts the arguments. Programs that build kernels at import time and only
run them on a GPU therefore import on ember as on MLX.
"""

from __future__ import annotations

from ._array import array
from ._binding import bad_call
from ._dtypes import Dtype
from ._nb_types import as_float, as_int, nb_func

_METAL = ("metal_kernel(name: str, input_names: collections.abc.Sequence[str], output_names: "
          "collections.abc.Sequence[str], source: str, header: str = '', "
          "ensure_row_contiguous: bool = True, atomic_outputs: bool = False, compile_options: "
          "object | None = None) -> object")
_CALL = ("__call__(self, *, inputs: list[scalar | array], output_shapes: list[Sequence[int]], "
         "output_dtypes: list[Dtype], grid: tuple[int, int, int], threadgroup: tuple[int, "
         "int, int], template: list[tuple[str, bool | int | Dtype]] | None = None, "
         "init_value: float | None = None, verbose: bool = false, stream: StreamOrDevice = "
         "None)")
_CUDA = ("cuda_kernel(name: str, input_names: collections.abc.Sequence[str], output_names: "
         "collections.abc.Sequence[str], source: str, header: str = '', ensure_row_contiguous:"
         " bool = True, shared_memory: int = 0) -> object")
_PRECOMPILED = (
    "precompiled_cuda_kernel(*, name: str, compiled_source: bytes, inputs: "
    "collections.abc.Sequence[bool | int | float | mlx.core.array | ndarray[writable=False] | "
    "complex | mlx.core.ArrayLike], output_shapes: collections.abc.Sequence[tuple[int, ...]], "
    "output_dtypes: collections.abc.Sequence[mlx.core.Dtype], scalars: "
    "collections.abc.Sequence[object], grid: tuple[int, int, int], threadgroup: tuple[int, "
    "int, int], shared_memory: int = 0, init_value: float | None = None, "
    "ensure_row_contiguous: bool = False, stream: mlx.core.Stream | mlx.core.ThreadLocalStream"
    " | mlx.core.Device | mlx.core.DeviceType | None = None) -> list[mlx.core.array]")


def _is_names(v) -> bool:
    return isinstance(v, list | tuple) and all(isinstance(s, str) for s in v)


def _is_triple(v) -> bool:
    return isinstance(v, list | tuple) and len(v) == 3 and all(as_int(i) is not None for i in v)


def _is_flag(v) -> bool:
    return v is True or v is False


def _bind(name: str, signature: str, args: tuple, kwargs: dict, params: dict[str, tuple],
          positional: int) -> dict:
    """The arguments by name, as a binding with `params` (name -> (check, default or
    `...` when required)) and `positional` leading positional parameters takes them;
    nanobind's TypeError where it would refuse them."""
    names = list(params)
    if len(args) > positional or any(k not in params for k in kwargs) or any(
            n in kwargs for n in names[:len(args)]):
        raise bad_call(name, signature, args, kwargs)
    bound = {**dict(zip(names, args)), **kwargs}
    for n, (check, default) in params.items():
        if n not in bound:
            if default is ...:
                raise bad_call(name, signature, args, kwargs)
            continue
        if not (bound[n] is None and default is None) and not check(bound[n]):
            raise bad_call(name, signature, args, kwargs)
    return bound


_ANY = (lambda v: True)
_KERNEL_PARAMS = {
    "name": (lambda v: isinstance(v, str), ...),
    "input_names": (_is_names, ...),
    "output_names": (_is_names, ...),
    "source": (lambda v: isinstance(v, str), ...),
    "header": (lambda v: isinstance(v, str), ""),
}


def metal_kernel(*args, **kwargs) -> nb_func:
    """A kernel from Metal source; calling it checks its arguments, then raises, as MLX's
    build without Metal does."""
    bound = _bind("metal_kernel", _METAL, args, kwargs, {
        **_KERNEL_PARAMS, "ensure_row_contiguous": (_is_flag, True),
        "atomic_outputs": (_is_flag, False), "compile_options": (_ANY, None)}, 8)
    options = bound.get("compile_options")
    if options is not None and not isinstance(options, dict):
        raise ValueError("[metal_kernel] Expected `compile_options` to be a dict.")
    if not bound["output_names"]:
        raise ValueError("[metal_kernel] Must specify at least one output.")
    n_in, n_out = len(bound["input_names"]), len(bound["output_names"])

    def kernel(*call_args, **call_kwargs) -> list[array]:
        got = _bind("__call__", _CALL, call_args, call_kwargs, {
            "inputs": (lambda v: isinstance(v, list | tuple), ...),
            "output_shapes": (lambda v: isinstance(v, list | tuple), ...),
            "output_dtypes": (lambda v: isinstance(v, list | tuple)
                              and all(isinstance(d, Dtype) for d in v), ...),
            "grid": (_is_triple, ...), "threadgroup": (_is_triple, ...),
            "template": (lambda v: isinstance(v, list | tuple), None),
            "init_value": (lambda v: as_float(v) is not None, None),
            "verbose": (_is_flag, False), "stream": (_ANY, None)}, 0)
        for what, n in (("inputs", n_in), ("output_shapes", n_out), ("output_dtypes", n_out)):
            if len(got[what]) != n:
                raise ValueError(f"[metal_kernel] Expected `{what}` to have size {n} but got "
                                 f"size {len(got[what])}.\n")
        for x in got["inputs"]:
            if not isinstance(x, array):
                array(x)  # (refuses what MLX's array construction refuses, in its words)
        for _, value in got.get("template") or ():
            if not (isinstance(value, Dtype) or as_int(value) is not None):
                raise ValueError("[metal_kernel] Invalid template argument. Must be "
                                 "`mlx.core.Dtype`, `int` or `bool`.")
        raise RuntimeError("[metal_kernel] No Metal back-end.")

    return nb_func(kernel, _CALL + "\n\nRun the kernel (refused: this build has no Metal "
                           "back-end).")


def cuda_kernel(*args, **kwargs):
    """A kernel from CUDA source: refused, as MLX's build without CUDA refuses it."""
    _bind("cuda_kernel", _CUDA, args, kwargs, {
        **_KERNEL_PARAMS, "ensure_row_contiguous": (_is_flag, True),
        "shared_memory": (lambda v: as_int(v) is not None, 0)}, 7)
    raise RuntimeError("[cuda_kernel] No CUDA back-end.")


def precompiled_cuda_kernel(*args, **kwargs) -> list[array]:
    """A kernel from compiled CUDA: refused, as MLX's build without CUDA refuses it."""
    seq = (lambda v: isinstance(v, list | tuple))
    _bind("precompiled_cuda_kernel", _PRECOMPILED, args, kwargs, {
        "name": (lambda v: isinstance(v, str), ...),
        "compiled_source": (lambda v: isinstance(v, bytes), ...),
        "inputs": (seq, ...), "output_shapes": (seq, ...),
        "output_dtypes": (lambda v: seq(v) and all(isinstance(d, Dtype) for d in v), ...),
        "scalars": (seq, ...), "grid": (_is_triple, ...), "threadgroup": (_is_triple, ...),
        "shared_memory": (lambda v: as_int(v) is not None, 0),
        "init_value": (lambda v: as_float(v) is not None, None),
        "ensure_row_contiguous": (_is_flag, False), "stream": (_ANY, None)}, 0)
    raise RuntimeError("[cuda_kernel] No CUDA back-end.")
