"""torch.multiprocessing.start_processes / spawn: fn(i, *args) in each process, and the
first failure re-raised in the parent with torch's exception class and words."""

import os
import signal
import sys

import pytest
import torch
import torch.multiprocessing as tmp

import ember
import ember.multiprocessing as emp

LIBS = [(torch, tmp), (ember, emp)]
IDS = ["torch", "ember"]


def _record(rank, table, fail):
    if rank == fail == 1:
        raise ValueError(f"rank {rank} failed")
    if rank == fail == 2:
        sys.exit(3)
    if rank == fail == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    table[rank] = rank + 1


@pytest.mark.parametrize("lib,mp", LIBS, ids=IDS)
def test_every_rank_runs_with_its_index(lib, mp):
    table = lib.zeros(3, dtype=lib.int64).share_memory_()
    assert mp.start_processes(_record, args=(table, -1), nprocs=3, start_method="fork") is None
    assert table.tolist() == [1, 2, 3]
    context = mp.start_processes(_record, args=(table, -1), nprocs=2, join=False,
                                 start_method="fork")
    while not context.join():
        pass
    assert len(context.pids()) == 2 and [p.exitcode for p in context.processes] == [0, 0]


def _failure(mp, fail):
    table = ember.zeros(4).share_memory_() if mp is emp else torch.zeros(4).share_memory_()
    with pytest.raises((mp.ProcessRaisedException, mp.ProcessExitedException)) as info:
        mp.start_processes(_record, args=(table, fail), nprocs=fail + 1, start_method="fork")
    e = info.value
    lines = str(e).strip().splitlines()
    return (type(e).__name__, e.error_index, lines[0], lines[-1],
            getattr(e, "exit_code", None), getattr(e, "signal_name", None))


@pytest.mark.parametrize("fail", [1, 2, 3], ids=["raises", "exits", "killed"])
def test_a_failing_rank_is_reported_as_torch_reports_it(fail):
    assert _failure(emp, fail) == _failure(tmp, fail)


def test_spawn_warns_of_another_start_method_as_torch_does():
    def warned(mp):
        with pytest.warns(FutureWarning) as record:
            mp.spawn(_record, nprocs=0, start_method="fork")
        return str(record[0].message).replace("ember.", "torch.")

    assert warned(emp) == warned(tmp)
