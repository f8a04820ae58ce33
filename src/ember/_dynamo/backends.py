"""The backend names `torch.compile` accepts and the checks it makes on its arguments
before compiling anything: a program that misspells a backend, a mode or an inductor
option gets the exception PyTorch gives, at the line that made the mistake."""

from __future__ import annotations

from ..graph.compiled import EAGER_BACKENDS
from .exc import InvalidBackend

# Names PyTorch registers. `backend=` maps them onto ember's two lowerings: the eager
# family runs a graph node by node, every other name (inductor included) fuses.
PUBLIC = ("cudagraphs", "inductor", "openxla", "tvm")
DEBUG = tuple(sorted(EAGER_BACKENDS | {"aot_ts", "openxla_eval", "ts"}))

# PyTorch's `mode=` names, in the order its error lists them.
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")

# Inductor options programs pass through `options=` (name -> the type PyTorch checks;
# None: PyTorch accepts more than one type and checks none). ember records them and
# compiles the same way whatever they say. "pure" is ember's own (README "Compile").
_B, _I = bool, int
OPTIONS: dict[str, type | None] = {
    "aggressive_fusion": _B, "benchmark_fusion": _B, "benchmark_kernel": _B,
    "combo_kernels": _B, "comprehensive_padding": _B, "compile_threads": None,
    "conv_1x1_as_mm": _B, "coordinate_descent_tuning": _B, "cpp.dynamic_threads": _B,
    "cpp.enable_kernel_profile": _B, "cpp.simdlen": None, "cpp.threads": _I,
    "cpp_wrapper": _B, "dce": _B, "debug": _B, "disable_progress": _B,
    "emulate_precision_casts": _B, "epilogue_fusion": _B, "fallback_random": _B,
    "freezing": _B, "freezing_discard_parameters": _B, "fx_graph_cache": _B,
    "graph_partition": _B, "group_fusion": _B, "implicit_fallbacks": _B,
    "keep_output_stride": _B, "layout_optimization": _B, "max_autotune": _B,
    "max_autotune_gemm": _B, "max_autotune_pointwise": _B, "max_fusion_size": _I,
    "online_softmax": _B, "pattern_matcher": _B, "permute_fusion": _B,
    "realize_opcount_threshold": None, "shape_padding": _B, "size_asserts": _B,
    "split_reductions": _B, "trace.enabled": _B, "trace.graph_diagram": _B,
    "triton.cudagraph_trees": _B, "triton.cudagraphs": _B, "unroll_reductions_threshold": _I,
    "use_fast_math": _B, "verbose_progress": _B, "pure": None,
}


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The names `torch.compile(backend=...)` accepts; the debugging ones (`eager`,
    `aot_eager`, ...) only when `exclude_tags` is empty, as PyTorch lists them."""
    names = PUBLIC if set(exclude_tags or ()) & {"debug", "experimental"} else PUBLIC + DEBUG
    return sorted(names)


def check_arguments(model, *, dynamic, backend, mode, options, disable: bool) -> None:
    """Raise what `torch.compile` raises on bad arguments, in PyTorch's order: both mode and
    options, an unknown mode or inductor option (or one of the wrong type), an unknown
    backend name, `dynamic` not a bool, then a model that is not callable."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if backend is None or backend == "inductor":
        if mode and mode not in MODES:
            raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                               f"{', '.join(MODES)}")
        for key, value in (options or {}).items():
            name = key.replace("-", "_")
            if name not in OPTIONS:
                raise RuntimeError(f"Unexpected optimization option {key}, known options "
                                   f"are {sorted(OPTIONS)}")
            want = OPTIONS[name]
            if want is not None and not isinstance(value, want):
                raise RuntimeError(f"Unexpected type of attr {key}, got "
                                   f"{type(value).__name__} should be {want.__name__}")
    elif isinstance(backend, str) and backend not in PUBLIC + DEBUG:
        raise InvalidBackend(backend)
    if not disable and dynamic is not None and not isinstance(dynamic, bool):
        raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
