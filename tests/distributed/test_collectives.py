"""Collectives on 2 and 4 local processes, each checked against local NumPy inside the program."""

import ast

import pytest

pytest.importorskip("mpi4py")


def _ok_lines(out, n):
    assert out.returncode == 0, out.stdout + out.stderr
    lines = sorted(line for line in out.stdout.splitlines() if " ok " in line)
    assert [line.split(" ok ")[0] for line in lines] == [f"rank {r} of {n}" for r in range(n)]
    return [ast.literal_eval(line.split(" ok ")[1]) for line in lines]


def test_every_collective_on_four_ranks_with_torchrun_environment(launch):
    envs = _ok_lines(launch("collectives.py", 4), 4)
    for r, env in enumerate(envs):
        assert env == {"RANK": str(r), "WORLD_SIZE": "4", "LOCAL_RANK": str(r),
                       "LOCAL_WORLD_SIZE": "4", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": "29500"}


def test_every_collective_on_two_ranks_started_by_plain_mpiexec(mpiexec):
    envs = _ok_lines(mpiexec("collectives.py", 2), 2)
    assert all(env["RANK"] is None for env in envs)  # ranks came from MPI itself
