"""Rank 1 fails (`kill`: SIGKILL, `raise`: an uncaught exception) while the others reduce.

Rank 0 waits on an async all-reduce and reports the RuntimeError it gets; any other rank
uses the blocking call, whose watchdog reports the timeout and ends the job.
"""

import datetime
import os
import signal
import sys

import ember
import ember.distributed as dist

how = sys.argv[1]
dist.init_process_group(timeout=datetime.timedelta(seconds=3))
me = dist.get_rank()
dist.barrier()
if me == 1:
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise ValueError("rank 1 gives up")
t = ember.ones(4)
if me == 0:
    work = dist.all_reduce(t, async_op=True)
    try:
        work.wait()
    except RuntimeError as e:
        print(f"rank 0 caught RuntimeError: {e}", flush=True)
        raise
else:
    dist.all_reduce(t)
print(f"rank {me} finished, which it should not have", flush=True)
