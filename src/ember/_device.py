"""Devices: `cpu`, `meta`, `cuda[:N]` and PyTorch's other names, parsed as PyTorch parses them."""

from __future__ import annotations

import sys

# Every device type PyTorch's parser knows, in its order (its error message lists them).
# ember holds tensors on cpu and meta, and on cuda where CuPy finds a GPU; the others
# parse, and creating a tensor there fails as it does in PyTorch's CPU build
# (`ember.backends.refuse_unavailable`).
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
          "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
          "privateuseone")


class device:
    """Where a tensor's storage lives: `ember.device("cpu")`, `device("cuda", 0)`."""

    __slots__ = ("type", "index")

    def __new__(cls, type, index: int | None = None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): an index cannot be given with a device object")
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            from .backends.cuda import is_available

            if not is_available():  # a bare index names the accelerator, and there is none
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or device, got {type.__class__.__name__}")
        if not type:
            raise RuntimeError("Device string must not be empty")
        kind, colon, idx = type.partition(":")
        if colon:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            # digits only, no sign, no leading zero (PyTorch's parser)
            if not (idx.isascii() and idx.isdigit()) or (len(idx) > 1 and idx[0] == "0") \
                    or not kind.isalpha():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        elif not kind.isalpha():
            raise RuntimeError(f"Invalid device string: '{type}'")
        if kind not in _TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_TYPES)} device type at start of device string: "
                + type)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        key = (kind, index)
        cached = _CACHE.get(key)
        if cached is not None:
            return cached
        self = object.__new__(cls)
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "index", index)
        _CACHE[key] = self
        return self

    def __setattr__(self, name, value):
        raise AttributeError("device objects are immutable")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        # NOTE: like PyTorch, a device never equals a string (device("cpu") == "cpu" is False).
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self) -> device:
        """`with device("meta"):` makes factories that are given no device create their
        tensors here (PyTorch's `DeviceContext`); contexts nest and restore on exit."""
        _DEFAULT.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _DEFAULT.pop()


_CACHE: dict = {}
CPU = device("cpu")
META = device("meta")
# The device a factory given none uses: the bottom entry is `set_default_device`'s, the
# others are the `with device(...)` blocks being run, innermost last.
_DEFAULT: list = [CPU]


def default_device() -> device:
    """Where factory functions put a tensor when they are given no device."""
    return _DEFAULT[-1]


# Where a factory call given no device takes the default one: user code and the Python
# layer PyTorch also writes in Python over its factories (module constructors, init).
_TAKES_DEFAULT = ("ember.nn.modules.", "ember.nn.init", "ember.nn.parameter",
                  "ember.nn.utils.init")


def _caller_takes_default() -> bool:
    """NOTE: PyTorch's device context reaches only Python-level factory calls; its kernels
    (C++) and its optimizers (which name the device) make their tensors where they mean
    to. ember's kernels and optimizers are Python, so the first frame above the factory
    machinery (`ember.ops.*`, `ember._*`) decides: user code and module constructors take
    the default device, ember's own ops, functionals and optimizers do not."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (name.startswith("ember.ops.") or name.startswith("ember._")):
            return not name.startswith("ember.") or name.startswith(_TAKES_DEFAULT)
        frame = frame.f_back
    return True


def set_default(d) -> None:
    """Set the bottom of the default-device stack (`set_default_device`; None is the CPU)."""
    _DEFAULT[0] = CPU if d is None else as_device(d)


def as_device(d) -> device:
    """A device from None (the default device: see `default_device`), a string, an int
    (cuda index) or a device."""
    if d is None:
        dev = _DEFAULT[-1]
        return dev if dev is CPU or _caller_takes_default() else CPU
    if type(d) is device:
        return d
    return device(d)
