"""MLX's memory functions against MLX 0.32.4 in-process: how active memory grows by the
bytes of evaluated arrays (shared buffers counted once), the limits' setters (defaults,
return values, what their bindings refuse), and the cache that ember does not keep.

ember's sides of the measuring cases run in one fresh child (`_ember_side`,
tests/fresh_process.py's `call_in_child`): ember's active memory walks the live objects,
which takes a second in a test worker's heap and a fraction of that in a child."""

import functools
import os

import numpy as np
import pytest

import ember.mlx.core as mx
from fresh_process import call_in_child, with_server

mlx = pytest.importorskip("mlx.core")


def _grown(m, make) -> tuple:
    """(bytes active memory grew by while `make(m)`'s arrays live, evaluated; bytes it
    grew by after they are dropped)."""
    m.eval(m.zeros(1))  # (any scalar a creation op leaves behind is freed by now)
    m.clear_cache()  # (MLX counts a reused cached buffer at its own, larger, size)
    before = m.get_active_memory()
    keep = make(m)
    m.eval(keep)
    grown = m.get_active_memory() - before
    del keep
    return grown, m.get_active_memory() - before


CASES = {
    "float32": lambda m: m.zeros((256, 1024)),
    "float16": lambda m: m.ones((512, 512), dtype=m.float16),
    "bfloat16": lambda m: m.zeros((1000,), dtype=m.bfloat16),
    "uint32 (a carrier in ember)": lambda m: m.zeros((1000,), dtype=m.uint32),
    "uint16": lambda m: m.zeros((1000,), dtype=m.uint16),
    "bool": lambda m: m.zeros((1000,), dtype=m.bool_),
    "int64": lambda m: m.zeros((1000,), dtype=m.int64),
    "complex64": lambda m: m.zeros((1000,), dtype=m.complex64),
    "from numpy": lambda m: m.array(np.ones(1000, np.float32)),
    "from a list": lambda m: m.array([1.0] * 1000),
    "arange": lambda m: m.arange(1000),
    "a sum": lambda m: m.ones(1000).sum(),
    "a list of arrays": lambda m: [m.ones(100) + i for i in range(3)],
    "a broadcast scalar": lambda m: m.broadcast_to(m.array(1.0), (100, 100)),
    "astype": lambda m: m.ones((64, 64)).astype(m.float16),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_active_memory_grows_by_the_evaluated_bytes(case):
    # (exact byte counts on both sides: MLX's allocator counts each buffer's size)
    assert _ember()["grown"][case] == list(_grown(mlx, CASES[case]))


def _views(m) -> list:
    """Growth after evaluating views of an evaluated base, then after dropping the base
    while a slice of it lives (the slice keeps the whole buffer)."""
    big = m.zeros((256, 1024))
    m.eval(big)
    m.clear_cache()
    before = m.get_active_memory()
    view, flat, t = big[:16], big.reshape(-1), big.T
    m.eval(view, flat, t)
    out = [m.get_active_memory() - before]
    del big, flat, t
    out.append(m.get_active_memory() - before)
    del view
    out.append(m.get_active_memory() - before)
    return out


def test_views_share_their_base_buffer():
    assert _ember()["views"] == _views(mlx) == [0, 0, -1048576]


def _writes(m) -> list:
    x = m.ones(1000)
    m.eval(x)
    m.clear_cache()
    before = m.get_active_memory()
    x[0] = 5
    m.eval(x)
    out = [m.get_active_memory() - before]
    x += 1
    m.eval(x)
    out.append(m.get_active_memory() - before)
    return out


def test_in_place_updates_replace_the_buffer():
    assert _ember()["writes"] == _writes(mlx) == [0, 0]


def _peak_and_cache(m) -> list:
    keep = m.ones((128, 128))
    m.eval(keep)
    out = [m.get_peak_memory() >= m.get_active_memory() >= keep.nbytes]
    m.clear_cache()
    out += [m.get_cache_memory(), m.reset_peak_memory(), m.clear_cache(),
            type(m.get_peak_memory()).__name__]
    return out


def test_peak_and_cache():
    assert _ember()["peak and cache"] == _peak_and_cache(mlx) == [True, 0, None, None, "int"]


def test_limit_setters_return_the_limit_before():
    for m in (mx, mlx):
        first = m.set_memory_limit(1 << 30)
        assert (m.set_memory_limit(first), m.get_memory_limit()) == (1 << 30, first)
        cache = m.set_cache_limit(1 << 20)
        assert m.set_cache_limit(cache) == 1 << 20
        assert [m.set_wired_limit(v) for v in (5, 1 << 20, 0)] == [0, 0, 0]  # (no wired memory)


def test_default_limits_are_mlx_cpu_allocators():
    # 0.8 of the machine's memory, and a 32 MiB cache (MLX's CommonAllocator), in a fresh
    # process (a child of a server that imported the library: tests/fresh_process.py)
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    script = "import {m} as mx; a = mx.get_memory_limit(); b = mx.set_cache_limit(0); print(a, b)"
    outs = [with_server(name).run_code(script.format(m=name), timeout=120).stdout.split()
            for name in ("ember.mlx.core", "mlx.core")]
    assert outs[0] == outs[1] == [str(int(0.8 * physical)), str(32 << 20)]


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("value", ["-1", "1.5", "True", "np.int64(5)", "2**64", "2**64 - 1",
                                   "'3'", "None", "m.array(3)"])
@pytest.mark.parametrize("name", ["set_memory_limit", "set_cache_limit", "set_wired_limit"])
def test_limit_setters_take_a_size_t(name, value):
    def run(m):
        before = getattr(m, name)(1 << 25)
        try:
            out = _outcome(lambda: getattr(m, name)(eval(value)))
            return out, getattr(m, name)(before)
        finally:
            getattr(m, name)(before)
    assert run(mx) == run(mlx)


@pytest.mark.parametrize("call", [
    "get_active_memory(1)", "get_peak_memory(1)", "get_cache_memory(None)",
    "reset_peak_memory(0)", "clear_cache(1)", "set_memory_limit()", "set_cache_limit(1, 2)",
    "set_wired_limit(lim=1)", "set_wired_limit(limit=1)", "get_active_memory(x=1)",
    "clear_cache(all=True)"])
def test_bindings_refuse_what_they_do_not_take(call):
    assert _outcome(lambda: eval("mx." + call)) == _outcome(lambda: eval("mlx." + call))


def test_limits_by_keyword():
    assert mx.set_memory_limit(limit=mx.get_memory_limit()) == mx.get_memory_limit()


def _peaks(m) -> list:
    base = m.ones((64, 64))
    m.eval(base)
    m.reset_peak_memory()
    out = [m.get_peak_memory(), m.get_active_memory() > 0, m.get_peak_memory()]
    before = m.get_active_memory()
    big = m.zeros((256, 1024))
    m.eval(big)
    active = m.get_active_memory()
    del big
    peak = m.get_peak_memory()
    out += [peak >= active, peak - before >= 1 << 20, m.get_active_memory() == before]
    return out


def test_peak_reads_zero_after_a_reset_until_an_allocation():
    # (ember samples the peak at each memory call: a lower bound of MLX's, which sees every
    # allocation; what both must show is the reset and a bracketed array)
    assert _ember()["peaks"] == _peaks(mlx) == [0, True, 0, True, True, True]


def _ember_side() -> dict:
    """ember's side of every measuring case, in the order a test process would run them."""
    return {"grown": {case: _grown(mx, make) for case, make in sorted(CASES.items())},
            "views": _views(mx), "writes": _writes(mx), "peak and cache": _peak_and_cache(mx),
            "peaks": _peaks(mx)}


@functools.cache
def _ember() -> dict:
    return call_in_child(__file__, "_ember_side")
