"""Devices and streams against MLX 0.32.4's CPU wheel: device_count, device_info,
is_available, the streams (new, thread-unsafe, thread-local, cleared), their defaults per
thread, and `mx.stream` / StreamContext.

Stream indices count every stream the process has made, so each case runs as one script
in a fresh process (a child forked from a server that imported the library and ran nothing:
tests/fresh_process.py), once with `mx` bound to ember's face and once to MLX; the scripts
record each step's value (its repr) or exception (type and message), and the two records
must be equal.
"""

import os
import textwrap

import pytest

import ember.mlx.core as mx
from fresh_process import with_server

pytest.importorskip("mlx.core")

_RUNNER = """
import os, sys, threading
import numpy as np
import {library} as mx
record = []
def t(f, show=repr):
    try:
        record.append(("ok", show(f())))
    except Exception as e:
        record.append((type(e).__name__, str(e)))
def in_thread(fn):
    th = threading.Thread(target=fn)
    th.start()
    th.join()
# (MLX makes the main thread's default stream at its first op; the scripts begin with one,
# unless they are about that)
{prelude}
{body}
print(repr(record))
sys.stdout.flush()
os._exit(0)  # (MLX's stream threads can abort a normal exit)
"""


def _record(body: str, which: str, prelude: str = "mx.eval(mx.array(1.0) + 1)") -> list:
    library = "mlx.core" if which == "mlx" else "ember.mlx.core"
    script = (_RUNNER.replace("{library}", library).replace("{prelude}", prelude)
              .replace("{body}", textwrap.dedent(body)))
    run = with_server(library, {**os.environ, "PYTHONHASHSEED": "0"}).run_code(script,
                                                                             timeout=120)
    assert run.returncode == 0, run.stderr
    return eval(run.stdout)  # noqa: S307  (the repr of a list of string pairs)


def _same(body: str, **prelude) -> None:
    ember_record = _record(body, "ember", **prelude)
    assert ember_record == _record(body, "mlx", **prelude)
    assert ember_record  # (a script that recorded nothing compares nothing)


def test_devices():
    _same("""
        for f in ["device_count", "is_available", "device_info"]:
            for arg in ["mx.cpu", "mx.gpu", "mx.Device(mx.cpu)", "mx.Device(mx.cpu, 1)",
                        "mx.Device(mx.cpu, -1)", "mx.Device(mx.gpu, 0)", "0", "1", "5", "-1",
                        "True", "1.0", "'cpu'", "None", ""]:
                t(lambda: eval(f"mx.{f}({arg})"))
        t(lambda: mx.device_count(device_type=mx.cpu))
        t(lambda: mx.device_info(d=mx.cpu))
        t(lambda: mx.is_available(device=mx.cpu))
        t(lambda: mx.device_info() is mx.device_info())
        t(lambda: type(mx.device_info()["device_name"]))
    """)


def test_new_streams_and_their_indices():
    _same("""
        t(lambda: mx.default_stream(mx.cpu))
        t(lambda: mx.new_stream(mx.cpu))
        t(lambda: mx.new_thread_unsafe_stream(mx.cpu))
        t(lambda: mx.new_thread_unsafe_stream(mx.Device(mx.cpu)))
        t(lambda: mx.new_thread_unsafe_stream(mx.gpu))  # (refused, after taking an index)
        t(lambda: mx.new_stream(mx.gpu))
        t(lambda: mx.new_stream(mx.cpu))
        t(lambda: mx.new_stream(0))
        t(lambda: mx.new_stream(mx.Device(mx.cpu, 1)))
        for f in ["new_stream", "new_thread_unsafe_stream", "new_thread_local_stream",
                  "default_stream"]:
            for arg in ["None", "'cpu'", "", "mx.cpu, 1", "device=mx.cpu"]:
                t(lambda: eval(f"mx.{f}({arg})"))
        t(lambda: mx.default_stream(mx.Device(mx.cpu, 1)))
        t(lambda: mx.default_stream(mx.Device(mx.cpu, -1)))
        t(lambda: mx.default_stream(mx.Device(mx.gpu, 3)))
    """)


