"""Random state: `Generator`, the default generator, seeding, `fork_rng`.

ember's CPU generator is PyTorch's: a 32-bit Mersenne Twister (MT19937) seeded
with `init_genrand(seed mod 2**32)`, plus one cached double-precision normal
sample. The words come from NumPy's MT19937 in C (large draws read its state in ember's
own C, ops/_rng_native.py: the same words); this module adds only the
bookkeeping PyTorch keeps around it, and reads and writes PyTorch's 5,056-byte
state layout, so `torch.get_rng_state()` blobs load here and continue the same
stream (and the reverse).

State layout (little-endian, as `CPUGeneratorImplState`):

    0     uint64  initial seed
    8     int32   left      (draws until the next twist, plus one)
    12    int32   seeded    (1)
    16    uint64  next      (index of the next state word)
    24    624 x uint64 state words
    5016  3 doubles: normal_x, normal_y (the cached double normal), normal_rho
    5040  int32   cached double normal is valid
    5048  float32 cached float normal, then a bool "valid" (unused by CPU kernels)

The kernels that turn words into numbers live in `ember/ops/_rng_math.py`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import struct

import numpy as np

_STATE_BYTES = 5056
_N = 624
_DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val
_HEAD = struct.Struct("<QiiQ")
_NORMAL_OFF = 24 + 8 * _N
_DOUBLES = struct.Struct("<3di")
_MT_BYTES = 4 * _N + 4  # NumPy's mt19937_state: the 624 words, then the position
_mt_in_place: list = []  # [bool] once checked


def mt_struct_readable() -> bool:
    """Whether a NumPy MT19937 bit generator's state can be read and written in place at
    its `ctypes.state_address`: the struct NumPy's mt19937.h declares (624 words, then an
    int index), checked once against `state` on generators at two positions."""
    if not _mt_in_place:
        ok = True
        try:
            for skip in (0, 700):
                bg = np.random.MT19937(12345)
                bg.random_raw(skip)
                st = bg.state["state"]
                addr = bg.ctypes.state_address
                key = np.ctypeslib.as_array((ctypes.c_uint32 * _N).from_address(addr))
                pos = ctypes.c_int.from_address(addr + 4 * _N).value
                ok = ok and bool((key == st["key"]).all()) and pos == st["pos"]
        except (AttributeError, TypeError, ValueError):
            ok = False
        _mt_in_place.append(ok)
    return _mt_in_place[0]


class Generator:
    """A random stream (PyTorch's CPU generator); `manual_seed` makes draws reproducible.

    >>> g = Generator().manual_seed(0)
    >>> g.initial_seed()
    0
    """

    def __init__(self, device="cpu") -> None:
        from ._device import as_device

        self.device = as_device(device)
        if self.device.type == "cuda":
            from .backends.cuda import is_available

            if not is_available():
                raise RuntimeError(
                    "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its "
                    "backend into two shared libraries: a CPU library and a CUDA library; this "
                    "error has occurred because you are trying to use some CUDA functionality, "
                    "but the CUDA library has not been loaded by the dynamic linker for some "
                    "reason.")
        self._rs = np.random.RandomState()
        self._tail = bytes(8)  # PyTorch's float-normal cache, kept only to round-trip states
        self.manual_seed(_DEFAULT_SEED)

    # -- seeding --------------------------------------------------------------

    def manual_seed(self, seed) -> Generator:
        """Seed the stream; only `seed mod 2**32` reaches the twister, as in PyTorch."""
        seed = _check_generator_seed(seed)
        self._seed = seed
        self._rs.seed(seed & 0xFFFFFFFF)
        self._fresh = True  # PyTorch writes next=0 (not 624) until the first draw
        self._normal = None  # cached double normal sample
        self._tail = bytes(8)
        return self

    def seed(self) -> int:
        """Seed from the OS's entropy source and return the seed used."""
        s = int.from_bytes(os.urandom(8), "little") & (2**63 - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    # -- raw draws ------------------------------------------------------------

    def _words(self, n: int) -> np.ndarray:
        """The next `n` tempered 32-bit words (PyTorch's `random()`), as uint32."""
        if n <= 0:
            return np.empty(0, np.uint32)
        from .ops._rng_native import words

        fast = words(self, n)  # the same words in C, for large draws
        if fast is not None:
            return fast
        self._fresh = False
        return self._rs.randint(0, 2**32, size=n, dtype=np.uint32)

    def _words64(self, n: int) -> np.ndarray:
        """The next `n` 64-bit draws (PyTorch's `random64()`: first word high), as uint64."""
        w = self._words(2 * n).astype(np.uint64)
        hi = w[0::2]
        hi <<= np.uint64(32)
        hi |= w[1::2]
        return hi

    def _floats(self, n: int) -> np.ndarray:
        """`n` float32 uniforms in [0, 1): 24 bits of one word each."""
        from .ops._rng_native import floats

        fast = floats(self, n)  # the same numbers in C, for large draws
        if fast is not None:
            return fast
        w = self._words(n)
        w &= np.uint32(0xFFFFFF)
        out = w.astype(np.float32)
        out *= np.float32(2.0**-24)
        return out

    def _doubles(self, n: int) -> np.ndarray:
        """`n` float64 uniforms in [0, 1): 53 bits of one 64-bit draw each."""
        from .ops._rng_native import doubles

        fast = doubles(self, n)  # the same numbers in C, for large draws
        if fast is not None:
            return fast
        w = self._words(2 * n)
        hi = (w[0::2] & np.uint32(0x1FFFFF)).astype(np.float64)
        hi *= 2.0**-21
        lo = w[1::2].astype(np.float64)
        lo *= 2.0**-53
        hi += lo
        return hi

    # -- state ----------------------------------------------------------------

    def clone_state(self) -> Generator:
        """A new generator in this one's state: its draws repeat this stream's next ones."""
        twin = Generator(self.device)
        twin._load_state_bytes(self._state_bytes())
        return twin

    def get_state(self):
        """The state as a 5,056-byte uint8 tensor in PyTorch's layout."""
        from .ops.creation import from_numpy

        return from_numpy(np.frombuffer(self._state_bytes(), np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from `get_state` (ember's or PyTorch's)."""
        from ._tensor import Tensor

        if isinstance(new_state, Tensor):
            if new_state.dtype.name != "uint8":
                raise TypeError("RNG state must be a torch.ByteTensor")
            raw = np.ascontiguousarray(new_state.detach().numpy()).tobytes()
        elif isinstance(new_state, (bytes, bytearray, memoryview)):
            raw = bytes(new_state)
        else:
            raise TypeError(
                f"expected a torch.ByteTensor, but got {type(new_state).__name__}"
            )
        self._load_state_bytes(raw)
        return self

    def _mark(self):
        """Where the stream stands, for `_rewind` (a kernel that refuses its input after
        drawing puts the stream back where PyTorch's stands): the MT19937 struct copied in
        place where it can be (about 1 us; the 5,056-byte state takes about 35)."""
        if not mt_struct_readable():
            return self._state_bytes()
        bg = self._rs._bit_generator
        buf = ctypes.create_string_buffer(_MT_BYTES)
        with bg.lock:
            ctypes.memmove(buf, bg.ctypes.state_address, _MT_BYTES)
        return buf, self._fresh, self._normal

    def _rewind(self, mark) -> None:
        """Back to a `_mark`."""
        if isinstance(mark, bytes):
            self._load_state_bytes(mark)
            return
        buf, self._fresh, self._normal = mark
        bg = self._rs._bit_generator
        with bg.lock:
            ctypes.memmove(bg.ctypes.state_address, buf, _MT_BYTES)

    def _state_bytes(self) -> bytes:
        _, key, pos = self._rs.get_state()[:3]
        left = 625 - pos if pos > 0 else 1
        nxt = 0 if self._fresh else pos
        buf = bytearray(_STATE_BYTES)
        _HEAD.pack_into(buf, 0, self._seed, left, 1, nxt)
        buf[24:_NORMAL_OFF] = key.astype("<u8").tobytes()
        if self._normal is not None:
            _DOUBLES.pack_into(buf, _NORMAL_OFF, 0.0, self._normal, 0.0, 1)
        buf[5048:5056] = self._tail
        return bytes(buf)

    def _load_state_bytes(self, raw: bytes) -> None:
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state "
                f"size to be {len(raw)}"
            )
        seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
        if seeded != 1 or not 0 < left <= _N or nxt > _N:
            raise RuntimeError("Invalid mt19937 state")
        words = np.frombuffer(raw, "<u8", _N, 24)
        _, normal_y, _, valid = _DOUBLES.unpack_from(raw, _NORMAL_OFF)
        normal = normal_y if valid else None
        # NOTE: ember keeps NumPy's position as `pos = 625 - left` and assumes
        # `next == pos`, which holds for every state PyTorch itself produces.
        self._rs.set_state(("MT19937", (words & 0xFFFFFFFF).astype(np.uint32), 625 - left))
        self._fresh = left == 1 and nxt == 0
        self._seed = seed
        self._normal = normal
        self._tail = bytes(raw[5048:5056])

    # -- pickling (DataLoader workers, deepcopy) -------------------------------

    def __getstate__(self):
        return {"device": str(self.device), "state": self._state_bytes()}

    def __setstate__(self, d) -> None:
        from ._device import as_device

        self.device = as_device(d["device"])
        self._rs = np.random.RandomState()
        self._load_state_bytes(d["state"])

    def __repr__(self) -> str:
        # (PyTorch's Generator is its C extension's class: the default object repr)
        from . import _names

        return f"<{_names.prefix}._C.Generator object at {hex(id(self))}>"


def _check_seed(seed) -> int:
    """A seed as `torch.manual_seed` takes it: anything `int()` takes (its own errors
    propagate), within [-2**63, 2**64), negative ones wrapped to 64 bits."""
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64


def _check_generator_seed(seed) -> int:
    """A seed as `Generator.manual_seed` takes it (PyTorch's C++ parser): a Python int only;
    a NumPy integer is refused with CPython's words, anything else with PyTorch's."""
    if isinstance(seed, np.integer):
        raise TypeError("an integer is required")
    if not isinstance(seed, int) or isinstance(seed, bool):
        t = type(seed)
        name = f"numpy.{t.__name__}" if t.__module__ == "numpy" else t.__name__
        raise RuntimeError(f"manual_seed expected a long, but got {name}")
    return _check_seed(seed)


# --- which of PyTorch's CPU kernels to reproduce -------------------------------

_PROFILES = ("avx2", "default")


def _detect_profile() -> str:
    env = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if env in ("avx2", "avx512", "default"):
        return "default" if env == "default" else "avx2"
    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "x86"):
        return "default"  # NOTE: ARM builds are an untested guess (scalar libm path)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "avx2" if " avx2" in line else "default"
    except OSError:
        pass
    return "avx2"


_profile = [_detect_profile()]


def get_kernel_profile() -> str:
    """Which PyTorch CPU build ember's streams reproduce: 'avx2' or 'default'."""
    return _profile[0]


def set_kernel_profile(name: str) -> None:
    """Reproduce PyTorch's AVX2 kernels ('avx2', the default on x86-64) or its scalar
    build ('default', what `ATEN_CPU_CAPABILITY=default` selects).

    They differ by an ulp in `uniform_` (FMA) and float32 `randn` (SIMD log/sincos
    versus libm); every other function is the same in both.
    """
    if name not in _PROFILES:
        raise ValueError(f"kernel profile must be one of {_PROFILES}, got {name!r}")
    _profile[0] = name


# --- the default generator and module-level functions ----------------------------

default_generator = Generator()


def manual_seed(seed) -> Generator:
    """Seed the default generator and return it."""
    seed = _check_seed(seed)
    return default_generator.manual_seed(seed)  # (no CUDA generators without a GPU)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state (a 5,056-byte uint8 tensor, PyTorch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda"):
    """Run a block with the default generator's state saved and restored on exit."""
    if not enabled:
        yield
        return
    state = default_generator._state_bytes()
    try:
        yield
    finally:
        default_generator._load_state_bytes(state)


__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "fork_rng", "get_kernel_profile", "set_kernel_profile",
]
