"""Devices and streams as MLX's Linux CPU build reports them: one CPU device, streams on
it, and a GPU that is named but refused.

ember runs every op on the CPU, in order, whatever stream it names; what is kept here is
MLX's bookkeeping, so that programs see the streams MLX would give them:

- every stream has a process-wide index, counted from 0 (`new_stream`, a thread's first
  default stream, a thread-local stream's first use on a thread all take the next one;
  a GPU stream takes one too, before it is refused); a thread's default stream is made
  by its first op (or the first call that names it), as in MLX;
- a stream made by `new_stream` belongs to its thread (using it on another raises, as
  MLX's CPU encoders do), `new_thread_unsafe_stream` makes one every thread may use,
  and a `ThreadLocalStream` names a different stream on each thread that uses it;
- each thread has its own default stream; the default device is one for the process;
  `with mx.stream(s):` makes `s` (or the device's default) both for the block;
- `clear_streams` forgets the streams made on the calling thread (and resets its
  random key, as MLX's binding does).
"""

from __future__ import annotations

import enum
import operator
import os
import threading

from ._binding import bad_call


class DeviceType(enum.Enum):
    cpu = 0
    gpu = 1

    def __repr__(self) -> str:
        return f"DeviceType.{self.name}"

    __str__ = __repr__


cpu = DeviceType.cpu
gpu = DeviceType.gpu

_COUNT = {cpu: 1, gpu: 0}  # devices of each type this build has


class Device:
    """`mx.Device(mx.cpu, 0)`; equal to its DeviceType."""

    __slots__ = ("type", "_index")  # (MLX shows `type` alone)

    def __init__(self, *args, **kwargs) -> None:
        try:
            type, index = _device_fields(*args, **kwargs)  # noqa: A001
        except TypeError:
            raise bad_call("__init__", "__init__(self, type: mlx.core.DeviceType, index: int = "
                           "0) -> None", (self, *args), kwargs) from None
        self.type, self._index = type, index

    def __repr__(self) -> str:
        return f"Device({self.type.name}, {self._index})"

    def __eq__(self, other) -> bool:
        if isinstance(other, DeviceType):
            return self.type is other
        return isinstance(other, Device) and (self.type, self._index) == (other.type, other._index)

    # NOTE: MLX's Device and Stream hash by identity while `==` compares values (a dict
    # keyed by one does not find an equal other), and its getters return new objects
    __hash__ = object.__hash__


def _device_fields(type, index=0) -> tuple:  # noqa: A002  (the binding's names)
    """What nanobind takes for `Device(type, index=0)`: a DeviceType (or its value) and a
    C int (anything with `__index__`, not a float); TypeError otherwise."""
    if isinstance(type, int) and not isinstance(type, DeviceType) and type in (0, 1):
        type = DeviceType(int(type))
    if not isinstance(type, DeviceType):
        raise TypeError
    index = operator.index(index)
    if not -(2**31) <= index < 2**31:
        raise TypeError
    return type, index


class Stream:
    """A stream of work on a device (ember runs every stream in order on the CPU). MLX
    gives it no constructor: streams come from `new_stream` / `default_stream`."""

    __slots__ = ("device", "_index")  # (MLX shows `device` alone)

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("mlx.core.Stream: no constructor defined!")

    @classmethod
    def _of(cls, device: Device, index: int) -> Stream:
        s = object.__new__(cls)
        s.device, s._index = device, index
        return s

    def __repr__(self) -> str:
        return f"Stream({self.device!r}, {self._index})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.device, self._index) == (other.device,
                                                                            other._index)

    __hash__ = object.__hash__  # (see Device's)


class ThreadLocalStream:
    """A stream that will be unique per thread and can be used to run operations on a
    given device (`mx.new_thread_local_stream`): each thread that uses it gets a stream of
    its own, made on first use."""

    __slots__ = ("_device", "_index")

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("mlx.core.ThreadLocalStream: no constructor defined!")

    @property
    def device(self) -> Device:
        return self._device

    def __repr__(self) -> str:
        return f"ThreadLocalStream({self._device!r}, {self._index})"

    def __eq__(self, other) -> bool:
        return isinstance(other, ThreadLocalStream) and \
            (self._device, self._index) == (other._device, other._index)

    def __hash__(self) -> int:
        return hash((self._device, self._index))