def test_thread_local_streams():
    _same("""
        tl = mx.new_thread_local_stream(mx.cpu)
        t(lambda: tl)
        t(lambda: (str(tl), tl.device, type(tl.device).__name__, type(tl).__name__))
        t(lambda: repr(mx.ThreadLocalStream))
        t(lambda: mx.new_thread_local_stream(mx.gpu))  # (accepted until it is used)
        t(lambda: mx.new_thread_local_stream(mx.Device(mx.cpu, 2)))
        t(lambda: [tl == tl, tl != tl, tl == 1, tl == mx.new_thread_local_stream(mx.cpu)])
        t(lambda: tl == mx.default_stream(mx.cpu))
        t(lambda: {tl: 1}[tl])
        t(lambda: isinstance(tl, mx.Stream))
        t(lambda: mx.ThreadLocalStream())
        t(lambda: mx.ThreadLocalStream(mx.cpu))
        t(lambda: mx.add(mx.array(1), mx.array(2), stream=tl))  # (makes this thread's stream)
        t(lambda: mx.new_stream(mx.cpu))
        with mx.stream(tl) as entered:
            t(lambda: entered)
            t(lambda: mx.default_stream(mx.cpu))
        t(lambda: mx.default_stream(mx.cpu))
        t(lambda: mx.set_default_stream(tl))

        def other():
            t(lambda: mx.default_stream(mx.cpu))
            t(lambda: mx.add(mx.array(1), mx.array(2), stream=tl))
            with mx.stream(tl):
                t(lambda: mx.default_stream(mx.cpu))

        in_thread(other)
        gpu_tl = mx.new_thread_local_stream(mx.gpu)
        t(lambda: mx.stream(gpu_tl).__enter__())
        t(lambda: mx.add(mx.array(1), 2, stream=gpu_tl))
        t(lambda: mx.new_stream(mx.cpu))  # (each refusal above took an index)
    """)


def test_streams_belong_to_their_thread_and_clear_streams_forgets_them():
    _same("""
        s1 = mx.new_stream(mx.cpu)
        s2 = mx.new_thread_unsafe_stream(mx.cpu)

        def other():
            t(lambda: mx.default_stream(mx.cpu))  # (a thread's own default)
            t(lambda: mx.new_stream(mx.cpu))
            t(lambda: mx.add(mx.array(1), mx.array(2), stream=s2))
            t(lambda: mx.add(mx.array(1), mx.array(2), stream=s1))
            t(lambda: mx.synchronize(s1))
            with mx.stream(s1):
                t(lambda: mx.default_stream(mx.cpu))

        in_thread(other)
        t(lambda: mx.add(mx.array(1), mx.array(2), stream=s1))
        mx.random.seed(3)
        t(lambda: mx.clear_streams())
        t(lambda: mx.random.state[0].tolist() != [0, 3])  # (the key is reset too)
        t(lambda: mx.clear_streams(1))
        t(lambda: mx.clear_streams(x=1))
        t(lambda: mx.new_stream(mx.cpu))  # (indices go on)
        t(lambda: mx.default_stream(mx.cpu))
        t(lambda: mx.add(mx.array(1), mx.array(2), stream=s1))
        t(lambda: mx.add(mx.array(1), mx.array(2), stream=s2))
        t(lambda: mx.synchronize())
        t(lambda: mx.synchronize(s1))
    """)


def test_defaults_and_stream_contexts():
    _same("""
        s = mx.new_stream(mx.cpu)
        t(lambda: mx.set_default_stream(s))
        t(lambda: (mx.default_stream(mx.cpu), mx.default_device()))
        with mx.stream(mx.cpu):
            t(lambda: mx.default_stream(mx.cpu))
        with mx.stream(mx.new_stream(mx.cpu)):
            t(lambda: mx.set_default_stream(mx.new_stream(mx.cpu)))
            t(lambda: mx.default_stream(mx.cpu))
        t(lambda: mx.default_stream(mx.cpu))  # (the context put its stream back)
        c = mx.stream(mx.gpu)  # (refused on entry, not before)
        t(lambda: type(c).__name__)
        t(lambda: c.__enter__())
        t(lambda: mx.default_device())
        c = mx.stream(mx.Device(mx.cpu, 1))
        t(lambda: c.__enter__())
        t(lambda: mx.default_device())
        t(lambda: c.__exit__(None, None, None))
        t(lambda: c.__exit__())
        t(lambda: c.__exit__(1, 2, 3))
        t(lambda: c.__exit__(ValueError, 2, 3))
        t(lambda: mx.StreamContext(mx.cpu).__enter__(1))
        t(lambda: mx.set_default_device(mx.Device(mx.cpu, 1)))
        t(lambda: (mx.default_device(), mx.default_stream(mx.cpu)))
        t(lambda: mx.set_default_device(mx.cpu))
        for arg in ["mx.gpu", "mx.Device(mx.gpu, 3)", "'x'", ""]:
            t(lambda: eval(f"mx.set_default_device({arg})"))
        for arg in ["mx.cpu", "mx.new_thread_local_stream(mx.cpu)",
                    "mx.new_stream(mx.Device(mx.cpu, 1))"]:
            t(lambda: eval(f"mx.set_default_stream({arg})"))
        for call in ["mx.StreamContext", "mx.stream"]:
            for arg in ["None", "'x'", "", "s=mx.cpu", "mx.cpu"]:
                t(lambda: type(eval(f"{call}({arg})")).__name__)
        t(lambda: repr(mx.StreamContext(mx.cpu))[:28])
        t(lambda: repr(mx.StreamContext))
        for arg in ["mx.gpu", "'x'", "mx.new_thread_local_stream(mx.gpu)",
                    "mx.new_thread_local_stream(mx.cpu)", "mx.Device(mx.cpu)"]:
            t(lambda: eval(f"mx.synchronize({arg})"))
    """)


