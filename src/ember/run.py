"""`python -m ember.run SCRIPT [ARGS...]`: run a PyTorch program on ember, unmodified.

Also `python -m ember.run -m package.module [ARGS...]`, and the `ember-run` command.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import runpy
import sys

_M_TOP_PAD = -2  # glibc mallopt parameter


def tune_allocator(top_pad: int = 64 << 20) -> bool:
    """Ask glibc's malloc to keep `top_pad` spare bytes at the top of the heap.

    A training loop frees and reallocates the same few megabytes of NumPy buffers every
    step; by default glibc hands them back to the OS each time (a brk call and fresh
    zeroed pages on every step), which can cost as much as the arithmetic. Returns False
    where there is no glibc (the program then runs with the default allocator).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_TOP_PAD, top_pad))
    except (OSError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    from . import compat

    tune_allocator()
    compat.install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print("ember.run: -m needs a module name", file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