ThreadLocalStream.__module__ = "mlx.core"

_STREAM_OR_DEVICE = "mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | " \
    "mlx.core.DeviceType"
_NO = object()  # an argument left out (the binding's error lists what was given)


# -- the bookkeeping ------------------------------------------------------------------------

_lock = threading.Lock()
_all: list[Stream] = []  # every stream made, by index
_thread_locals: list[ThreadLocalStream] = []  # every thread-local stream made, by index
_unsafe: set[int] = set()  # streams any thread may use (new_thread_unsafe_stream)
_default_device = [Device(cpu, 0)]


class _Thread(threading.local):
    """One thread's streams: those made on it, its default stream of each device, and the
    stream each ThreadLocalStream names here."""

    def __init__(self) -> None:
        self.own: set[int] = set()
        self.defaults: dict[int, Stream] = {}  # cpu device index -> its default stream
        self.resolved: dict[ThreadLocalStream, Stream] = {}


_thread = _Thread()


def _args(*values) -> tuple:
    return tuple(v for v in values if v is not _NO)


def _device_arg(d, fn: str, signature: str, more: tuple = ()) -> Device:
    """`d` as MLX's binding takes a `Device | DeviceType` (0 and 1 are the types too);
    `more`: the arguments given past it (the binding takes none)."""
    if more:
        raise bad_call(fn, signature, _args(d, *more))
    if isinstance(d, Device):
        return d
    if isinstance(d, DeviceType):
        return Device(d)
    if isinstance(d, int) and d in (0, 1):
        return Device(DeviceType(int(d)))
    raise bad_call(fn, signature, _args(d))


def _is_stream_or_device(s) -> bool:
    return isinstance(s, Stream | ThreadLocalStream | Device | DeviceType)


is_stream_or_device = _is_stream_or_device  # (what a binding's `stream=` takes, or None)


def _new(device: Device, fn: str) -> Stream:
    """The next stream on `device` (a GPU one takes its index, then is refused)."""
    with _lock:
        s = Stream._of(device, len(_all))
        _all.append(s)
    if device.type is gpu:
        raise ValueError(f"[{fn}] Cannot make gpu stream without gpu backend.")
    return s


def _default_slot(d: Device) -> int:
    """The slot of `d`'s default stream (MLX's per-device vector, bounds-checked)."""
    n, count = d._index % 2**64, _COUNT[d.type]
    if n >= count:
        raise IndexError(f"vector::_M_range_check: __n (which is {n}) >= this->size() "
                         f"(which is {count})")
    return n


def _resolve(tls: ThreadLocalStream) -> Stream:
    s = _thread.resolved.get(tls)
    if s is None:
        s = _thread.resolved[tls] = _new(tls.device, "new_stream")
        _thread.own.add(s._index)
    return s


def to_stream(s) -> Stream:
    """The stream a `Stream | ThreadLocalStream | Device | DeviceType` (or None: the
    default device) names on this thread."""
    if isinstance(s, Stream):
        return s
    if isinstance(s, ThreadLocalStream):
        return _resolve(s)
    if s is None:
        return default_stream(_default_device[0])
    return default_stream(s)


# -- devices --------------------------------------------------------------------------------

def default_device(*args, **kwargs) -> Device:
    """The default device (a new object each call, as MLX's binding gives)."""
    if args or kwargs:
        raise bad_call("default_device", "default_device() -> mlx.core.Device", args, kwargs)
    d = _default_device[0]
    return Device(d.type, d._index)


def set_default_device(device=_NO, *more) -> None:
    d = _device_arg(device, "set_default_device",
                    "set_default_device(device: Device | DeviceType) -> None", more)
    if d.type is gpu:
        raise ValueError("[set_default_device] Cannot set gpu device without gpu backend.")
    _default_device[0] = d


