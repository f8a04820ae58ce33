"""A restricted pickle interpreter: data only, no code from the file ever runs.

Python's `pickle` is a stack machine whose GLOBAL / REDUCE / BUILD opcodes import
and call whatever the file names. This interpreter never imports anything: GLOBAL
looks the name up in a table of local stand-ins (`find_global`), REDUCE may call
only what that lookup returned, and every mutating opcode is limited to the
container types a checkpoint needs. Every length read from the file is checked
against the bytes actually present before anything is allocated.

Refused outright: INST, OBJ, NEWOBJ (unless the class was allowlisted by the user),
NEWOBJ_EX, EXT*, PERSID and the other protocol-0 text opcodes, and the protocol-5
out-of-band buffer opcodes.

Bounded: the stack and MARK depth; how deeply containers nest (`_MAX_NESTING`, so no
C-level recursion such as hashing a tuple can overflow the interpreter's stack; a
container's depth is its deepest item's plus one, recorded when it is built or filled,
and the finished object is measured once more, since a list filled after it was nested
deepens its parents too);
and every str/bytes the pickle builds is charged to the load's byte budget (`_limits`).
Low-level failures (recursion, memory, struct) surface as UnpicklingError.
"""

from __future__ import annotations

import pickle
import struct
from collections import Counter, OrderedDict, defaultdict

from ._limits import charge

_MAX_LONG = 4096  # bytes in one LONG4 integer
_MAX_DEPTH = 100_000  # stack entries
_MAX_NESTING = 1000  # containers inside containers


class UnpicklingError(pickle.UnpicklingError):
    """A checkpoint's pickle was refused: it uses something a data-only loader won't run."""


# NOTE: public (and named in tracebacks) as ember.serialization.UnpicklingError.
UnpicklingError.__module__ = "ember.serialization"


_S_I = struct.Struct("<i")
_S_I64 = struct.Struct("<Q")
_S_H = struct.Struct("<H")
_S_F = struct.Struct(">d")
_S_L = struct.Struct("<I")

# Protocol-0/1 and other opcodes this loader never accepts, with the reason.
_REFUSED = {
    b"i": "INST", b"o": "OBJ", b"\x82": "EXT1", b"\x83": "EXT2", b"\x84": "EXT4",
    b"P": "PERSID", b"p": "PUT", b"g": "GET", b"I": "INT", b"L": "LONG", b"F": "FLOAT",
    b"S": "STRING", b"V": "UNICODE", b"\x97": "NEXT_BUFFER", b"\x98": "READONLY_BUFFER",
    b"\x92": "NEWOBJ_EX",
}


