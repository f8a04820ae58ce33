"""What loading one checkpoint may build, bounded by the file's own size.

A pickle can make far more than it holds: copies of one memoised blob, containers nested
deeper than C code can recurse, views that turn a few bytes into gigabytes once negated.
`budget(nbytes)` opens a per-load allowance proportional to the file size, and every
place that builds bytes the file does not literally contain charges it first (`charge`).
`describe` names an untrusted value in an error message without repr-ing it.
"""

from __future__ import annotations

import contextlib
import contextvars

FACTOR = 8  # bytes a load may build per byte of file ...
SLACK = 64 << 20  # ... plus this much, so small files with small copies always load

_current: contextvars.ContextVar = contextvars.ContextVar("ember_load_budget", default=None)


class _Budget:
    __slots__ = ("left", "limit", "file_size")

    def __init__(self, file_size: int) -> None:
        self.file_size = file_size
        self.limit = self.left = FACTOR * file_size + SLACK


@contextlib.contextmanager
def budget(file_size: int):
    """Bound what the loads inside this block build to FACTOR * file_size + SLACK bytes."""
    token = _current.set(_Budget(file_size))
    try:
        yield
    finally:
        _current.reset(token)


def charge(nbytes: int, what: str) -> None:
    """Account for `nbytes` about to be built; refuse once the load's allowance is spent."""
    b = _current.get()
    if b is None:
        return
    b.left -= nbytes
    if b.left < 0:
        from ._unpickler import UnpicklingError

        raise UnpicklingError(
            f"{what} would take the bytes this checkpoint builds past {b.limit} (a "
            f"{b.file_size}-byte file may build at most {FACTOR} bytes per byte it holds, "
            f"plus {SLACK >> 20} MiB); the file is hostile or corrupt")


def describe(x) -> str:
    """A short description of a value from a file, safe to put in a message (no repr of
    containers, which may be enormous or nested without end)."""
    if x is None or type(x) in (bool, float):
        return repr(x)
    if type(x) is int:
        return str(x) if -10**30 < x < 10**30 else f"an int of {x.bit_length()} bits"
    if type(x) in (str, bytes, bytearray):
        cut = repr(x[:40])
        return cut + (f"... ({len(x)} long)" if len(x) > 40 else "")
    return f"a {type(x).__name__}"
