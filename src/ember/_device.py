"""Devices: `cpu`, `meta`, `cuda[:N]` and PyTorch's other names, parsed as PyTorch parses them."""

from __future__ import annotations

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


_CACHE: dict = {}
CPU = device("cpu")
META = device("meta")


def as_device(d) -> device:
    """A device from None (cpu), a string, an int (cuda index) or a device."""
    if d is None:
        return CPU
    if type(d) is device:
        return d
    return device(d)
