"""The words of PyTorch's C++ argument parser when a call fits none of an op's overloads.

torch's PythonArgParser prints "received an invalid combination of arguments - got (...),
but expected one of:" and the printed overloads. The keywords in "got" come out of a
libstdc++ `std::unordered_map`, so their order is that map's; under an overload whose
printed signature, split at its commas, has as many pieces as the call has arguments, it
adds why that overload failed, reading parameter names off the printed text (so a
keyword-only parameter is "named" by its default, and no keyword ever matches it).
"""

from __future__ import annotations

from .. import _dtype as dt
from .. import _names
from .._device import device as _device_type
from .._layout import layout as _layout_type

__all__ = ["tp_name", "keyword_order", "invalid_combination"]


def tp_name(obj) -> str:
    """What CPython's tp_name, which torch prints, says of obj's type: `numpy.float32` for
    a C type outside builtins, the bare name for a class written in Python (Tensor)."""
    t = type(obj)
    if t in (dt.dtype, _layout_type, _device_type):
        return f"{_names.prefix}.{t.__name__}"
    if t.__module__ == "builtins" or t.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _libstdcxx_hash(key: str) -> int:
    """std::hash<std::string> of libstdc++ (its _Hash_bytes, murmur2 on 64 bits)."""
    mask, mul = (1 << 64) - 1, (0xc6a4a793 << 32) + 0x5bd1e995
    data = key.encode()
    n, aligned = len(data), len(data) & ~7
    h = 0xc70f6907 ^ (n * mul) & mask
    for i in range(0, aligned, 8):
        word = int.from_bytes(data[i:i + 8], "little") * mul & mask
        h = (h ^ ((word ^ (word >> 47)) * mul & mask)) * mul & mask
    if n & 7:
        h = (h ^ int.from_bytes(data[aligned:], "little")) * mul & mask
    h = (h ^ (h >> 47)) * mul & mask
    return h ^ (h >> 47)


def keyword_order(keys) -> list:
    """The order a libstdc++ std::unordered_map of up to 13 keys (13 buckets) iterates
    them: torch's message lists the keywords from one. A key whose bucket is empty goes to
    the front of the list; one whose bucket is taken goes in front of that bucket's first."""
    order, first = [], {}
    for key in keys:
        bucket = _libstdcxx_hash(key) % 13
        order.insert(order.index(first[bucket]) if bucket in first else 0, key)
        first[bucket] = key
    return order


# which printed parameter types take an argument of which printed type
_ACCEPTS = {"Tensor": ("Tensor",), "int": ("int",), "float": ("float", "int"),
            "Number": ("float", "int", "bool"), "bool": ("bool",)}


def _note(signature: str, args: tuple, kwargs: dict) -> str:
    """Why the call missed one printed overload, or "" when torch's parser says nothing."""
    pieces = signature[1:-1].split(", ")
    if len(args) + len(kwargs) != len(pieces):
        return ""
    if kwargs:
        tail = [p.split(" ")[-1] for p in pieces][max(0, len(pieces) - len(kwargs)):]
        wrong = [k for k in keyword_order(kwargs) if k not in tail]
        return ("      didn't match because some of the keywords were incorrect: "
                f"{', '.join(wrong)}\n")
    descs = []
    for arg, piece in zip(args, pieces):
        desc = tp_name(arg)
        descs.append(desc if desc in _ACCEPTS.get(piece.split(" ")[0], ()) else f"!{desc}!")
    return ("      didn't match because some of the arguments have invalid types: "
            f"({', '.join(descs)})\n")


def invalid_combination(name: str, signatures, args: tuple, kwargs: dict) -> TypeError:
    """The TypeError torch raises when `name(*args, **kwargs)` fits none of `signatures`
    (its printed overloads, "(Tensor y, *, int dim = -1)", in torch's order)."""
    got = [tp_name(a) for a in args] + [f"{k}={tp_name(kwargs[k])}" for k in keyword_order(kwargs)]
    listing = "".join(f" * {sig}\n{_note(sig, args, kwargs)}" for sig in signatures)
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected one of:\n{listing}")
