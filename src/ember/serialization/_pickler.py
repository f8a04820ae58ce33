"""Writing `data.pkl` as `torch.save` does: pickle protocol 2, opcodes emitted directly.

ember cannot use Python's `pickle.Pickler` to name PyTorch's globals
(`torch._utils._rebuild_tensor_v2`, `torch.FloatStorage` ...) without importing
torch, so it writes the opcodes itself. Tensors become calls to PyTorch's rebuild
functions over persistent storage ids; everything else in a state_dict (dicts,
OrderedDicts with `_metadata`, lists, tuples, numbers, strings, bytes, sets,
dtypes, sizes, devices) is written the way `pickle` writes it at protocol 2, using
only globals that `torch.load(weights_only=True)` accepts. Other objects (NumPy arrays
and scalars, frozensets, `argparse.Namespace` ...) fall back to their `__reduce_ex__`,
as pickle does, so torch.save and ember.save write the same file; loading those needs
`weights_only=False` in torch, an allowlist in both.
"""

from __future__ import annotations

import _compat_pickle
import copyreg
import pickle
import struct
import types
from collections import Counter, OrderedDict


class StorageRecord:
    """One storage to be written as `data/<key>`: its bytes, dtype and location."""

    __slots__ = ("key", "storage", "dtype", "location", "numel", "untyped")

    def __init__(self, key, storage, dtype, location, numel, untyped) -> None:
        self.key = key
        self.storage = storage
        self.dtype = dtype
        self.location = location
        self.numel = numel
        self.untyped = untyped