def device_count(device_type=_NO, *more) -> int:
    """How many devices of `device_type` there are: one CPU, no GPU."""
    sig = "device_count(device_type: mlx.core.DeviceType) -> int"
    if more:
        raise bad_call("device_count", sig, _args(device_type, *more))
    if isinstance(device_type, DeviceType):
        return _COUNT[device_type]
    if isinstance(device_type, int) and device_type in (0, 1):
        return _COUNT[DeviceType(int(device_type))]
    raise bad_call("device_count", sig, _args(device_type))


def is_available(device=_NO, *more) -> bool:
    """Whether this build can run on `device`: the CPU of index 0 (or below), no GPU."""
    d = _device_arg(device, "is_available", "is_available(device: Device | DeviceType) -> bool",
                    more)
    return d._index < _COUNT[d.type]


def device_info(d=None) -> dict:
    """The CPU's architecture and name (any CPU index reads the one CPU); no GPU, no keys."""
    sig = "device_info(d: None | Device | DeviceType = None) -> dict[str, str | int]"
    dev = _default_device[0] if d is None else _device_arg(d, "device_info", sig)
    if dev.type is gpu:
        return {}
    return {"architecture": _architecture(), "device_name": _cpu_name()}


def _architecture() -> str:
    try:
        return os.uname().machine
    except AttributeError:  # (no uname: Windows)
        return "unknown"


_cpu_names: list[str] = []


def _cpu_name() -> str:
    """The first `model name` of /proc/cpuinfo, as MLX reads it on Linux; elsewhere (or
    without one) the architecture, which is MLX's own fallback."""
    if not _cpu_names:
        name = None
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name") and ": " in line:
                        name = line.rstrip("\n").split(": ", 1)[1]
                        break
        except OSError:
            pass
        _cpu_names.append(name if name is not None else _architecture())
    return _cpu_names[0]


# -- streams --------------------------------------------------------------------------------

def default_stream(device=_NO, *more) -> Stream:
    """This thread's default stream of `device` (made on first use)."""
    d = _device_arg(device, "default_stream", "default_stream(device: Device | DeviceType) "
                    "-> Stream", more)
    if d.type is gpu:
        raise ValueError("[default_stream] Cannot get gpu stream without gpu backend.")
    slot = _default_slot(d)
    s = _thread.defaults.get(slot)
    if s is None:
        s = _thread.defaults[slot] = _new(Device(d.type), "new_stream")
        _thread.own.add(s._index)
    return Stream._of(s.device, s._index)  # (a new object each call, as MLX's)


def set_default_stream(stream=_NO, *more) -> None:
    """Make `stream` this thread's default for its device (the default device stays)."""
    if more or not isinstance(stream, Stream):
        raise bad_call("set_default_stream", "set_default_stream(stream: mlx.core.Stream) -> "
                       "None", _args(stream, *more))
    if stream.device.type is gpu:
        raise ValueError("[set_default_stream] Cannot set gpu stream without gpu backend.")
    _thread.defaults[_default_slot(stream.device)] = stream


def new_stream(device=_NO, *more) -> Stream:
    """A new stream on `device`, for this thread only (another thread using it raises)."""
    d = _device_arg(device, "new_stream", "new_stream(device: Device | DeviceType) -> Stream",
                    more)
    s = _new(d, "new_stream")
    _thread.own.add(s._index)
    return s


def new_thread_unsafe_stream(device=_NO, *more) -> Stream:
    """A new stream on `device` that any thread may use."""
    d = _device_arg(device, "new_thread_unsafe_stream",
                    "new_thread_unsafe_stream(device: Device | DeviceType) -> Stream", more)
    s = _new(d, "new_thread_unsafe_stream")
    _unsafe.add(s._index)
    return s


def new_thread_local_stream(device=_NO, *more) -> ThreadLocalStream:
    """A stream that is a different one on each thread that uses it (made on first use
    there, so a GPU one is refused only then)."""
    d = _device_arg(device, "new_thread_local_stream", "new_thread_local_stream(device: "
                    "Device | DeviceType) -> ThreadLocalStream", more)
    s = object.__new__(ThreadLocalStream)
    with _lock:
        s._device, s._index = d, len(_thread_locals)
        _thread_locals.append(s)
    return s