class Unpickler:
    """Interpret one pickle from `data` starting at `pos`.

    `find_global(module, name)` returns a stand-in object or raises UnpicklingError;
    `call(fn, args)` performs REDUCE (it must refuse anything it doesn't know);
    `build(obj, state)` performs BUILD; `persistent_load(pid)` resolves BINPERSID;
    `newobj(cls, args)` performs NEWOBJ (refuses by default).
    """

    def __init__(self, data, pos: int, *, find_global, call, build, persistent_load,
                 newobj=None) -> None:
        self.data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self.pos = pos
        self.find_global = find_global
        self.call = call
        self.build = build
        self.persistent_load = persistent_load
        self.newobj = newobj
        self.stack: list = []
        self.metastack: list = []
        self.memo: dict = {}
        self.depth: dict[int, int] = {}  # id -> nesting depth, for containers built here
        self.held: list = []  # keeps those containers alive, so their ids stay theirs

    # -- nesting -------------------------------------------------------------------

    def _depth_of(self, obj) -> int:
        return self.depth.get(id(obj), 0)

    def _deepen(self, obj, d: int) -> None:
        """Record that `obj` now nests `d` deep; refuse beyond `_MAX_NESTING`."""
        if d > _MAX_NESTING:
            raise UnpicklingError(f"pickle nests containers more than {_MAX_NESTING} deep; "
                                  "no checkpoint needs that (hostile or corrupt data)")
        if type(obj) in _ATOMS:
            return
        old = self.depth.get(id(obj))
        if old is None:
            self.held.append(obj)
        elif old >= d:
            return
        self.depth[id(obj)] = d

    def _nesting(self, items) -> int:
        """The depth of a container holding `items`: one more than the deepest of them."""
        d = 1 + max(map(self._depth_of, items), default=0)
        if d > _MAX_NESTING:
            self._deepen(None, d)
        return d

    def _check_depth(self, root) -> None:
        """Refuse a finished object nesting deeper than `_MAX_NESTING` through what this
        pickle built (walked without recursion; an edge back into the current path, a
        cycle, adds nothing)."""
        built = self.depth
        if id(root) not in built:
            return
        done: dict[int, int] = {}
        deepest = {id(root): 0}
        path = [(root, iter(_children(root)))]
        while path:
            obj, items = path[-1]
            child = next(items, _END)
            if child is _END:
                path.pop()
                d = done[id(obj)] = 1 + deepest.pop(id(obj))
                if path:
                    up = id(path[-1][0])
                    deepest[up] = max(deepest[up], d)
                continue
            key = id(child)
            if key not in built or key in deepest:  # not a container from here, or a cycle
                continue
            if key in done:
                deepest[id(obj)] = max(deepest[id(obj)], done[key])
                continue
            if len(path) >= _MAX_NESTING:
                self._deepen(None, _MAX_NESTING + 1)
            deepest[key] = 0
            path.append((child, iter(_children(child))))

    def _holds(self, obj, items) -> None:
        """`obj` contains `items` (checked before anything hashes or stores them)."""
        self._deepen(obj, self._nesting(items))

    # -- reading -------------------------------------------------------------------

    def _read(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise UnpicklingError(
                f"pickle data was truncated: needed {n} bytes at offset {self.pos}, "
                f"{len(self.data) - self.pos} left"
            )
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def _blob(self, n: int) -> bytes:
        """`_read` for the payload of a str/bytes opcode, charged to the load's budget."""
        out = self._read(n)
        if n > 64:
            charge(n, "a string in the pickle")
        return out

    def _line(self) -> bytes:
        end = bytes(self.data[self.pos:self.pos + 512]).find(b"\n")
        if end < 0:
            raise UnpicklingError("pickle data was truncated inside a GLOBAL name")
        return self._read(end + 1)[:-1]

    def _push(self, obj) -> None:
        if len(self.stack) > _MAX_DEPTH:
            raise UnpicklingError("pickle stack grew beyond any checkpoint's needs")
        self.stack.append(obj)

    def _pop(self):
        if not self.stack:
            raise UnpicklingError("pickle stack underflow (corrupt data)")
        return self.stack.pop()

    def _top(self):
        if not self.stack:
            raise UnpicklingError("pickle stack underflow (corrupt data)")
        return self.stack[-1]

    def _pop_mark(self) -> list:
        """The items pushed since the last MARK (MARK starts a fresh stack)."""
        if not self.metastack:
            raise UnpicklingError("pickle MARK missing (corrupt data)")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _memo_get(self, key: int):
        if key not in self.memo:
            raise UnpicklingError(f"pickle memo has no entry {key} (corrupt data)")
        return self.memo[key]

    def _text(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UnpicklingError("pickle string is not valid UTF-8 (corrupt data)") from None

    # -- the loop ---------------------------------------------------------------------

    def load(self):
        """Run to STOP; returns (object, position after STOP)."""
        at = self.pos
        try:
            return self._run()
        except (RecursionError, MemoryError, struct.error, OverflowError) as e:
            raise UnpicklingError(f"the pickle starting at offset {at} is corrupt or hostile: "
                                  f"{type(e).__name__} near offset {self.pos}") from None

    def _run(self):
        while True:
            op = self._read(1)
            if op == b".":
                if len(self.stack) != 1 or self.metastack:
                    raise UnpicklingError("pickle ended with a malformed stack (corrupt data)")
                self._check_depth(self.stack[-1])
                return self.stack.pop(), self.pos
            handler = _DISPATCH.get(op)
            if handler is None:
                name = _REFUSED.get(op)
                if name is not None:
                    raise UnpicklingError(f"refusing pickle opcode {name}: a checkpoint never "
                                          "needs it")
                raise UnpicklingError(f"unknown pickle opcode {op!r} at offset {self.pos - 1}")
            handler(self)

    # -- opcodes -------------------------------------------------------------------------

    def op_proto(self):
        if self._read(1)[0] > 5:
            raise UnpicklingError("unsupported pickle protocol")

    def op_frame(self):
        self._read(8)  # a length hint only

    def op_mark(self):
        if len(self.metastack) > _MAX_DEPTH:
            raise UnpicklingError("pickle nesting grew beyond any checkpoint's needs")
        self.metastack.append(self.stack)
        self.stack = []

    def op_pop(self):
        if self.stack:
            self.stack.pop()
        else:
            self._pop_mark()

    def op_pop_mark(self):
        self._pop_mark()

    def op_dup(self):
        self._push(self._top())

    def op_binput(self):
        self.memo[self._read(1)[0]] = self._top()

    def op_long_binput(self):
        self.memo[_S_L.unpack(self._read(4))[0]] = self._top()

    def op_memoize(self):
        self.memo[len(self.memo)] = self._top()

    def op_binget(self):
        self._push(self._memo_get(self._read(1)[0]))

    def op_long_binget(self):
        self._push(self._memo_get(_S_L.unpack(self._read(4))[0]))

    def op_none(self):
        self._push(None)

    def op_true(self):
        self._push(True)

    def op_false(self):
        self._push(False)

    def op_binint(self):
        self._push(_S_I.unpack(self._read(4))[0])

    def op_binint1(self):
        self._push(self._read(1)[0])

    def op_binint2(self):
        self._push(_S_H.unpack(self._read(2))[0])

    def op_long1(self):
        self._push(int.from_bytes(self._read(self._read(1)[0]), "little", signed=True))

    def op_long4(self):
        n = _S_I.unpack(self._read(4))[0]
        if not 0 <= n <= _MAX_LONG:
            raise UnpicklingError(f"refusing a {n}-byte integer in a pickle")
        self._push(int.from_bytes(self._read(n), "little", signed=True))

    def op_binfloat(self):
        self._push(_S_F.unpack(self._read(8))[0])

    def op_binunicode(self):
        self._push(self._text(self._blob(_S_L.unpack(self._read(4))[0])))

    def op_short_binunicode(self):
        self._push(self._text(self._read(self._read(1)[0])))

    def op_binunicode8(self):
        self._push(self._text(self._blob(_S_I64.unpack(self._read(8))[0])))

    def op_binbytes(self):
        self._push(self._blob(_S_L.unpack(self._read(4))[0]))

    def op_short_binbytes(self):
        self._push(self._read(self._read(1)[0]))

    def op_binbytes8(self):
        self._push(self._blob(_S_I64.unpack(self._read(8))[0]))

    def op_bytearray8(self):
        self._push(bytearray(self._blob(_S_I64.unpack(self._read(8))[0])))

    def op_binstring(self):  # Python 2 str: decoded as latin-1, like torch's encoding
        self._push(self._blob(_S_I.unpack(self._read(4))[0]).decode("latin1"))

    def op_short_binstring(self):
        self._push(self._read(self._read(1)[0]).decode("latin1"))

    def op_empty_list(self):
        self._push([])

    def op_empty_dict(self):
        self._push({})

    def op_empty_tuple(self):
        self._push(())

    def op_empty_set(self):
        self._push(set())

    def op_list(self):
        items = self._pop_mark()
        self._holds(items, items)
        self._push(items)

    def _push_tuple(self, items) -> None:
        t = tuple(items)
        self._holds(t, t)
        self._push(t)

    def op_tuple(self):
        self._push_tuple(self._pop_mark())  # NOTE: pop first (it swaps stacks), then push

    def op_tuple1(self):
        self._push_tuple((self._pop(),))

    def op_tuple2(self):
        b = self._pop()
        self._push_tuple((self._pop(), b))

    def op_tuple3(self):
        c = self._pop()
        b = self._pop()
        self._push_tuple((self._pop(), b, c))

    def op_dict(self):
        items = self._pop_mark()
        if len(items) % 2:
            raise UnpicklingError("DICT with an odd number of items (corrupt data)")
        d = {}
        self._holds(d, items)
        for i in range(0, len(items), 2):
            d[_key(items[i])] = items[i + 1]
        self._push(d)

    def op_frozenset(self):
        items = self._pop_mark()
        d = self._nesting(items)  # NOTE: refuses a too-deep item before hashing it
        fs = frozenset(_key(x) for x in items)
        self._deepen(fs, d)
        self._push(fs)

    def op_append(self):
        value = self._pop()
        self._holds(_as(self._top(), list, "APPEND"), (value,))
        self._top().append(value)

    def op_appends(self):
        items = self._pop_mark()
        self._holds(_as(self._top(), list, "APPENDS"), items)
        self._top().extend(items)

    def op_setitem(self):
        value = self._pop()
        key = self._pop()
        self._holds(_as(self._top(), dict, "SETITEM"), (key, value))
        self._top()[_key(key)] = value

    def op_setitems(self):
        items = self._pop_mark()
        if len(items) % 2:
            raise UnpicklingError("SETITEMS with an odd number of items (corrupt data)")
        d = _as(self._top(), dict, "SETITEMS")
        self._holds(d, items)
        for i in range(0, len(items), 2):
            d[_key(items[i])] = items[i + 1]

    def op_additems(self):
        items = self._pop_mark()
        s = _as(self._top(), set, "ADDITEMS")
        self._holds(s, items)
        for x in items:
            s.add(_key(x))

    def op_global(self):
        module = self._line().decode("ascii", "replace")
        name = self._line().decode("ascii", "replace")
        self._push(self.find_global(module, name))

    def op_stack_global(self):
        name = self._pop()
        module = self._pop()
        if not isinstance(module, str) or not isinstance(name, str):
            raise UnpicklingError("STACK_GLOBAL needs two strings (corrupt data)")
        self._push(self.find_global(module, name))

    def op_reduce(self):
        args = self._pop()
        fn = self._pop()
        if not isinstance(args, tuple):
            raise UnpicklingError("REDUCE arguments must be a tuple (corrupt data)")
        out = self.call(fn, args)
        self._deepen(out, self._depth_of(args))
        self._push(out)

    def op_newobj(self):
        args = self._pop()
        cls = self._pop()
        if self.newobj is None or not isinstance(args, tuple):
            raise UnpicklingError("refusing pickle opcode NEWOBJ: only classes allowlisted "
                                  "with ember.serialization.add_safe_globals may be built")
        out = self.newobj(cls, args)
        self._deepen(out, self._depth_of(args))
        self._push(out)

    def op_build(self):
        state = self._pop()
        self._holds(self._top(), (state,))
        self.build(self._top(), state)

    def op_binpersid(self):
        self._push(self.persistent_load(self._pop()))


def _as(obj, kind, op: str):
    from ._allowlist import _whole_models

    # (a whole-object load fills a defaultdict, an optimizer's state, as pickle does; a
    # weights-only load never does, as torch's)
    if type(obj) is defaultdict and kind is dict and _whole_models[0]:
        return obj
    if type(obj) not in _ALLOWED_TARGETS[kind]:
        raise UnpicklingError(f"refusing {op} on a {type(obj).__name__}: only "
                              f"{kind.__name__} objects may be modified that way")
    return obj


_END = object()


def _children(obj):
    """What a container built by the pickle holds (for `_check_depth`)."""
    if isinstance(obj, (list, tuple, set, frozenset)):
        return obj
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    attrs = getattr(obj, "__dict__", None)
    return list(attrs.values()) if type(attrs) is dict else ()


_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes})
_ALLOWED_TARGETS = {list: (list,), dict: (dict, OrderedDict, Counter), set: (set,)}


