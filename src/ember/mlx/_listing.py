"""What `dir()` lists for a module of ember's MLX face: what MLX's module lists.

MLX's submodules list their API (and, for its Python modules, the names they import);
ember's modules also hold the modules and helpers their code imports (`np`, `cast`,
`check_stream`). A module ends with `__dir__ = listing(globals(), ...)` so that `dir()`
shows its API and nothing of how it is built (the names stay importable for ember's own
code).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def listing(namespace: dict, names: Iterable[str] = ()) -> Callable[[], list[str]]:
    """A module-level `__dir__` for the module whose globals are `namespace`: its dunder
    names, `names`, and the public functions and classes it defines itself."""
    module, extra = namespace["__name__"], frozenset(names)

    def __dir__() -> list[str]:  # noqa: N807  (the name `dir()` looks up)
        return sorted(n for n, v in namespace.items()
                      if n.startswith("__") or n in extra
                      or not n.startswith("_") and getattr(v, "__module__", None) == module)
    return __dir__
