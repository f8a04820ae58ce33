"""`python -m ember.distributed.run`: torchrun's command line, carried out by mpiexec.

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m ember.distributed.run --nnodes 2 --nproc-per-node 4 --hostfile hosts train.py

MPI starts every process of every node from one command, so with several nodes the
launcher on `--node-rank 0` does all the starting (over the hostfile) and the launchers on
other nodes have nothing to do. Each process sees RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT as under torchrun.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys


def mpiexec_path() -> str:
    """The mpiexec next to this interpreter (the pip-installed MPI), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec not found: install the `dist` extra (pip install "
                           "'ember[dist]') or an MPI library")
    return found


def _is_open_mpi(mpiexec: str) -> bool:
    out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True)
    return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout


def mpiexec_command(nprocs: int, *, per_node: int | None = None, hostfile: str | None = None,
                    env: dict | None = None, mpiexec: str | None = None) -> list[str]:
    """The mpiexec argument list that starts `nprocs` processes (more than the cores if
    need be), forwarding `env`; the program and its arguments go after it."""
    mpiexec = mpiexec or mpiexec_path()
    cmd = [mpiexec, "-n", str(nprocs)]
    if _is_open_mpi(mpiexec):
        cmd += ["--map-by", f"ppr:{per_node}:node:OVERSUBSCRIBE" if per_node and hostfile
                else ":OVERSUBSCRIBE", "--enable-recovery"]
        if hostfile:
            cmd += ["--hostfile", hostfile]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")  # containers often run as root
        for k, v in (env or {}).items():
            cmd += ["-x", f"{k}={v}"]
    else:  # MPICH's hydra
        if hostfile:
            cmd += ["-f", hostfile, "-ppn", str(per_node)]
        for k, v in (env or {}).items():
            cmd += ["-genv", k, str(v)]
    return cmd


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Start a training script on several processes "
                                            "through MPI, with torchrun's flags.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--hostfile", help="MPI hostfile listing the nodes (needed with --nnodes > 1)")
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun scripts")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.nproc_per_node < 1 or args.nnodes < 1:
        p.error("--nproc-per-node and --nnodes must be at least 1")
    if args.nnodes > 1 and not args.hostfile:
        p.error("--nnodes > 1 needs --hostfile: MPI starts the other nodes' processes from it")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.node_rank != 0:
        print(f"ember.distributed.run: node {args.node_rank}: with MPI, node 0's launcher "
              "starts the processes of every node listed in its hostfile; nothing to do here")
        return 0
    env = {"MASTER_ADDR": args.master_addr, "MASTER_PORT": str(args.master_port)}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    cmd = mpiexec_command(args.nnodes * args.nproc_per_node, per_node=args.nproc_per_node,
                          hostfile=args.hostfile, env=env)
    target = ["-m", args.script] if args.module else [args.script]
    cmd += [sys.executable, "-m", "ember.distributed.launch_env", *target, *args.script_args]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
