"""Devices and streams as MLX's Linux CPU build reports them: one CPU device, streams on
it, and a GPU that is named but refused."""

from __future__ import annotations

import enum
import threading


class DeviceType(enum.Enum):
    cpu = 0
    gpu = 1

    def __repr__(self) -> str:
        return f"DeviceType.{self.name}"

    __str__ = __repr__


cpu = DeviceType.cpu
gpu = DeviceType.gpu


class Device:
    """`mx.Device(mx.cpu, 0)`; equal to its DeviceType."""

    __slots__ = ("type", "index")

    def __init__(self, type: DeviceType, index: int = 0) -> None:  # noqa: A002
        self.type, self.index = type, index

    def __repr__(self) -> str:
        return f"Device({self.type.name}, {self.index})"

    def __eq__(self, other) -> bool:
        if isinstance(other, DeviceType):
            return self.type is other
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


class Stream:
    """A stream of work on a device (ember runs every stream in order on the CPU)."""

    __slots__ = ("device", "index")

    def __init__(self, device: Device, index: int) -> None:
        self.device, self.index = device, index

    def __repr__(self) -> str:
        return f"Stream({self.device!r}, {self.index})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.device, self.index) == (other.device,
                                                                            other.index)

    def __hash__(self) -> int:
        return hash((self.device, self.index))


_CPU = Device(cpu, 0)
_streams = [Stream(_CPU, 0)]
_lock = threading.Lock()


def _as_device(d, who: str) -> Device:
    dev = d if isinstance(d, Device) else Device(d) if isinstance(d, DeviceType) else None
    if dev is None:
        raise TypeError(f"[{who}] Expected a Device or DeviceType, got {type(d).__name__}.")
    if dev.type is gpu:
        raise ValueError(f"[{who}] Cannot set gpu device without gpu backend.")
    return dev


def default_device() -> Device:
    return _CPU


def set_default_device(device) -> None:
    _as_device(device, "set_default_device")


def default_stream(device) -> Stream:
    _as_device(device, "default_stream")
    return _streams[0]


def new_stream(device) -> Stream:
    dev = _as_device(device, "new_stream")
    with _lock:
        s = Stream(dev, len(_streams))
        _streams.append(s)
    return s


def set_default_stream(stream: Stream) -> None:
    _as_device(stream.device, "set_default_stream")


def synchronize(stream: Stream | None = None) -> None:
    """Work runs when it is evaluated, so there is nothing to wait for."""


def check_stream(stream) -> None:
    """Refuse `stream=mx.gpu` as MLX's CPU build does; anything on the CPU is accepted."""
    if stream is None:
        return
    dev = stream.device if isinstance(stream, Stream) else stream
    if dev == gpu or (isinstance(dev, Device) and dev.type is gpu):
        raise ValueError("[default_stream] Cannot get gpu stream without gpu backend.")


class _Backend:
    """`mx.metal` / `mx.cuda`: present, and not available on this build."""

    @staticmethod
    def is_available() -> bool:
        return False


metal = _Backend()
cuda = _Backend()


class _StreamContext:
    def __init__(self, s) -> None:
        check_stream(s)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def stream(s) -> _StreamContext:
    """`with mx.stream(s):` run the block's ops on `s` (the CPU)."""
    return _StreamContext(s)
