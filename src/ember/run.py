"""`python -m ember.run SCRIPT [ARGS...]`: run a PyTorch (or MLX) program on ember, unmodified.

Also `python -m ember.run -m package.module [ARGS...]`, and the `ember-run` command.
"""

from __future__ import annotations

import os
import runpy
import sys

from ._allocator import tune_allocator


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    from . import compat

    tune_allocator()  # the runner owns the process: it opts in (see ember/_allocator.py)
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
        # (as `python SCRIPT` since 3.9: the script's code, hence its tracebacks and
        # warnings, names it by its absolute path)
        runpy.run_path(os.path.abspath(argv[0]), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
