"""Which tests the NumPy-kernel line of `make test` must run again.

`make test` runs the suite with native kernels, then the kernel-bearing directories a second
time with `EMBER_KERNELS=numpy`, so that every test touching a native kernel also passes on
the NumPy reference path. A test that never asks which kernels are on runs the same code both
times; running it twice checks nothing new. So the first line records which tests read the
kernel mode (every native kernel, chooser and compiled graph reads it before running native
code), and the second line runs those tests only (a test's fixtures are set up inside it, so
what a fixture computes counts for the tests that use it first).

- `EMBER_TEST_KERNEL_TRACE=<dir>` (the first line): each worker writes the ids of the tests
  that read the mode to `<dir>/<pid>.txt` at its end, one per line.
- `EMBER_TEST_KERNEL_FILES=<dir>` (the second line): keep the tests listed there, every test
  under `tests/native` and `tests/graph` (written to run twice), and every test in a file that
  starts other processes (what a child reads is not counted), but no test marked
  `oracle_only` (it runs torch or MLX alone). Where the folder holds no record (the line
  run on its own), nothing is deselected.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

TRACE_ENV = "EMBER_TEST_KERNEL_TRACE"
FILES_ENV = "EMBER_TEST_KERNEL_FILES"
_ALWAYS = ("tests/native/", "tests/graph/")
_SPAWNS = re.compile(r"subprocess|fresh_process|multiprocessing|os\.fork|Popen")


class _CountingState(dict):
    """The kernel module's state dict, counting every read of the mode."""

    reads = 0

    def __getitem__(self, key):
        _CountingState.reads += 1
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        _CountingState.reads += 1
        return dict.get(self, key, default)


def _relative(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root).as_posix()


class Recorder:
    """Records the tests that read the kernel mode."""

    def __init__(self, folder: str):
        from ember.native import kernels

        kernels._state = _CountingState(kernels._state)
        self.folder, self.tests = Path(folder), set()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item):
        before = _CountingState.reads
        yield
        if _CountingState.reads != before:
            self.tests.add(item.nodeid)

    def pytest_sessionfinish(self, session):
        self.folder.mkdir(parents=True, exist_ok=True)
        lines = "".join(t + "\n" for t in sorted(self.tests))
        (self.folder / f"{os.getpid()}.txt").write_text(lines)


def _spawns(path: Path, seen: dict) -> bool:
    if path not in seen:
        seen[path] = bool(_SPAWNS.search(path.read_text(errors="replace")))
    return seen[path]


class Selector:
    """Deselects the tests the native line found making no kernel choice."""

    def __init__(self, folder: str, root: Path):
        records = sorted(Path(folder).glob("*.txt")) if Path(folder).is_dir() else []
        self.root = root
        self.tests = None if not records else \
            {line for r in records for line in r.read_text().splitlines() if line}

    def pytest_collection_modifyitems(self, config, items):
        if self.tests is None:
            return
        keep, drop, seen = [], [], {}
        for item in items:
            rel = _relative(item.path, self.root)
            if item.get_closest_marker("oracle_only") is None and (
                    item.nodeid in self.tests or rel.startswith(_ALWAYS)
                    or _spawns(item.path, seen)):
                keep.append(item)
            else:
                drop.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


def configure(config) -> None:
    """Register the recorder or the selector that the environment asks for."""
    root = Path(config.rootpath).resolve()
    if os.environ.get(TRACE_ENV):
        config.pluginmanager.register(Recorder(os.environ[TRACE_ENV]), "kernel-trace")
    if os.environ.get(FILES_ENV):
        config.pluginmanager.register(Selector(os.environ[FILES_ENV], root), "kernel-files")
