"""Fixtures that start a program in tests/distributed/programs on several local processes."""

import os
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


def _launch(program: str, nproc: int, *args: str, timeout: float = 120):
    """Through ember's launcher, as `python -m ember.distributed.run --nproc-per-node N`."""
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc),
           os.path.join(PROGRAMS, program), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env())


def _mpiexec(program: str, nproc: int, *args: str, timeout: float = 120):
    """Straight through mpiexec, so the program learns its rank from MPI alone."""
    cmd = mpiexec_command(nproc) + [sys.executable, os.path.join(PROGRAMS, program), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env())


@pytest.fixture
def launch():
    return _launch


@pytest.fixture
def mpiexec():
    return _mpiexec