def clear_streams(*args, **kwargs) -> None:
    """Forget the streams made on this thread (its default stays named, and using it
    raises until another is set, as in MLX), and reset this thread's random key."""
    if args or kwargs:
        raise bad_call("clear_streams", "clear_streams() -> None", args, kwargs)
    _thread.own.clear()
    from . import random as _random  # (random imports this module for check_stream)

    _random._thread.key = None
    # TODO(ember): MLX also drops mx.compile's cache here, so compiled functions trace
    # again; ember's compiled functions keep their traces.


def synchronize(stream=None) -> None:
    """Work runs when it is evaluated, so there is nothing to wait for; the stream named
    is checked (and a ThreadLocalStream made here) as MLX does."""
    if stream is not None and not _is_stream_or_device(stream):
        raise bad_call("synchronize", f"synchronize(stream: {_STREAM_OR_DEVICE} | None = None) "
                       "-> None", (stream,))
    to_stream(stream)


def check_stream(stream) -> bool:
    """Check an op's `stream=`: a GPU is refused as MLX's CPU build does, and a stream
    made on another thread (or cleared) raises as MLX's evaluation would. False where
    `stream` is of a type the binding refuses (its caller raises the binding's TypeError).

    NOTE: MLX raises that when the array is evaluated; ember checks at the call. An op
    on a default stream that `clear_streams` forgot is not checked (it runs)."""
    if stream is None:
        return True
    if not _is_stream_or_device(stream):
        return False
    s = to_stream(stream)
    if s._index not in _thread.own and s._index not in _unsafe:
        raise RuntimeError(f"There is no Stream({s.device.type.name}, {s._index}) in current "
                           "thread.")
    return True


def first_op() -> None:
    """Make this thread's default stream of the default device if it has none yet: MLX
    makes it when an op first needs it (not at import, nor for an array built from data,
    a key or a seed), so a stream made before any op takes the index before it."""
    if not _thread.defaults:
        default_stream(_default_device[0])


class _Backend:
    """`mx.metal` / `mx.cuda`: present, and not available on this build."""

    @staticmethod
    def is_available() -> bool:
        return False


metal = _Backend()
cuda = _Backend()


class StreamContext:
    """A context manager for setting the current device and stream (`mx.stream(s)`): on
    entry, `s` (or the device's default stream) becomes the default stream and its device
    the default device; on exit, the ones before come back."""

    __slots__ = ("_s", "_saved")

    def __init__(self, s=_NO) -> None:
        if not _is_stream_or_device(s):
            raise bad_call("__init__", f"__init__(self, s: {_STREAM_OR_DEVICE}) -> None",
                           _args(self, s))
        self._s, self._saved = s, None

    def __enter__(self, *args) -> None:
        if args:
            raise bad_call("__enter__", "__enter__(self) -> None", (self, *args))
        saved = default_stream(_default_device[0])
        s = to_stream(self._s)
        set_default_device(s.device)
        set_default_stream(s)
        self._saved = saved

    def __exit__(self, exc_type=None, exc_value=None, traceback=None) -> None:
        if exc_type is not None and not isinstance(exc_type, type):
            raise bad_call("__exit__", "__exit__(self, exc_type: type | None = None, exc_value: "
                           "object | None = None, traceback: object | None = None) -> None",
                           (self, exc_type, exc_value, traceback))
        saved, self._saved = self._saved, None
        if saved is not None:
            set_default_device(saved.device)
            set_default_stream(saved)


StreamContext.__module__ = "mlx.core"


def stream(s=_NO) -> StreamContext:
    """`with mx.stream(s):` run the block's ops on `s` (the CPU)."""
    if not _is_stream_or_device(s):
        raise bad_call("stream", f"stream(s: {_STREAM_OR_DEVICE}) -> mlx.core.StreamContext",
                       _args(s))
    return StreamContext(s)
