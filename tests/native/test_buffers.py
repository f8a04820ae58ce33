"""The runtime's buffer cache (csrc/buffers.c) as NumPy's memory handler: installed when the
native runtime loads, in that context only; freed blocks come back to the next array of
their size, zeroed where NumPy asks for zeros, without page faults; bounded; and safe to
free from another thread or use after fork.

Each case runs in a fresh interpreter: the handler is per context and the cache per
process, so a case must see them from the start."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ember import native

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

PRELUDE = """
import numpy as np
import ember
from ember.native import buffers, kernels

def load():
    kernels.runtime()  # (what the first op with a native kernel does)
"""


def _run(body: str, **env) -> str:
    code = PRELUDE + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_installed_when_the_runtime_loads_in_that_context_only():
    out = _run("""
        import threading
        print(buffers.handler_name())
        import ember.nn.functional as F
        F.conv2d(ember.randn(8, 16, 12, 12), ember.randn(16, 16, 3, 3))  # a native kernel
        print(buffers.handler_name())
        seen = []
        t = threading.Thread(target=lambda: seen.append(buffers.handler_name()))
        t.start(); t.join()
        print(seen[0])
    """)
    assert out.split() == ["default_allocator", "ember_buffers", "default_allocator"]


def test_switched_off_by_the_environment():
    out = _run("""
        load()
        print(buffers.handler_name(), buffers.install())
    """, EMBER_BUFFER_CACHE="0")
    assert out.split() == ["default_allocator", "False"]


def test_a_freed_block_serves_the_next_array_of_its_size_and_zeros_stay_zeros():
    out = _run("""
        load()
        n = 300_000  # 2.4 MB of float64
        a = np.empty(n); a[:] = 7.0; del a
        before = buffers.stats()
        z = np.zeros(n)  # (the same rounded size: the block that held sevens)
        after = buffers.stats()
        print(after["hits"] - before["hits"], before["held"] - after["held"], z.any())
        b = np.ones(1000); del b  # (8 kB: not cached)
        print(buffers.stats()["held"] == after["held"])
    """)
    hits, taken, nonzero, small_skipped = out.split()
    assert hits == "1" and int(taken) >= 300_000 * 8 and nonzero == "False"
    assert small_skipped == "True"


def test_large_arrays_stop_faulting_pages_in():
    """Arrays above glibc's largest mmap threshold (32 MiB) get a fresh mapping from malloc
    each time, faulted in page by page; from the cache they come back mapped. (NumPy's own
    handler asks for huge pages, which fault 512 times fewer but zero as much: switched off
    here so that the count shows the work.)"""
    body = """
        import resource
        np._core.multiarray._set_madvise_hugepage(False)
        load()
        x = np.ones(6_000_000)  # 48 MB
        for _ in range(2):
            y = x * 2.0; del y
        r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            y = x * 2.0; del y
        print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 10)
    """
    cached = float(_run(body))
    plain = float(_run(body, EMBER_BUFFER_CACHE="0"))
    assert plain > 5_000  # (48 MB is 11,700 pages of 4 kB)
    assert cached < plain / 20


def test_resize_keeps_data_and_the_block_is_reused_safely():
    out = _run("""
        load()
        a = np.arange(100_000, dtype=np.float64)
        a.resize(300_000, refcheck=False)  # (realloc: the block keeps a whole-page size)
        a[100_000:] = 1.0
        ok = bool((a[:100_000] == np.arange(100_000)).all())
        del a
        b = np.empty(300_000); b[:] = 3.0  # (may be that block: all of it is writable)
        print(ok, b.sum() == 900_000.0)
    """)
    assert out.split() == ["True", "True"]


def test_the_cache_holds_at_most_its_cap_and_gives_it_back():
    out = _run("""
        load()
        arrays = [np.empty(n) for n in range(17_000_000, 17_000_000 + 5 * 4096, 4096)]
        del arrays  # five blocks of 136 MB: 680 MB, over the 512 MiB cap
        held = buffers.stats()["held"]
        print(held <= 512 << 20, held >= 3 * 136_000_000)
        buffers.release()
        print(buffers.stats()["held"])
    """)
    assert out.split() == ["True", "True", "0"]


def test_freed_in_another_thread_and_used_after_fork():
    out = _run("""
        import multiprocessing as mp, threading
        load()
        arrays = [np.full(50_000 + 1024 * i, float(i)) for i in range(20)]  # (20 sizes)
        t = threading.Thread(target=arrays.clear)  # (each freed by the handler that made it)
        t.start(); t.join()
        held = buffers.stats()["held"]

        def child(q):
            import ember.nn.functional as F
            x, w = ember.ones(4, 8, 10, 10), ember.ones(8, 8, 3, 3)
            q.put(float(F.conv2d(x, w).sum()) + float(np.ones(200_000).sum()))

        q = mp.get_context("fork").Queue()
        p = mp.get_context("fork").Process(target=child, args=(q,))
        p.start(); got = q.get(timeout=120); p.join()
        print(held >= 20 * 400_000, got, p.exitcode)
    """)
    # 4 samples x 8 channels x 8 x 8 outputs, each a sum of 72 ones; and 200,000 ones
    assert out.split() == ["True", str(4 * 8 * 64 * 72 + 200_000.0), "0"]


def test_a_request_takes_a_larger_block_of_up_to_twice_its_size():
    """With no block of its own size, a request takes the smallest cached one of up to twice
    its size (as malloc splits a larger free chunk), and none larger."""
    out = _run("""
        load()
        a = np.empty(125_000); del a  # a 1 MB block (244 pages)
        s0 = buffers.stats()
        b = np.empty(40_000)  # 320 kB: the 1 MB block is more than twice as large
        s1 = buffers.stats()
        c = np.empty(100_000)  # 800 kB: takes it
        s2 = buffers.stats()
        c[:] = 1.0
        print(s1["hits"] - s0["hits"], s2["hits"] - s1["hits"], s2["held"], c.sum())
    """)
    assert out.split() == ["0", "1", "0", "100000.0"]


def test_a_large_zeros_that_misses_the_cache_is_not_touched():
    """np.zeros that the cache cannot serve asks calloc, whose pages the OS zeroes on first
    touch: 2 GB of zeros cost no resident memory until written, as under NumPy's handler."""
    out = _run("""
        import resource
        load()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        z = np.zeros(250_000_000)
        z[::1_000_000] = 1.0  # (one page in 2,000 touched)
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(grown < 100_000, z.sum())  # (ru_maxrss in KiB)
    """)
    assert out.split() == ["True", "250.0"]


def test_a_program_of_numpy_only_ops_gets_it_at_its_first_large_result():
    """Elementwise ops run no native kernel; the first result of a megabyte or more loads
    the runtime and with it the cache, so large temporaries stop faulting pages in."""
    out = _run("""
        a = ember.ones(1000)
        b = a * 2  # (8 kB: nothing yet)
        print(buffers.handler_name())
        x = ember.ones(500_000)  # 2 MB
        y = x * 2
        print(buffers.handler_name())
    """)
    assert out.split() == ["default_allocator", "ember_buffers"]
