"""The on-disk cache of compiled kernels, and why it is safe to load from.

A shared object that ember loads is code that runs in the user's process, so the cache is
not a way in:

- it lives in a per-user folder (`EMBER_CACHE_DIR`, else the platform's user cache folder),
  created with mode 0700; a folder another user owns, or that others may write, is refused
  and a fresh private folder used instead, with one warning;
- an entry is a shared object and a small JSON record beside it naming the key it was built
  for (source hash, compiler, flags, CPU, ember's version) and the SHA-256 of the object's
  bytes; an object is loaded only when its record matches what is asked for and its bytes
  hash to the recorded value, so a corrupt, foreign or planted file is rebuilt, never loaded;
- entries are written to a private temporary name and renamed into place (atomic on POSIX
  and Windows), so two processes building the same kernel at once both end with a whole file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
import warnings

from .._user_warnings import user_stacklevel

_state: dict = {"dir": None, "warned": False}


def default_folder() -> str:
    """The platform's per-user cache folder for ember (not created here)."""
    env = os.environ.get("EMBER_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    elif os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~/AppData/Local")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "ember", "kernels")


def unsafe_reason(path: str, *, folder: bool) -> str | None:
    """Why `path` may not be trusted (owned by another user, writable by others, a
    symbolic link, or not the expected kind of file), or None when it may."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if folder != stat.S_ISDIR(st.st_mode) or (not folder and not stat.S_ISREG(st.st_mode)):
        return "is not a folder" if folder else "is not a regular file"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"is owned by another user (uid {st.st_uid})"
    if hasattr(os, "getuid") and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "may be written by other users"
    return None


def folder() -> str:
    """The cache folder, created (mode 0700) and checked on first use."""
    if _state["dir"] is not None:
        return _state["dir"]
    path = default_folder()
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        reason = unsafe_reason(path, folder=True)
    except OSError as e:
        reason = f"cannot be created ({e.strerror})"
    if reason is not None:
        fresh = tempfile.mkdtemp(prefix="ember-kernels-")
        warnings.warn(f"ember: the kernel cache folder {path} {reason}; compiled kernels go "
                      f"to a fresh private folder {fresh} for this process", RuntimeWarning,
                      stacklevel=user_stacklevel())
        path = fresh
    _state["dir"] = path
    return path


def reset() -> None:
    """Forget the chosen folder (tests: after changing EMBER_CACHE_DIR)."""
    _state["dir"] = None


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def paths(name: str, key: dict) -> tuple[str, str]:
    """(object path, record path) of the entry for `key` (a JSON-able dict)."""
    tag = digest(json.dumps(key, sort_keys=True))[:20]
    base = os.path.join(folder(), f"{name}-{tag}")
    suffix = ".dll" if os.name == "nt" else ".so"
    return base + suffix, base + ".json"


def lookup(name: str, key: dict) -> str | None:
    """The path of a valid cached object for `key`, or None (missing, or refused: then the
    reason is warned about once and the caller rebuilds it)."""
    obj, rec = paths(name, key)
    if not os.path.exists(obj) and not os.path.exists(rec):
        return None
    problem = None
    for p in (obj, rec):
        problem = problem or (unsafe_reason(p, folder=False) and f"{os.path.basename(p)} "
                              f"{unsafe_reason(p, folder=False)}")
    if problem is None:
        try:
            with open(rec) as f:
                record = json.load(f)
            if record.get("key") != key:
                problem = "its record names another key"
            elif record.get("sha256") != _file_digest(obj):
                problem = "its bytes do not match its record"
        except (OSError, ValueError, AttributeError):
            problem = "its record is unreadable"
    if problem is None:
        return obj
    if not _state["warned"]:
        _state["warned"] = True
        warnings.warn(f"ember: refused the cached kernel {obj} ({problem}); rebuilding it",
                      RuntimeWarning, stacklevel=user_stacklevel())
    return None


def store(name: str, key: dict, built: str) -> str:
    """Move the freshly built object `built` into the cache under `key`, with its record;
    returns its final path."""
    obj, rec = paths(name, key)
    os.chmod(built, 0o700)
    record = {"key": key, "sha256": _file_digest(built)}
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(rec), prefix=".rec-")
    with os.fdopen(fd, "w") as f:
        json.dump(record, f, sort_keys=True, indent=1)
    os.replace(built, obj)
    os.replace(tmp, rec)
    return obj


def scratch_name(name: str) -> str:
    """A private temporary path in the cache folder for a build's output."""
    fd, path = tempfile.mkstemp(dir=folder(), prefix=f".{name}-", suffix=".tmp")
    os.close(fd)
    return path
