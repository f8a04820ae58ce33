"""Fixtures that start a program in tests/distributed/programs on several local processes."""

import os
import signal
import subprocess
import sys

import pytest

import ember
from ember.distributed.run import mpiexec_command

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")
SRC = os.path.dirname(os.path.dirname(ember.__file__))


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _run(cmd: list, timeout: float) -> subprocess.CompletedProcess:
    """`cmd` in a session of its own: on timeout the launcher, MPI's daemons and every rank
    are killed together (a rank left behind would hold the pipes open forever)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _launch(program: str, nproc: int, *args: str, timeout: float = 120):
    """Through ember's launcher, as `python -m ember.distributed.run --nproc-per-node N`."""
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc),
           os.path.join(PROGRAMS, program), *args]
    return _run(cmd, timeout)


def _mpiexec(program: str, nproc: int, *args: str, timeout: float = 120):
    """Straight through mpiexec, so the program learns its rank from MPI alone."""
    cmd = mpiexec_command(nproc) + [sys.executable, os.path.join(PROGRAMS, program), *args]
    return _run(cmd, timeout)


@pytest.fixture
def launch():
    return _launch


@pytest.fixture
def mpiexec():
    return _mpiexec
