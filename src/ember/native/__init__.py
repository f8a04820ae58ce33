"""ember's native layer: C kernels compiled on first use by the system C compiler.

- `toolchain`: find a compiler, compile a unit, load it (ctypes), through `cache`;
- `cache`: the per-user on-disk cache of shared objects, and why it is safe to load from;
- `kernels`: native kernels registered beside their NumPy twins, and the choice per call;
- `calls`: the small helpers a kernel's Python side uses to call into C;
- `csrc/`: the C sources, one file per kernel family, `runtime.c` (the thread pool) and the
  headers.

`import ember` compiles nothing and starts no thread: the first kernel call that has a
native twin builds (or loads from the cache) its family's library.
"""

from .kernels import (
    library,
    mode,
    register,
    runtime,
    set_num_threads,
    twins,
    unit_source,
    use,
)


def available() -> bool:
    """Whether native kernels run here: the mode is "native" and the runtime builds."""
    return mode() == "native" and runtime() is not None


__all__ = ["available", "library", "mode", "register", "runtime", "set_num_threads", "twins",
           "unit_source", "use"]
