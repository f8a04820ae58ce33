"""The toolchain and its cache, each case in a fresh process with a cache folder of its own:
no compiler, corrupt and planted cache entries, unsafe folders, two processes compiling at
once, a fork after native kernels ran, a second process reusing the cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import ember
from ember.native import toolchain

SRC = os.path.join(os.path.dirname(ember.__file__), os.pardir)

# A child that runs BatchNorm (a native kernel) and checks it against the NumPy twin; it
# prints one JSON line: whether the native kernel ran, the warnings, the worst difference.
CHILD = textwrap.dedent("""
    import json, time, warnings
    import numpy as np
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        t0 = time.perf_counter()
        import ember
        from ember import native
        from ember.ops.batch_norm import batch_norm_p
        x = np.random.default_rng(0).standard_normal((4, 3, 5, 5)).astype(np.float32)
        out = ember.nn.functional.batch_norm(ember.tensor(x), None, None, training=True)
        first = time.perf_counter() - t0
        ref = native.twins(batch_norm_p)[0](x, None, None, eps=1e-5)[0]
        ran = native.library("batch_norm") is not None
    print(json.dumps({"native": ran, "first_call_s": first,
                      "warnings": [str(w.message) for w in caught],
                      "diff": float(np.abs(out.numpy() - ref).max())}))
""")


def _run(cache_dir, code=CHILD, **env_extra):
    env = dict(os.environ, EMBER_CACHE_DIR=str(cache_dir), PYTHONPATH=os.path.abspath(SRC))
    env.pop("EMBER_KERNELS", None)
    env.update(env_extra)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


pytestmark = [
    pytest.mark.skipif(toolchain.compiler() is None, reason="no C compiler here"),
    # every case's child sets its own EMBER_KERNELS: the NumPy line of `make test` would
    # run the same children again
    pytest.mark.skipif(os.environ.get("EMBER_KERNELS") == "numpy",
                       reason="the children choose their kernels: run in the native line"),
]


def test_import_compiles_nothing_and_starts_no_thread(tmp_path):
    code = ("import json, threading, os, ember; "
            f"print(json.dumps({{'threads': threading.active_count(), "
            f"'files': os.listdir({str(tmp_path)!r})}}))")
    out = _run(tmp_path, code)
    assert out == {"threads": 1, "files": []}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(folder, what its child printed): a cache folder in which a first process built the
    kernels CHILD uses. Built once per worker; the cases that damage a built cache work on
    a copy of it (`_built_copy`), which saves a compile each."""
    folder = tmp_path_factory.mktemp("built")
    return folder, _run(folder)


def _built_copy(built, dst):
    """A copy of the built cache at `dst`, with its modes and times (the records name no
    folder, so a copy is a cache as good as the original)."""
    shutil.copytree(built[0], dst, dirs_exist_ok=True)
    return dst


def test_first_use_builds_then_a_second_process_reuses_the_cache(built, tmp_path):
    cold = built[1]
    assert cold["native"] and cold["warnings"] == [] and cold["diff"] < 1e-5
    built_files = {f: os.stat(built[0] / f).st_mtime_ns for f in os.listdir(built[0])}
    assert any(f.startswith("batch_norm-") and f.endswith(".so") for f in built_files)
    assert any(f.startswith("runtime-") for f in built_files)
    _built_copy(built, tmp_path)
    assert {f: os.stat(tmp_path / f).st_mtime_ns for f in os.listdir(tmp_path)} == built_files
    warm = _run(tmp_path)
    assert warm["native"] and warm["warnings"] == []
    # nothing rebuilt: the same files, untouched
    assert {f: os.stat(tmp_path / f).st_mtime_ns for f in os.listdir(tmp_path)} == built_files
    print(f"first call: cold {cold['first_call_s']:.2f} s, warm {warm['first_call_s']:.2f} s")


def test_cache_folder_is_private(tmp_path):
    d = tmp_path / "fresh" / "kernels"
    _run(d)
    assert (os.stat(d).st_mode & 0o777) == 0o700