class Pickler:
    """Serialise one object graph; `storages` lists what the tensors reference."""

    def __init__(self, protocol: int, describe_tensor, storage_class_name) -> None:
        self.protocol = protocol
        self.parts: list[bytes] = []
        self.memo: dict[int, tuple[int, object]] = {}
        self.globals_memo: dict[tuple[str, str], int] = {}
        self.n_memo = 0  # next memo index
        self.storages: dict[int, StorageRecord] = {}
        self.describe_tensor = describe_tensor  # tensor -> dict (see serialization)
        self.storage_class_name = storage_class_name

    def dump(self, obj) -> bytes:
        self.parts.append(b"\x80" + bytes([self.protocol]))
        self.save(obj)
        self.parts.append(b".")
        return b"".join(self.parts)

    # -- primitives ----------------------------------------------------------------

    def w(self, b: bytes) -> None:
        self.parts.append(b)

    def put(self, obj) -> None:
        i = self.n_memo
        self.n_memo += 1
        self.memo[id(obj)] = (i, obj)
        self.w(b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i))

    def get(self, i: int) -> None:
        self.w(b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i))

    def save_global(self, module: str, name: str) -> None:
        if self.protocol < 3:  # Python 2's names, as pickle writes them (`__builtin__.long`)
            if (module, name) in _compat_pickle.REVERSE_NAME_MAPPING:
                module, name = _compat_pickle.REVERSE_NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.REVERSE_IMPORT_MAPPING:
                module = _compat_pickle.REVERSE_IMPORT_MAPPING[module]
        key = (module, name)
        i = self.globals_memo.get(key)
        if i is not None:
            self.get(i)
            return
        self.w(b"c" + key[0].encode("ascii") + b"\n" + name.encode("ascii") + b"\n")
        i = self.n_memo
        self.n_memo += 1
        self.globals_memo[key] = i
        self.w(b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i))

    def save_int(self, v: int) -> None:
        if 0 <= v < 256:
            self.w(b"K" + bytes([v]))
        elif 0 <= v < 65536:
            self.w(b"M" + struct.pack("<H", v))
        elif -(2**31) <= v < 2**31:
            self.w(b"J" + struct.pack("<i", v))
        else:
            n = (v.bit_length() + 8) // 8
            raw = v.to_bytes(n, "little", signed=True)
            self.w((b"\x8a" + bytes([n]) if n < 256 else b"\x8b" + struct.pack("<i", n)) + raw)

    def save_str(self, s: str, fresh: bool = False) -> None:
        """A string (memoized; `fresh` gives it its own memo slot, never reused)."""
        raw = s.encode("utf-8", "surrogatepass")
        self.w(b"X" + struct.pack("<I", len(raw)) + raw)
        self.put(object() if fresh else s)

    def save_items(self, items, setitems: bool) -> None:
        """APPENDS / SETITEMS in batches of 1000, as pickle writes them."""
        items = list(items)
        for i in range(0, len(items), 1000):
            batch = items[i:i + 1000]
            if len(batch) == 1:
                self.save_seq(batch[0]) if setitems else self.save(batch[0])
                self.w(b"s" if setitems else b"a")
                continue
            self.w(b"(")
            for x in batch:
                self.save_seq(x) if setitems else self.save(x)
            self.w(b"u" if setitems else b"e")

    def save_seq(self, kv) -> None:
        self.save(kv[0])
        self.save(kv[1])

    def save_call(self, module: str, name: str, args: tuple) -> None:
        """GLOBAL, the argument tuple, REDUCE; the caller memoizes the result."""
        self.save_global(module, name)
        self.save_tuple(args)
        self.w(b"R")

    def save_tuple(self, t: tuple) -> None:
        if not t:
            self.w(b")")
            return
        if len(t) <= 3:
            for x in t:
                self.save(x)
            self.w(b"\x85\x86\x87"[len(t) - 1:len(t)])
        else:
            self.w(b"(")
            for x in t:
                self.save(x)
            self.w(b"t")
        self.put(t)

    # -- dispatch ------------------------------------------------------------------

    def save(self, obj) -> None:
        hit = self.memo.get(id(obj))
        if hit is not None and hit[1] is obj:
            self.get(hit[0])
            return
        from .. import _dtype as dt
        from .._device import device
        from .._tensor import Size, Tensor

        if obj is None:
            self.w(b"N")
        elif obj is True or obj is False:
            self.w(b"\x88" if obj else b"\x89")
        elif type(obj) is int:
            self.save_int(obj)
        elif type(obj) is float:
            self.w(b"G" + struct.pack(">d", obj))
        elif type(obj) is str:
            self.save_str(obj)
        elif isinstance(obj, Tensor):
            self.save_tensor(obj)
        elif isinstance(obj, Size):
            self.save_call("torch", "Size", (tuple(int(x) for x in obj),))
            self.put(obj)
        elif isinstance(obj, dt.dtype):
            self.save_global("torch", obj.name)
        elif isinstance(obj, device):
            self.save_global("torch", "device")
            self.save_str(str(obj), fresh=True)  # torch.device reduces to a new string
            self.w(b"\x85")
            self.put(object())
            self.w(b"R")
            self.put(obj)
        elif type(obj) is tuple:
            self.save_tuple(obj)
        elif type(obj) is list:
            self.w(b"]")
            self.put(obj)
            self.save_items(obj, setitems=False)
        elif type(obj) is dict:
            self.w(b"}")
            self.put(obj)
            self.save_items(obj.items(), setitems=True)
        elif type(obj) is OrderedDict:
            self.save_call("collections", "OrderedDict", ())
            self.put(obj)
            self.save_items(obj.items(), setitems=True)
            if getattr(obj, "__dict__", None):
                self.save(dict(obj.__dict__))
                self.w(b"b")
        else:
            self.save_other(obj)

    def save_other(self, obj) -> None:
        if isinstance(obj, (bytes, bytearray)):
            text = bytes(obj).decode("latin1")
            if type(obj) is bytes:
                self.save_call("_codecs", "encode", (text, "latin1"))
            else:
                self.save_global("builtins", "bytearray")
                self.save_call("_codecs", "encode", (text, "latin1"))
                self.put(object())
                self.w(b"\x85")
                self.put(object())
                self.w(b"R")
        elif type(obj) is complex:
            self.save_call("builtins", "complex", (obj.real, obj.imag))
        elif type(obj) in (set, frozenset):
            self.save_call("builtins", type(obj).__name__, (list(obj),))
        elif type(obj) is Counter:
            self.save_call("collections", "Counter", (dict(obj),))
        elif isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
            if isinstance(obj, (type, types.FunctionType)):
                # a lambda, a local or a shadowed function cannot be found again by name:
                # Python's own pickler checks that and raises its error (as torch.save does)
                pickle.dumps(obj, 2)
            self.save_global(obj.__module__, obj.__qualname__)
            return
        else:
            self.save_reduce(obj)
            return
        self.put(obj)

    def save_reduce(self, obj) -> None:
        """Any other object, through its `__reduce_ex__` (as `pickle` does)."""
        rv = obj.__reduce_ex__(self.protocol)
        if isinstance(rv, str):
            self.save_global(type(obj).__module__, rv)
            return
        fn, args, *rest = rv
        rest += [None] * (4 - len(rest))
        state, listitems, dictitems = rest[0], rest[1], rest[2]
        if fn is copyreg.__newobj__:
            cls = args[0]
            self.save_global(cls.__module__, cls.__qualname__)
            self.save_tuple(tuple(args[1:]))
            self.w(b"\x81")
        else:
            self.save_global(fn.__module__, fn.__qualname__)
            self.save_tuple(tuple(args))
            self.w(b"R")
        self.put(obj)
        if listitems is not None:
            self.save_items(listitems, setitems=False)
        if dictitems is not None:
            self.save_items(dictitems, setitems=True)
        if state is not None:
            self.save(state)
            self.w(b"b")

    # -- tensors -------------------------------------------------------------------
    # Memoization follows `pickle` exactly (every tuple and REDUCE result gets a memo
    # slot), so ember's data.pkl is byte-identical to torch.save's for the same content.

    def save_tensor(self, t) -> None:
        info = self.describe_tensor(t)
        if info["meta"]:  # no bytes: PyTorch rebuilds meta tensors from metadata alone
            self.save_call("torch._utils", "_rebuild_meta_tensor_no_storage", (
                info["dtype"], tuple(info["size"]), tuple(info["stride"]),
                bool(info["requires_grad"])))
        elif info["parameter"]:
            self.save_global("torch._utils", "_rebuild_parameter")
            self.save_tensor_body(info)
            self.save(bool(info["requires_grad"]))
            self.save_empty_ordered_dict()
            self.w(b"\x87")
            self.put(object())
            self.w(b"R")
        else:
            self.save_tensor_body(info)
        self.put(t)

    def save_empty_ordered_dict(self) -> None:
        self.save_call("collections", "OrderedDict", ())
        self.put(object())

    def save_tensor_body(self, info) -> None:
        rec = self.storage_record(info)
        self.save_global("torch._utils", "_rebuild_tensor_v3" if rec.untyped
                         else "_rebuild_tensor_v2")
        self.w(b"((")
        self.save("storage")
        self.save_global(*self.storage_class_name(rec))
        self.save(rec.key)
        self.save(rec.location)
        self.save_int(rec.numel)
        self.w(b"t")
        self.put(object())
        self.w(b"Q")
        self.save_int(info["offset"])
        self.save_tuple(tuple(info["size"]))
        self.save_tuple(tuple(info["stride"]))
        self.save(bool(info["requires_grad"]) and not info["parameter"])
        self.save_empty_ordered_dict()
        if rec.untyped:
            self.save_global("torch", info["dtype"].name)
        self.w(b"t")
        self.put(object())
        self.w(b"R")
        if info["parameter"]:
            self.put(object())

    def storage_record(self, info) -> StorageRecord:
        storage = info["storage"]
        rec = self.storages.get(id(storage))
        if rec is None:
            rec = StorageRecord(str(len(self.storages)), storage, info["dtype"],
                                info["location"], info["storage_numel"], info["untyped"])
            self.storages[id(storage)] = rec
        elif rec.dtype is not info["dtype"]:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        return rec
