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
import selectors
import subprocess
import sys

import pytest

import ember
from hostile_checkpoints import corpus

CAP = 1 << 30  # bytes of address space for the child
TIMEOUT = 20.0  # seconds per file

_CHILD = r"""
import json, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))
import ember
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
        out["message"] = str(e)[:400]
        out["long_message"] = len(str(e)) > 2000
    out["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out), flush=True)
""".replace("CAP", str(CAP))


def _run_batch(jobs: list) -> dict:
    """Load each (name, path, kwargs) in one capped child; if it dies or hangs on a file,
    record that file's fate and carry on with the rest in a fresh child."""
    results: dict = {}
    pending = list(jobs)
    while pending:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
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
                    results[current] = {"died": code, "stderr": proc.stderr.read()[-2000:]}
                break
            msg = json.loads(line)
            if "start" in msg:
                current = msg["start"]
            elif "name" in msg:
                results[msg["name"]] = msg
                current = None
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
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
    from concurrent.futures import ThreadPoolExecutor

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
    import re

    assert re.search(case.match, got["message"]), f"{name}: message {got['message']!r}"


def test_corpus_is_all_answered(loaded):
    cases, results, marker = loaded
    assert set(results) == set(cases)
    assert not os.path.exists(marker)
    assert results["mem_stride0_huge_view_stays_lazy"]["shape"] == [2**40, 2**8]