def test_a_script_that_differs_fails():
    # (the comparison can fail: the two modules have different names)
    with pytest.raises(AssertionError):
        _same("t(lambda: mx.__name__)")


@pytest.mark.parametrize("first", [
    "", "a = mx.array(1.0)", "a = mx.array(np.ones(3))", "k = mx.random.key(0)",
    "mx.random.seed(0)", "a = mx.array(1.0); a.item()", "a = mx.ones(2)",
    "a = mx.array([1, 2]); b = a + a", "a = mx.array(1.0); b = a.reshape(1)",
    "a = mx.random.uniform(shape=(2,))", "a = mx.random.split(mx.random.key(1))",
    "d = mx.default_stream(mx.cpu)", "mx.synchronize()"])
def test_the_default_stream_is_made_by_the_first_op(first):
    """The main thread's default stream takes the next index when an op (or a call naming
    it) first needs it: not at import, nor for an array made from data, a key or a seed."""
    _same("""
        t(lambda: mx.new_stream(mx.cpu))
        t(lambda: mx.default_stream(mx.cpu))
    """, prelude=first)


def test_stream_and_device_constructors():
    _same("""
        for args in ["", "mx.cpu, 0", "mx.Device(mx.cpu), 0"]:
            t(lambda: eval(f"mx.Stream({args})"))
        for args in ["", "0", "1", "2", "mx.cpu, 1.5", "mx.cpu, True", "mx.cpu, 2**31",
                     "mx.cpu, -1", "mx.cpu, index=3", "type=mx.gpu", "mx.cpu, 1, 2",
                     "index=1", "'cpu'"]:
            t(lambda: eval(f"mx.Device({args})"))
        t(lambda: [hasattr(mx.Device(mx.cpu), "index"), hasattr(mx.default_stream(mx.cpu),
                   "index"), hasattr(mx.default_stream(mx.cpu), "device")])
    """)


def test_in_process_state_is_kept_per_thread():
    """What the scripts cannot see from outside: one thread's default does not move
    another's, and a thread-local stream names one stream per thread."""
    import threading

    tl = mx.new_thread_local_stream(mx.cpu)
    here = mx.default_stream(mx.cpu)
    seen = {}

    def other():
        s = mx.new_stream(mx.cpu)
        mx.set_default_stream(s)
        seen["default"] = mx.default_stream(mx.cpu)
        with mx.stream(tl):
            seen["tl"] = mx.default_stream(mx.cpu)

    th = threading.Thread(target=other)
    th.start()
    th.join()
    assert mx.default_stream(mx.cpu) == here != seen["default"]
    with mx.stream(tl):
        assert mx.default_stream(mx.cpu) not in (here, seen["tl"], seen["default"])
    assert mx.default_stream(mx.cpu) == here


def test_getters_give_new_objects_hashed_by_identity():
    """MLX's Device and Stream compare by value and hash by identity, and default_device /
    default_stream give a new object each call: a dict keyed by one misses an equal other."""
    _same("""
        s = mx.default_stream(mx.cpu)
        n = mx.new_stream(mx.cpu)
        d = mx.Device(mx.cpu)
        t(lambda: [mx.default_device() is mx.default_device(), s is mx.default_stream(mx.cpu),
                   s == mx.default_stream(mx.cpu), s.device is s.device])
        t(lambda: [{s: 1}.get(s), {s: 1}.get(mx.default_stream(mx.cpu)), {d: 2}.get(d),
                   {d: 2}.get(mx.Device(mx.cpu)), len({d, mx.Device(mx.cpu, 0), mx.cpu})])
        mx.set_default_stream(n)
        t(lambda: [mx.default_stream(mx.cpu) is n, mx.default_stream(mx.cpu) == n])
        t(lambda: [s == mx.cpu, s == d, d == mx.cpu, mx.cpu == d, mx.Device(mx.gpu) == mx.cpu,
                   d == "cpu", s != 3])
    """)


def test_bindings_without_keywords():
    _same("""
        x = mx.ones(2)
        for call in ["mx.eval(x=1)", "mx.eval(x, stream=mx.cpu)", "mx.async_eval(x, y=2)",
                     "mx.default_device(1)", "mx.default_device(d=mx.cpu)", "mx.eval()",
                     "mx.async_eval()", "mx.eval(1, 'a', None, [2.5, {'k': x}])"]:
            t(lambda: eval(call))
    """)
