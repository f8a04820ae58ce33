"""ember.load against a generated corpus of hostile and broken checkpoints.

Every file (see tests/hostile_checkpoints.py) is loaded in a child process capped at 1 GiB of
address space with a per-file timeout, so a crash, a hang or a memory blow-up fails one case
instead of taking down the test run. For every file: no payload ran (its marker file does not
exist), the child exited cleanly, its peak RSS stayed under 1 GiB, and the file was refused with
ember's own exception type and a message naming the problem (or, for honest files and lazy
views, loaded).
"""

import io
import json
import os
import re
import selectors
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest

import ember
from hostile_checkpoints import corpus

CAP = 1 << 30  # bytes of address space for the child
TIMEOUT = 20.0  # seconds per file

_CHILD = r"""
import json, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))
import ember

def peak_rss_kib():
    # ru_maxrss survives exec on Linux: it starts at the parent's RSS when the child was
    # forked, so a 2 GiB pytest worker reads as a 2 GiB child. VmHWM belongs to this image.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    name, path, kwargs = json.loads(line)
    print(json.dumps({"start": name}), flush=True)
    out = {"name": name}
    try:
        obj = ember.load(path, **kwargs)
        out["loaded"] = type(obj).__name__
        if isinstance(obj, ember.Tensor):
            out["shape"] = list(obj.shape)
    except BaseException as e:
        out["error"] = type(e).__module__ + "." + type(e).__qualname__
        # (torch's weights-only refusal names the global after its long preamble)
        out["message"] = str(e).split("WeightsUnpickler error: ")[-1][:400]
        out["long_message"] = len(str(e)) > 2000
    out["maxrss_kib"] = peak_rss_kib()
    print(json.dumps(out), flush=True)
""".replace("CAP", str(CAP))


def _run_batch(jobs: list) -> dict:
    """Load each (name, path, kwargs) in one capped child; if it dies or hangs on a file,
    record that file's fate and carry on with the rest in a fresh child."""
    results: dict = {}
    pending = list(jobs)
    while pending:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        err = tempfile.TemporaryFile("w+")  # NOTE: a file, so a chatty child never blocks
        proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        for job in pending:
            proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.close()
        current = None
        while True:
            if not sel.select(TIMEOUT * (2 if current is None else 1)):
                proc.kill()
                proc.wait()
                results[current or pending[0][0]] = {"hung": True}
                break
            line = proc.stdout.readline()
            if not line:
                code = proc.wait()
                if current is not None:
                    err.seek(0)
                    results[current] = {"died": code, "stderr": err.read()[-2000:]}
                break
            msg = json.loads(line)
            if "start" in msg:
                current = msg["start"]
            elif "name" in msg:
                results[msg["name"]] = msg
                current = None
        sel.close()
        proc.stdout.close()
        err.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        pending = [j for j in pending if j[0] not in results]
    return results


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """(cases by name, results by name, marker path): every case loaded once, in two
    children running side by side."""
    root = tmp_path_factory.mktemp("hostile")
    marker = str(root / "PAYLOAD_RAN")
    buf = io.BytesIO()
    ember.save(ember.arange(4.0), buf)
    cases = {c.name: c for c in corpus(marker, buf.getvalue())}
    jobs = []
    for c in cases.values():
        path = root / (c.name + c.suffix)
        path.write_bytes(c.data)
        jobs.append((c.name, str(path), c.kwargs))
    halves = [jobs[0::2], jobs[1::2]]
    with ThreadPoolExecutor(2) as pool:
        results = {}
        for part in pool.map(_run_batch, halves):
            results.update(part)
    return cases, results, marker


def _names():
    return [c.name for c in corpus("/nonexistent/marker", _honest_placeholder())]


def _honest_placeholder() -> bytes:
    buf = io.BytesIO()
    ember.save(ember.arange(4.0), buf)
    return buf.getvalue()


@pytest.mark.parametrize("name", _names())
def test_hostile_checkpoint(loaded, name):
    cases, results, marker = loaded
    case, got = cases[name], results[name]
    assert "hung" not in got, f"{name}: no answer within {TIMEOUT} s"
    assert "died" not in got, f"{name}: the loader crashed (exit {got.get('died')}): " \
        f"{got.get('stderr')}"
    assert not os.path.exists(marker), f"{name}: a payload ran"
    assert got["maxrss_kib"] * 1024 < CAP, f"{name}: peak RSS {got['maxrss_kib']} KiB"
    if case.expect is None:
        assert "error" not in got, f"{name}: {got.get('error')}: {got.get('message')}"
        return
    assert got.get("error") == f"ember.serialization.{case.expect}", \
        f"{name}: expected {case.expect}, got {got.get('error')}: {got.get('message')}"
    assert not got["long_message"], f"{name}: the error message is enormous"
    assert re.search(case.match, got["message"]), f"{name}: message {got['message']!r}"


