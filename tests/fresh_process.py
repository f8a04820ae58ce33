"""Run programs as fresh interpreters would, without starting one (and importing torch or
ember) per program.

A server process imports the library once and then forks one child per job. The child
starts from the server's state, in which nothing has run yet: its once-per-process
warnings, random generators and caches are as fresh as a new interpreter's, and what it
does (seeds, warnings, `torch.set_*` flags) dies with it. Programs that must see a truly
new interpreter (environment variables read at import, hash seeds, thread pools started at
import) still need `subprocess`; everything else saves the start (about 1 s for torch, half
that for ember, per program on these machines).

    with_server("torch", env).run_path(path)  ->  Result(returncode, stdout, stderr)
    with_server("ember.run", env).run_code(code)
    call_in_child(__file__, "_checks")  ->  what _checks() returned, through JSON

`call_in_child` is for tests whose cost grows with the objects alive (walks of
`gc.get_objects()`, full collections): a test worker holds a million objects or more after
thousands of tests, a child of the server a fraction of that.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The server: set up `lib` once, then for each job (one JSON line on stdin) fork a child
# that runs it with stdout and stderr sent to files, and answer with its exit status.
_SERVER = r"""
import json, os, runpy, signal, sys, traceback
lib = sys.argv[1]
if lib == "torch":
    import torch
    # (a program's first optimizer step imports these: two seconds in every child)
    import torch._dynamo, torch.onnx
elif lib == "ember":
    import ember
elif lib == "ember.run":
    import ember, ember.compat, ember.run
else:
    import importlib; importlib.import_module(lib)
# (what a fork server is for: the imports' objects move to the collector's permanent
# generation, so a child's full collections skip them and its pages stay shared)
import gc; gc.freeze()
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for fd, name in ((1, job["out"]), (2, job["err"])):
                f = os.open(name, os.O_WRONLY | os.O_TRUNC)
                os.dup2(f, fd)
                os.close(f)
            sys.stdin = open(os.devnull)
            signal.alarm(job["timeout"])
            os.chdir(job["cwd"])
            if job.get("path"):
                path = job["path"]
                if lib == "ember.run":
                    ember.run.main([path, *job["args"]])
                else:
                    sys.argv = [path, *job["args"]]
                    sys.path.insert(0, os.path.dirname(path))
                    runpy.run_path(path, run_name="__main__")
            else:
                if lib == "ember.run":
                    ember.compat.install()
                sys.argv = ["-c"]
                exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__"})
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
"""


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


class Server:
    """One server process for one library and environment; jobs run one at a time."""

    def __init__(self, lib: str, env: dict | None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER, lib], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.dir = tempfile.mkdtemp(prefix="ember-fresh-")

    def _job(self, timeout: int, cwd, **job) -> Result:
        out, err = Path(self.dir, "out"), Path(self.dir, "err")
        out.write_text("")
        err.write_text("")
        job.update(out=str(out), err=str(err), timeout=timeout, cwd=str(cwd))
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        status = self.proc.stdout.readline()
        if not status:
            raise RuntimeError("the fresh-process server died")
        return Result(json.loads(status), out.read_text(), err.read_text())

    def run_path(self, path, *args: str, cwd=None, timeout: int = 300) -> Result:
        """`python path args` (or `python -m ember.run path args`) in a fresh child."""
        path = os.path.abspath(path)
        return self._job(timeout, cwd or os.path.dirname(path), path=path, args=list(args))

    def run_code(self, code: str, cwd=None, timeout: int = 300) -> Result:
        """`python -c code` (under ember.run's torch alias for "ember.run") in a fresh child."""
        return self._job(timeout, cwd or os.getcwd(), code=code)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


_servers: dict = {}


def with_server(lib: str, env: dict | None = None) -> Server:
    """The server for `lib` ("torch", "ember", "ember.run") and `env` in this process,
    started on first use and kept until exit."""
    if env is not None:  # (pytest names the running test here: not part of a server's key)
        env = {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}
    key = (lib, tuple(sorted((env or {}).items())))
    if key not in _servers:
        _servers[key] = Server(lib, env)
    return _servers[key]


_CALL = """
import importlib.util, json, sys
sys.path.insert(0, {tests!r})
spec = importlib.util.spec_from_file_location("_in_child", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(getattr(module, {name!r})()))
"""


def call_in_child(path: str, name: str, lib: str = "ember", timeout: int = 300):
    """`name()` of the module at `path` (a test file), called in a fresh child of `lib`'s
    server; its return value through JSON. Fails with the child's traceback if it raised."""
    code = _CALL.format(tests=str(Path(__file__).parent), path=str(path), name=name)
    proc = with_server(lib).run_code(code, timeout=timeout)
    assert proc.returncode == 0, f"{name}() in a child:\n{proc.stderr}"
    return json.loads(proc.stdout.splitlines()[-1])


@atexit.register
def _close_all() -> None:
    for server in _servers.values():
        server.close()
