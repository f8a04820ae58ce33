"""The C toolchain: find a compiler, compile a translation unit, load the result.

Everything native in ember (the hand-written kernels in `csrc/` and, later, the compiler's
generated kernels) goes through `build(name, source)`: the C source is compiled once per
machine into a shared object, kept in the on-disk cache (`cache.py`) under a key of the
source, the compiler, the flags, the CPU and ember's version, and loaded with ctypes.

Flags: `-O3 -march=native` (or `EMBER_MARCH`), `-fPIC -shared`, and `-ffp-contract=off`,
never `-ffast-math`: a kernel that does its NumPy twin's operations in the same order gives
the same bits, and NaN, inf, -0.0 and rounding stay IEEE. `-fno-trapping-math` changes no
value (ember never reads the floating-point exception flags) and lets GCC if-convert a
select whose sides could raise one: without AVX-512's masked operations it otherwise keeps
such a loop scalar (Adam's update on an AVX2 machine). Nothing here runs at import.
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings

from .._user_warnings import user_stacklevel
from ..version import __version__
from . import cache

CSRC = os.path.join(os.path.dirname(__file__), "csrc")
BASE_FLAGS = ("-O3", "-std=c11", "-fPIC", "-shared", "-pthread", "-ffp-contract=off",
              "-fno-math-errno", "-fno-trapping-math", "-Wall", "-Wno-unused-function")

_lock = threading.RLock()
_found: dict = {}  # "compiler": (path, version line) or None, once probed
_loaded: dict = {}  # name -> ctypes.CDLL
_failed: dict = {}  # name -> reason the build failed


class CompileError(RuntimeError):
    """A C source did not compile (the compiler's message is attached)."""


def _candidates() -> list[str]:
    env = os.environ.get("CC")
    names = [env] if env else []
    return names + ["cc", "gcc", "clang"]


def compiler() -> tuple[str, str] | None:
    """(path, version line) of the first C compiler that builds a shared object, or None.
    Probed once per process; `CC` is tried first."""
    with _lock:
        if "compiler" in _found:
            return _found["compiler"]
        found = None
        for name in _candidates():
            path = shutil.which(name.split()[0]) if name else None
            if path is None:
                continue
            version = _version(path)
            if version is not None and _probe(path):
                found = (path, version)
                break
        _found["compiler"] = found
        return found


def _version(path: str) -> str | None:
    try:
        res = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return (res.stdout.strip().splitlines() or ["?"])[0]


def _probe(path: str) -> bool:
    """Whether `path` compiles and links a trivial shared object with ember's flags."""
    with tempfile.TemporaryDirectory(prefix="ember-cc-") as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("int ember_probe(void) { return 42; }\n")
        out = os.path.join(tmp, "probe.so")
        try:
            res = subprocess.run([path, *flags(), src, "-o", out], capture_output=True,
                                 timeout=60)
        except (OSError, subprocess.SubprocessError):
            return False
        return res.returncode == 0 and os.path.exists(out)


def flags() -> list[str]:
    """The compiler flags ember uses (`EMBER_MARCH` names a target instead of the host's)."""
    march = os.environ.get("EMBER_MARCH", "native")
    out = list(BASE_FLAGS)
    if march:
        out.append(f"-march={march}")
    if sys.platform == "darwin":
        out += ["-undefined", "dynamic_lookup"]
    return out


def cpu_features() -> str:
    """What the compiled code depends on about this CPU: its model and feature flags."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    model = feats = ""
    for line in text.splitlines():
        if not model and line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
        if not feats and line.split(":")[0].strip() in ("flags", "Features"):
            feats = " ".join(sorted(line.split(":", 1)[1].split()))
        if model and feats:
            break
    return f"{platform.machine()} {model} {cache.digest(feats)[:16]}"


def _includes(source: str) -> list[str]:
    """The csrc headers `source` includes (directly or through them), for the cache key."""
    seen: list[str] = []
    todo = [source]
    while todo:
        for line in todo.pop().splitlines():
            line = line.strip()
            if line.startswith('#include "'):
                name = line.split('"')[1]
                path = os.path.join(CSRC, name)
                if name not in seen and os.path.exists(path):
                    seen.append(name)
                    with open(path) as f:
                        todo.append(f.read())
    return seen


def key(source: str) -> dict:
    """The cache key of `source`: everything the shared object's bytes depend on."""
    found = compiler()
    headers = _includes(source)
    texts = []
    for name in sorted(headers):
        with open(os.path.join(CSRC, name)) as f:
            texts.append(f.read())
    return {"source": cache.digest(source, *texts), "compiler": found and found[1],
            "flags": flags(), "cpu": cpu_features(), "ember": __version__}


def compile_to(source: str, out: str) -> None:
    """Compile `source` into the shared object `out` (CompileError with the message)."""
    found = compiler()
    if found is None:
        raise CompileError("no working C compiler (tried $CC, cc, gcc, clang)")
    with tempfile.TemporaryDirectory(prefix="ember-build-") as tmp:
        src = os.path.join(tmp, "unit.c")
        with open(src, "w") as f:
            f.write(source)
        cmd = [found[0], *flags(), "-I", CSRC, src, "-o", out, "-lm"]
        res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise CompileError(f"{' '.join(cmd)}\n{res.stderr}")


def build(name: str, source: str, *, global_symbols: bool = False) -> ctypes.CDLL:
    """The loaded shared object of C `source`: from the cache, or compiled into it.
    `global_symbols` makes its symbols visible to libraries loaded after it (the runtime)."""
    with _lock:
        lib = _loaded.get(name)
        if lib is not None:
            return lib
        k = key(source)
        path = cache.lookup(name, k)
        if path is None:
            scratch = cache.scratch_name(name)
            try:
                compile_to(source, scratch)
                path = cache.store(name, k, scratch)
            finally:
                if os.path.exists(scratch):
                    os.unlink(scratch)
        mode = ctypes.RTLD_GLOBAL if global_symbols else ctypes.RTLD_LOCAL
        lib = ctypes.CDLL(path, mode=mode)
        _loaded[name] = lib
        return lib


def try_build(name: str, source: str, **kw) -> ctypes.CDLL | None:
    """`build`, or None with one warning when no compiler works or the source fails."""
    with _lock:
        if name in _failed:
            return None
        try:
            return build(name, source, **kw)
        except (CompileError, OSError) as e:
            _failed[name] = str(e)
            if len(_failed) == 1:
                warnings.warn(f"ember: native kernels unavailable, running NumPy kernels "
                              f"({str(e).splitlines()[0]})", RuntimeWarning,
                              stacklevel=user_stacklevel())
            return None


def forget() -> None:
    """Drop what this process probed, loaded and failed (tests)."""
    with _lock:
        _found.clear()
        _loaded.clear()
        _failed.clear()
