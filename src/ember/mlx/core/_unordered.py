"""The order in which MLX hands back the keys of a dict that passed through a C++
`std::unordered_map<std::string, ...>` (the arrays and metadata `load` returns, the order
`savez` / `save_gguf` write their entries in).

MLX's Linux build uses libstdc++, whose hash table iterates in an order fixed by the string
hash (MurmurHash2-64 with libstdc++'s seed), the prime bucket counts it grows through, and
the insertion order: a key that opens a new bucket goes to the front of the table's list, a
key joining an existing bucket to the front of that bucket's run, and a rehash rebuilds the
list by reinserting in the old order. `hash_order` replays that, so a program that lists
`mx.load(...)` prints what MLX prints."""

from __future__ import annotations

from collections.abc import Iterable

_MASK = (1 << 64) - 1
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
_SEED = 0xC70F6907

# NOTE: the bucket counts a table reaches when filled one key at a time with no reserve():
# 13 on the first insertion, then the first entry of libstdc++'s prime table at least twice
# the current count whenever the keys would outnumber the buckets (maximum load factor 1).
_BUCKETS = (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933,
            351061, 712697, 1447153, 2938679, 5967347, 12117689, 24607243, 49969847,
            101473717, 206062531, 418451333, 849749479, 1725587117, 3504151727)


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def string_hash(key: str) -> int:
    """libstdc++'s `std::hash<std::string>` of `key`'s UTF-8 bytes (64-bit)."""
    data = key.encode("utf-8", "surrogatepass")
    n = len(data)
    h = (_SEED ^ (n * _MUL)) & _MASK
    whole = n & ~7
    for i in range(0, whole, 8):
        word = int.from_bytes(data[i:i + 8], "little")
        h = ((h ^ ((_shift_mix((word * _MUL) & _MASK) * _MUL) & _MASK)) * _MUL) & _MASK
    if n & 7:
        h = ((h ^ int.from_bytes(data[whole:], "little")) * _MUL) & _MASK
    return _shift_mix((_shift_mix(h) * _MUL) & _MASK)


class _Table:
    """The bucket runs of a libstdc++ table: `runs[b]` holds bucket b's keys in insertion
    order (iteration visits them newest first), `opened` the buckets in the order their
    first key arrived (iteration visits them newest first)."""

    def __init__(self, buckets: int) -> None:
        self.buckets = buckets
        self.runs: dict[int, list[str]] = {}
        self.opened: list[int] = []

    def add(self, key: str, code: int) -> None:
        b = code % self.buckets
        run = self.runs.get(b)
        if run is None:
            self.runs[b] = [key]
            self.opened.append(b)
        else:
            run.append(key)

    def order(self) -> list[str]:
        return [k for b in reversed(self.opened) for k in reversed(self.runs[b])]


def hash_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a libstdc++ `unordered_map` into which `keys` were inserted
    one at a time (a repeated key keeps its first place, as `insert` does)."""
    codes: dict[str, int] = {}
    table = _Table(1)
    for key in keys:
        if key in codes:
            continue
        codes[key] = string_hash(key)
        if len(codes) > table.buckets or len(codes) == 1:
            grown = next((b for b in _BUCKETS if b >= len(codes)), None)
            if grown is None:  # (beyond 3.5e9 keys: not reachable from Python in practice)
                return list(codes)
            old = table.order()
            table = _Table(grown)
            for k in old:
                table.add(k, codes[k])
        table.add(key, codes[key])
    return table.order()


def reorder(d: dict, insertion: Iterable[str] | None = None) -> dict:
    """`d` with its items in the order MLX's unordered_map gives them, the keys inserted
    in the order `insertion` (default: `d`'s own order)."""
    return {k: d[k] for k in hash_order(d if insertion is None else insertion)}