def test_corpus_is_all_answered(loaded):
    cases, results, marker = loaded
    assert set(results) == set(cases)
    assert not os.path.exists(marker)
    assert results["mem_stride0_huge_view_stays_lazy"]["shape"] == [2**40, 2**8]


# --- one regression test per defect the audit found (each failed on the original loader) -------

def _refused(loaded, name, kind, pattern):
    got = loaded[1][name]
    assert "died" not in got and "hung" not in got, f"{name}: {got}"
    assert got.get("error") == f"ember.serialization.{kind}", f"{name}: {got}"
    assert re.search(pattern, got["message"]), got["message"]


def test_deep_tuples_are_refused_instead_of_crashing_the_interpreter(loaded):
    # A ~400 KB pickle of nested tuples, then hashed (FROZENSET, a dict key, set()):
    # the interpreter's C stack overflowed (SIGSEGV) before nesting was bounded.
    for name in ("nest_tuple_hashed_by_frozenset", "nest_tuple_as_dict_key",
                 "nest_tuple_in_set", "nest_legacy_header"):
        _refused(loaded, name, "UnpicklingError", r"nests containers more than 1000 deep")
    for kind in ("list", "dict", "frozenset", "odict", "list_filled_after_nesting"):
        _refused(loaded, f"nest_{kind}", "UnpicklingError", "deep")


def test_neg_and_conj_views_cannot_allocate_beyond_the_files_budget(loaded):
    # 650 bytes of pickle describing a (2**17, 2**16) stride-0 complex view with the neg
    # bit: materialising it took 64 GiB. Plain stride-0 views stay lazy and load.
    for name in ("mem_stride0_neg", "mem_stride0_conj", "mem_many_neg_views_of_one_storage"):
        _refused(loaded, name, "UnpicklingError", r"materialising the neg/conj bits")
    assert loaded[1]["mem_stride0_huge_view_stays_lazy"]["shape"] == [2**40, 2**8]


def test_records_claiming_more_bytes_than_the_file_holds_are_refused(loaded):
    # A storage record declaring 4 GiB in a file of a few hundred bytes: np.empty(4 GiB)
    # raised a bare MemoryError before the claim was checked against the file.
    _refused(loaded, "mem_lying_storage_record_size", "CheckpointError",
             r"claims 4294967232 bytes .* the file holds only \d+")
    _refused(loaded, "mem_lying_data_pkl_size", "CheckpointError", r"data.pkl. claims")


def test_compressed_data_pkl_is_refused_without_inflating_it(loaded):
    # 2 MB of deflated zeros declaring 2 GiB: inflating it ran out of memory.
    _refused(loaded, "zip_compressed_data_pkl", "CheckpointError", r"data.pkl is compressed")
    _refused(loaded, "zip_compressed_version", "CheckpointError", r"version claims \d+ bytes")


def test_copies_from_the_memo_are_bounded_by_the_file_size(loaded):
    # bytearray() of one memoised 1 MiB blob, 2600 times: 2.5 GiB from a 1 MiB file.
    for name in ("mem_bytearray_from_memo", "mem_encode_from_memo",
                 "mem_set_copies_of_one_list"):
        _refused(loaded, name, "UnpicklingError", r"may build at most 8 bytes per byte")


def test_error_messages_never_repr_hostile_objects(loaded):
    # A list of 64 references to a list of 64 references ... (12 levels) named in an
    # error message: its repr ran until memory was exhausted.
    _refused(loaded, "repr_called_object", "UnpicklingError", r"refusing to call a list")
    _refused(loaded, "repr_storage_key", "UnpicklingError", r"bad storage key a list")
    _refused(loaded, "repr_tensor_metadata", "UnpicklingError", r"metadata \(a dict")
    _refused(loaded, "repr_newobj_class", "UnpicklingError", r"NEWOBJ of a list")
    _refused(loaded, "mem_huge_int_in_message", "UnpicklingError", r"an int of 30001 bits")


def test_module_constructors_never_run_with_sizes_from_the_file(loaded):
    # weights_only=False: REDUCE of ember.nn.Linear(20000, 20000) allocated 1.5 GiB.
    _refused(loaded, "module_constructor_called", "UnpicklingError",
             r"refusing to call the constructor of ember.nn.modules.linear.Linear")
    _refused(loaded, "module_newobj_with_args", "UnpicklingError", r"with arguments")


def test_duplicate_record_names_are_refused(loaded):
    # torch reads the first of two same-named records and zipfile the last.
    _refused(loaded, "zip_duplicate_data_pkl", "CheckpointError",
             r"duplicate records named 'archive/data.pkl'")
    _refused(loaded, "zip_duplicate_storage", "CheckpointError", r"duplicate")


def test_low_level_failures_become_ember_errors(loaded):
    _refused(loaded, "zip_unknown_method", "CheckpointError", r"compression method 99")
    _refused(loaded, "zip_mmap_garbage", "CheckpointError", r"mmap can only be used")
    _refused(loaded, "nest_marks", "UnpicklingError", r"nesting")
