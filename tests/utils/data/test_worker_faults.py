"""DataLoader worker faults against torch.utils.data: a worker that raises, exits, is killed
or hangs. Same exception types and message shapes as torch; every case is bounded to a few
seconds and leaves no process behind."""

import os
import re
import signal
import sys
import time

import pytest
import torch.utils.data as tdata

import ember.utils.data as edata

BAD_INDEX = 3
HANG_SECONDS = 4  # longer than the 1-second timeout the hang test sets, yet bounded


class Faulty:
    """Eight samples; fetching sample 3 inside a worker process misbehaves as `mode` says.

    The fault only fires in a worker (never in the process that built the dataset), so a
    test can never kill or stall pytest itself.
    """

    def __init__(self, mode: str):
        self.mode = mode
        self.parent = os.getpid()

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == BAD_INDEX and os.getpid() != self.parent:
            if self.mode == "raise":
                raise ValueError(f"bad sample {i}")
            if self.mode == "keyerror":
                raise KeyError(f"no sample {i}")
            if self.mode == "exit":
                sys.exit(3)
            if self.mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.mode == "hang":
                time.sleep(HANG_SECONDS)
        return float(i)


def _fail(data_mod, mode: str, **kw):
    """Iterate a 2-worker loader over Faulty(mode); the exception and the seconds it took.

    Afterwards no worker may be left: ember's must all have been stopped and reaped by the
    loader itself; torch's are shut down here (its iterator keeps them until collected).
    """
    it = iter(data_mod.DataLoader(Faulty(mode), batch_size=2, num_workers=2, **kw))
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        for _ in it:
            pass
    seconds = time.monotonic() - start
    if data_mod is edata:
        assert all(w.exitcode is not None for w in it._workers), "a worker outlived the error"
    else:
        it._shutdown_workers()  # joins them (a "hang" worker wakes within HANG_SECONDS)
        assert all(w.exitcode is not None for w in it._workers)
    return info.value, seconds


@pytest.mark.parametrize("mode,exc_type", [("raise", ValueError), ("keyerror", KeyError)])
def test_worker_exception_is_reraised_with_its_type_and_message(mode, exc_type):
    e_err, seconds = _fail(edata, mode)
    t_err, _ = _fail(tdata, mode)
    assert type(e_err) is type(t_err) is exc_type
    head = re.compile(r"Caught (ValueError|KeyError) in DataLoader worker process \d\.\n"
                      r"Original Traceback \(most recent call last\):\n")
    for err in (e_err, t_err):
        assert head.match(str(err))
        assert f"sample {BAD_INDEX}" in str(err)  # the original message
    assert seconds < 5


def test_worker_killed_by_a_signal():
    e_err, seconds = _fail(edata, "kill")
    t_err, _ = _fail(tdata, "kill")
    assert type(e_err) is type(t_err) is RuntimeError
    shape = re.compile(r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly")
    assert shape.match(str(t_err)) and shape.match(str(e_err))
    assert re.search(r"\(pid \d+\) is killed by signal: Killed\.", str(e_err))
    assert seconds < 5


def test_worker_that_exits_names_its_exit_code():
    # (torch's DataLoader notices an exited worker only after its 5-second status checks,
    # so torch is not run here; the message shape is the one the kill case shows for torch)
    e_err, seconds = _fail(edata, "exit")
    assert type(e_err) is RuntimeError
    msg = str(e_err)
    assert re.match(r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly", msg)
    assert re.search(r"\(pid \d+\) exited unexpectedly with exit code 3\.", msg)
    assert "num_workers=0" in msg  # what to do next
    assert seconds < 5


def test_hung_worker_times_out():
    e_err, seconds = _fail(edata, "hang", timeout=1)
    t_err, _ = _fail(tdata, "hang", timeout=1)
    assert type(e_err) is type(t_err) is RuntimeError
    assert str(e_err) == str(t_err) == "DataLoader timed out after 1 seconds"
    assert seconds < 3  # the stuck worker is terminated, not waited for
