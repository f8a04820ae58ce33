"""The launcher's command line and environment, and MPI staying out of `import ember`."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")

from ember.distributed import launch_env, run  # noqa: E402


def test_import_ember_loads_no_mpi():
    code = ("import sys, ember, ember.distributed as d, ember.nn.parallel\n"
            "assert d.is_available() and not d.is_initialized()\n"
            "print('mpi4py.MPI' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "False\n"


def test_several_nodes_start_from_node_zero_over_the_hostfile():
    cmd = run.mpiexec_command(8, per_node=4, hostfile="hosts", env={"MASTER_PORT": "1234"})
    assert cmd[1:3] == ["-n", "8"]
    assert "hosts" in cmd and any("MASTER_PORT" in c for c in cmd)
    if "--map-by" in cmd:  # Open MPI: four per node, oversubscription allowed
        assert cmd[cmd.index("--map-by") + 1] == "ppr:4:node:OVERSUBSCRIBE"


def test_other_nodes_have_nothing_to_start(capsys):
    assert run.main(["--nnodes", "2", "--node-rank", "1", "--hostfile", "h", "t.py"]) == 0
    assert "nothing to do here" in capsys.readouterr().out


def test_several_nodes_need_a_hostfile():
    with pytest.raises(SystemExit):
        run.parse_args(["--nnodes", "2", "train.py"])


def test_rank_variables_follow_torchrun_from_the_mpi_launchers():
    env = {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "3"}
    launch_env.export_ranks(env)
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"],
            env["GROUP_RANK"]) == ("5", "8", "1", "4", "1")
    env = {"PMI_RANK": "2", "PMI_SIZE": "3"}  # MPICH, one node
    launch_env.export_ranks(env)
    assert (env["RANK"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"]) == ("2", "2", "3")