def test_no_compiler_runs_numpy_with_one_warning(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    out = _run(tmp_path / "cache", CC="", PATH=str(empty))
    assert not out["native"]
    assert out["diff"] == 0.0  # the NumPy kernel itself ran
    assert len(out["warnings"]) == 1 and "native kernels unavailable" in out["warnings"][0]


def test_ember_kernels_numpy_compiles_nothing(tmp_path):
    out = _run(tmp_path, EMBER_KERNELS="numpy")
    assert out["diff"] == 0.0 and out["warnings"] == []
    assert os.listdir(tmp_path) == []


def _entry(folder, name):
    so = [f for f in os.listdir(folder) if f.startswith(name + "-") and f.endswith(".so")]
    assert len(so) == 1
    return folder / so[0]


def test_corrupt_object_is_rebuilt_not_loaded(built, tmp_path):
    _built_copy(built, tmp_path)
    so = _entry(tmp_path, "batch_norm")
    so.write_bytes(b"\x7fELF garbage")
    out = _run(tmp_path)
    assert out["native"] and out["diff"] < 1e-5
    assert any("refused the cached kernel" in w and "do not match" in w for w in out["warnings"])
    assert so.read_bytes()[:4] == b"\x7fELF" and len(so.read_bytes()) > 1000


def test_planted_object_under_a_valid_name_is_rebuilt(built, tmp_path):
    _built_copy(built, tmp_path)
    # a real shared object, but not the one the record names (the runtime's, here)
    shutil.copy(_entry(tmp_path, "runtime"), _entry(tmp_path, "batch_norm"))
    out = _run(tmp_path)
    assert out["native"] and out["diff"] < 1e-5
    assert any("do not match its record" in w for w in out["warnings"])


def test_record_of_another_key_is_refused(built, tmp_path):
    _built_copy(built, tmp_path)
    rec = _entry(tmp_path, "batch_norm").with_suffix(".json")
    record = json.loads(rec.read_text())
    record["key"]["flags"] = ["-O0"]
    rec.write_text(json.dumps(record))
    out = _run(tmp_path)
    assert out["native"] and any("names another key" in w for w in out["warnings"])


def test_world_writable_folder_is_refused(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    out = _run(d)
    assert out["native"] and out["diff"] < 1e-5
    assert any("may be written by other users" in w for w in out["warnings"])
    assert os.listdir(d) == []  # nothing was written or loaded there


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a folder to another user needs root")
def test_folder_of_another_user_is_refused(tmp_path):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, 4242, 4242)
    out = _run(d)
    assert out["native"] and any("owned by another user" in w for w in out["warnings"])


def test_two_processes_compiling_at_once_both_succeed(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), PYTHONPATH=os.path.abspath(SRC))
    env.pop("EMBER_KERNELS", None)
    procs = [subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (stdout, stderr) in zip(procs, outs):
        assert p.returncode == 0, stderr
        res = json.loads(stdout.strip().splitlines()[-1])
        assert res["native"] and res["diff"] < 1e-5 and res["warnings"] == []
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]  # no stray temporaries


FORK = textwrap.dedent("""
    import json, os
    import numpy as np
    import ember
    from ember import native
    from ember.ops.batch_norm import batch_norm_p
    ember.set_num_threads(2)
    x = np.random.default_rng(1).standard_normal((16, 8, 32, 32)).astype(np.float32)
    numpy_k, native_k = native.twins(batch_norm_p)
    lib = native.library("batch_norm")
    before = native_k(lib, x, None, None, eps=1e-5)[0]
    a = np.random.default_rng(2).standard_normal((600, 500)).astype(np.float32)
    product = (ember.tensor(a) @ ember.tensor(a.T.copy())).numpy()  # (OpenBLAS's jobs)
    started = native.runtime().ember_started_workers()
    pid = os.fork()
    if pid == 0:
        after = native_k(lib, x, None, None, eps=1e-5)[0]
        again = (ember.tensor(a) @ ember.tensor(a.T.copy())).numpy()
        os._exit(0 if np.array_equal(after, before) and np.array_equal(again, product)
                 else 3)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"started": started, "child": os.waitstatus_to_exitcode(status)}))
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_fork_after_native_kernels_ran(tmp_path):
    out = _run(tmp_path, FORK)
    assert out == {"started": 1, "child": 0}