def _key(k):
    """Dict keys and set members must be hashable data, not arbitrary objects."""
    try:
        hash(k)
    except TypeError:
        raise UnpicklingError(f"unhashable {type(k).__name__} used as a key (corrupt "
                              "data)") from None
    return k


_DISPATCH = {
    b"\x80": Unpickler.op_proto, b"\x95": Unpickler.op_frame, b"(": Unpickler.op_mark,
    b"0": Unpickler.op_pop, b"1": Unpickler.op_pop_mark, b"2": Unpickler.op_dup,
    b"q": Unpickler.op_binput, b"r": Unpickler.op_long_binput, b"\x94": Unpickler.op_memoize,
    b"h": Unpickler.op_binget, b"j": Unpickler.op_long_binget, b"N": Unpickler.op_none,
    b"\x88": Unpickler.op_true, b"\x89": Unpickler.op_false, b"J": Unpickler.op_binint,
    b"K": Unpickler.op_binint1, b"M": Unpickler.op_binint2, b"\x8a": Unpickler.op_long1,
    b"\x8b": Unpickler.op_long4, b"G": Unpickler.op_binfloat,
    b"X": Unpickler.op_binunicode, b"\x8c": Unpickler.op_short_binunicode,
    b"\x8d": Unpickler.op_binunicode8, b"B": Unpickler.op_binbytes,
    b"C": Unpickler.op_short_binbytes, b"\x8e": Unpickler.op_binbytes8,
    b"\x96": Unpickler.op_bytearray8, b"T": Unpickler.op_binstring,
    b"U": Unpickler.op_short_binstring, b"]": Unpickler.op_empty_list,
    b"}": Unpickler.op_empty_dict, b")": Unpickler.op_empty_tuple,
    b"\x8f": Unpickler.op_empty_set, b"l": Unpickler.op_list, b"t": Unpickler.op_tuple,
    b"\x85": Unpickler.op_tuple1, b"\x86": Unpickler.op_tuple2, b"\x87": Unpickler.op_tuple3,
    b"d": Unpickler.op_dict, b"\x91": Unpickler.op_frozenset, b"a": Unpickler.op_append,
    b"e": Unpickler.op_appends, b"s": Unpickler.op_setitem, b"u": Unpickler.op_setitems,
    b"\x90": Unpickler.op_additems, b"c": Unpickler.op_global,
    b"\x93": Unpickler.op_stack_global, b"R": Unpickler.op_reduce,
    b"\x81": Unpickler.op_newobj, b"b": Unpickler.op_build, b"Q": Unpickler.op_binpersid,
}
