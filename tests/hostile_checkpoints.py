"""A corpus of hostile and broken checkpoint files, generated from pickle opcodes and ZIP
records written by hand (nothing binary is committed).

`corpus(marker)` returns `Case`s: the file's bytes, the `ember.load` keyword arguments to
read it with, and what a safe loader must do with it: raise `expect` (a class name from
ember.serialization) with a message matching `match`, or load (`expect=None`). Payloads that
would run code create the file `marker`, so a test can prove none ran.

Used by tests/serialization/test_hostile.py, which loads every file in a child process under
an address-space cap and a timeout.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

# --- pickle opcodes ----------------------------------------------------------------------------

PROTO2 = b"\x80\x02"
PROTO4 = b"\x80\x04"
MARK, STOP, NONE, TRUE, POP = b"(", b".", b"N", b"\x88", b"0"
TUPLE, TUPLE1, TUPLE2, LIST, DICT = b"t", b"\x85", b"\x86", b"l", b"d"
EMPTY_LIST, EMPTY_DICT, EMPTY_TUPLE = b"]", b"}", b")"
APPEND, APPENDS, SETITEM, SETITEMS, FROZENSET = b"a", b"e", b"s", b"u", b"\x91"
REDUCE, BUILD, NEWOBJ, NEWOBJ_EX, BINPERSID = b"R", b"b", b"\x81", b"\x92", b"Q"


def glob(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def stack_glob(module: str, name: str) -> bytes:
    return text(module) + text(name) + b"\x93"


def text(s: str) -> bytes:
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def num(n: int) -> bytes:
    return b"J" + struct.pack("<i", n)


def long(n: int) -> bytes:
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    if len(raw) < 256:
        return b"\x8a" + bytes([len(raw)]) + raw
    return b"\x8b" + struct.pack("<i", len(raw)) + raw


def put(i: int) -> bytes:
    return b"r" + struct.pack("<I", i)


def get(i: int) -> bytes:
    return b"j" + struct.pack("<I", i)


def call(fn: bytes, *args: bytes) -> bytes:
    return fn + MARK + b"".join(args) + TUPLE + REDUCE


def odict() -> bytes:
    return call(glob("collections", "OrderedDict"))


def storage_pid(key="0", numel=4, cls="FloatStorage", location="cpu") -> bytes:
    return MARK + text("storage") + glob("torch", cls) + text(key) + text(location) + \
        (num(numel) if numel < 2**31 else long(numel)) + TUPLE + BINPERSID


def tensor(pid: bytes, offset: int, size, stride, metadata: bytes | None = None) -> bytes:
    def ints(xs):
        return MARK + b"".join(num(x) if x < 2**31 else long(x) for x in xs) + TUPLE

    extra = (metadata,) if metadata is not None else ()
    return call(glob("torch._utils", "_rebuild_tensor_v2"), pid, num(offset), ints(size),
                ints(stride), b"\x89", odict(), *extra)


def metadata(**flags) -> bytes:
    return EMPTY_DICT + MARK + b"".join(text(k) + (TRUE if v else b"\x89")
                                        for k, v in flags.items()) + SETITEMS


# --- ZIP records written by hand (so sizes, methods and names can lie) --------------------------

@dataclass
class Rec:
    name: str
    payload: bytes  # the bytes stored in the file (already deflated when method == 8)
    method: int = 0
    size: int | None = None  # the uncompressed size to declare (default: len(payload))
    crc: int | None = None


def zip_file(records: list[Rec]) -> bytes:
    out, central = bytearray(), bytearray()
    for r in records:
        size = len(r.payload) if r.size is None else r.size
        crc = zlib.crc32(r.payload) if r.crc is None else r.crc
        name = r.name.encode()
        at = len(out)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, r.method, 0, 0, crc,
                           len(r.payload), size, len(name), 0) + name + r.payload
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, r.method, 0,
                               0, crc, len(r.payload), size, len(name), 0, 0, 0, 0, 0,
                               at) + name
    n = len(records)
    return bytes(out + central + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n, n,
                                             len(central), len(out), 0))


def checkpoint(pkl: bytes, storages: dict | None = None, extra: list[Rec] = ()) -> bytes:
    recs = [Rec("archive/data.pkl", pkl), Rec("archive/version", b"3\n")]
    recs += [Rec(f"archive/data/{k}", v) for k, v in (storages or {}).items()]
    return zip_file(recs + list(extra))


def deflate_zeros(nbytes: int) -> bytes:
    """A raw deflate stream of `nbytes` zeros, built without holding them in memory: each
    16 MiB chunk ends in a full flush, so every chunk compresses to the same bytes."""
    chunk = 16 << 20
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(chunk)) + c.flush(zlib.Z_FULL_FLUSH)
    tail = nbytes % chunk
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return block * (nbytes // chunk) + c.compress(bytes(tail)) + c.flush()


def legacy(main: bytes, keys: bytes = EMPTY_LIST, blobs: bytes = b"",
           sys_info: bytes | None = None) -> bytes:
    """The pre-1.6 stream: magic, protocol, sys_info, object, key list, storage blobs."""
    info = sys_info if sys_info is not None else (
        PROTO2 + EMPTY_DICT + text("little_endian") + TRUE + SETITEM + STOP)
    return (PROTO2 + long(0x1950A86A20F9469CFC6C) + STOP + PROTO2 + num(1001) + STOP + info +
            main + PROTO2 + keys + STOP + blobs)


# --- the corpus ----------------------------------------------------------------------------------

U = "UnpicklingError"
C = "CheckpointError"
FLOATS4 = np.arange(4, dtype=np.float32).tobytes()


@dataclass
class Case:
    name: str
    data: bytes
    expect: str | None  # exception class name, or None: the file loads
    match: str = ""  # regex the message must match
    kwargs: dict = field(default_factory=dict)
    suffix: str = ".pt"


def _code_execution(marker: str) -> list[Case]:
    sh = f"touch {marker}"
    py = f"open({marker!r}, 'w').close()"
    p = PROTO2
    cases = [
        ("os_system", call(glob("os", "system"), text(sh)), "refusing global os.system"),
        ("posix_system", call(glob("posix", "system"), text(sh)), "posix.system"),
        ("nt_system", call(glob("nt", "system"), text(sh)), "nt.system"),
        ("subprocess", call(glob("subprocess", "check_call"),
                            MARK + text("touch") + text(marker) + LIST), "subprocess"),
        ("builtins_eval", call(glob("builtins", "eval"), text(py)), "builtins.eval"),
        ("builtin_eval_py2", call(glob("__builtin__", "eval"), text(py)), "builtins.eval"),
        ("builtins_exec", call(glob("builtins", "exec"), text(py)), "builtins.exec"),
        ("builtins_import", call(glob("builtins", "__import__"), text("os")), "__import__"),
        ("importlib", call(glob("importlib", "import_module"), text("os")), "importlib"),
        ("getattr_chain", call(glob("builtins", "getattr"), call(
            glob("builtins", "__import__"), text("os")), text("system")), "getattr"),
        ("dotted_global", call(glob("collections", "OrderedDict.__init__.__globals__")),
         "Unsupported global: GLOBAL collections.OrderedDict.__init__.__globals__ "),
        ("numpy_reconstruct", call(glob("numpy.core.multiarray", "_reconstruct")), "numpy"),
        ("reduce_storage_class", call(glob("torch", "FloatStorage"), num(4)), "storage class"),
        ("reduce_codecs_other_encoding", call(glob("_codecs", "encode"), text("x"),
                                              text("rot13")), "latin1"),
        ("reduce_bytearray_size", call(glob("builtins", "bytearray"), num(2**30)),
         "bytearray"),
        ("build_setstate_on_odict", odict() + EMPTY_DICT + text("__setstate__") +
         glob("os", "system") + SETITEM + BUILD, "os.system"),
        ("build_on_dict", EMPTY_DICT + EMPTY_DICT + text("update") + num(1) + SETITEM + BUILD,
         "BUILD"),
        ("build_class_swap", odict() + EMPTY_DICT + text("__class__") +
         glob("builtins", "list") + SETITEM + BUILD, "Unsupported global: GLOBAL builtins.list "),
        ("inst", MARK + b"i" + b"os\nsystem\n", "INST"),
        ("obj", MARK + glob("collections", "OrderedDict") + b"o", "OBJ"),
        ("newobj", glob("collections", "OrderedDict") + EMPTY_TUPLE + NEWOBJ, "NEWOBJ"),
        ("newobj_ex", glob("collections", "OrderedDict") + EMPTY_TUPLE + EMPTY_DICT +
         NEWOBJ_EX, "NEWOBJ_EX"),
        ("ext1", b"\x82\x01", "EXT1"),
        ("ext2", b"\x83\x01\x00", "EXT2"),
        ("ext4", b"\x84\x01\x00\x00\x00", "EXT4"),
        ("persid_text", b"P0\n", "PERSID"),
        ("persid_global", glob("os", "system") + BINPERSID, "os.system"),
        ("persid_string", text("os.system") + BINPERSID, "persistent id"),
        ("persid_path_key", storage_pid(key="../../etc/passwd"), "storage key"),
        ("persid_bad_location", storage_pid(location="cpu; touch x"), "storage location"),
        ("persid_storage_called", MARK + text("storage") + glob("os", "system") + text("0") +
         text("cpu") + num(4) + TUPLE + BINPERSID, "os.system"),
        ("protocol0_memo_trick", b"(S'os'\np0\n", "refusing pickle opcode"),
    ]
    out = [Case(f"exec_{n}", checkpoint(p + body + STOP, {"0": FLOATS4}), U, m)
           for n, body, m in cases]
    out.append(Case("exec_stack_global_proto4", checkpoint(
        PROTO4 + call(stack_glob("os", "system"), text(sh)) + STOP), U, "os.system"))
    out.append(Case("exec_legacy_main_object", legacy(
        p + call(glob("os", "system"), text(sh)) + STOP), U, "os.system"))
    out.append(Case("exec_legacy_sys_info", legacy(
        b"", sys_info=p + call(glob("os", "system"), text(sh)) + STOP), U, "os.system"))
    out.append(Case("exec_bare_pickle_not_a_checkpoint",
                    p + call(glob("os", "system"), text(sh)) + STOP, C, "not a PyTorch"))
    return out


def _nesting() -> list[Case]:
    n = 400_000
    deep_tuple = NONE + TUPLE1 * n
    per_level = {  # each pushes a new container holding memo 0, then stores it as memo 0
        "list": EMPTY_LIST + get(0) + APPEND,
        "dict": EMPTY_DICT + text("k") + get(0) + SETITEM,
        "frozenset": MARK + get(0) + FROZENSET,
        "odict": glob("collections", "OrderedDict") + MARK + MARK + text("k") + get(0) +
        TUPLE2 + LIST + TUPLE + REDUCE,
    }
    out = [
        Case("nest_tuple_hashed_by_frozenset", checkpoint(
            PROTO4 + MARK + deep_tuple + FROZENSET + STOP), U, "nest"),
        Case("nest_tuple_as_dict_key", checkpoint(
            PROTO2 + EMPTY_DICT + deep_tuple + NONE + SETITEM + STOP), U, "nest"),
        Case("nest_tuple_in_set", checkpoint(
            PROTO2 + call(glob("builtins", "set"), MARK + deep_tuple + LIST) + STOP), U,
            "nest"),
        Case("nest_marks", checkpoint(PROTO2 + MARK * 300_000 + STOP), U, "nesting"),
        Case("nest_legacy_header", legacy(b"", sys_info=PROTO4 + MARK + deep_tuple +
                                          FROZENSET + STOP), U, "nest"),
    ]
    # Each list is appended to its parent while still empty, so only the finished object
    # shows how deep the chain goes.
    top_down = EMPTY_LIST + put(0) + POP + b"".join(
        get(i - 1) + EMPTY_LIST + put(i) + APPEND + POP for i in range(1, 100_000)) + get(0)
    out.append(Case("nest_list_filled_after_nesting", checkpoint(PROTO2 + top_down + STOP), U,
                    "nests containers more than 1000 deep"))
    for kind, level in per_level.items():
        levels = 100_000 if kind != "odict" else 30_000
        body = NONE + put(0) + POP + (level + put(0) + POP) * levels + get(0)
        out.append(Case(f"nest_{kind}", checkpoint(PROTO4 + body + STOP), U, "nest"))
    return out


def _memory() -> list[Case]:
    mib = 1 << 20
    blob = b"B" + struct.pack("<I", mib) + bytes(mib) + put(0)
    copies = 2600  # 2.5 GiB of bytearrays from one 1 MiB blob
    bytearrays = (PROTO2 + blob + glob("builtins", "bytearray") + put(1) + POP + EMPTY_LIST +
                  MARK + (get(1) + get(0) + TUPLE1 + REDUCE) * copies + APPENDS + STOP)
    text_blob = b"X" + struct.pack("<I", mib) + b"a" * mib + put(0)
    encodes = (PROTO2 + text_blob + EMPTY_LIST + MARK + (
        glob("_codecs", "encode") + get(0) + text("latin1") + TUPLE2 + REDUCE) * copies +
        APPENDS + STOP)
    items = MARK + b"".join(num(i) for i in range(90_000)) + LIST + put(0)
    sets = (PROTO2 + items + EMPTY_LIST + MARK + (
        glob("builtins", "set") + get(0) + TUPLE1 + REDUCE) * 2000 + APPENDS + STOP)
    one = np.ones(1, np.complex64).tobytes()
    pid1 = storage_pid(numel=1, cls="ComplexFloatStorage")
    huge = (2**17, 2**16)  # 2**33 elements of 8 bytes: 64 GiB if materialised
    return [
        Case("mem_bytearray_from_memo", checkpoint(bytearrays), U, "bytes"),
        Case("mem_encode_from_memo", checkpoint(encodes), U, "bytes"),
        Case("mem_set_copies_of_one_list", checkpoint(sets), U, "bytes"),
        Case("mem_stride0_neg", checkpoint(PROTO2 + tensor(pid1, 0, huge, (0, 0), metadata(
            neg=True)) + STOP, {"0": one}), U, "materialis"),
        Case("mem_stride0_conj", checkpoint(PROTO2 + tensor(pid1, 0, huge, (0, 0), metadata(
            conj=True)) + STOP, {"0": one}), U, "materialis"),
        Case("mem_many_neg_views_of_one_storage", checkpoint(
            PROTO2 + storage_pid(numel=2**18, cls="ComplexFloatStorage") + put(0) + EMPTY_LIST +
            MARK + tensor(get(0), 0, (2**18,), (1,), metadata(neg=True)) * 2000 + APPENDS +
            STOP, {"0": bytes(8 * 2**18)}), U, "materialis"),
        Case("mem_stride0_huge_view_stays_lazy", checkpoint(
            PROTO2 + tensor(pid1, 0, (2**40, 2**8), (0, 0)) + STOP, {"0": one}), None),
        Case("mem_lying_storage_record_size", checkpoint(
            PROTO2 + tensor(storage_pid(numel=2**30 - 16), 0, (4,), (1,)) + STOP,
            extra=[Rec("archive/data/0", FLOATS4, size=2**32 - 64)]), C, "record"),
        Case("mem_lying_data_pkl_size", zip_file([
            Rec("archive/data.pkl", PROTO2 + NONE + STOP, size=2**31 - 1),
            Rec("archive/version", b"3\n")]), C, "data.pkl"),
        Case("mem_storage_numel_beyond_record", checkpoint(
            PROTO2 + tensor(storage_pid(numel=2**40), 0, (4,), (1,)) + STOP, {"0": FLOATS4}),
            U, "claims"),
        Case("mem_huge_binunicode8", checkpoint(
            PROTO2 + b"\x8d" + struct.pack("<Q", 2**62) + b"abc" + STOP), U, "truncated"),
        Case("mem_huge_long4", checkpoint(
            PROTO2 + b"\x8b" + struct.pack("<i", 2**30) + STOP), U, "integer"),
        Case("mem_huge_meta_tensor", checkpoint(PROTO2 + call(
            glob("torch._utils", "_rebuild_meta_tensor_no_storage"), glob("torch", "float32"),
            MARK + num(2**30) + num(2**30) + TUPLE, MARK + num(2**30) + num(1) + TUPLE,
            b"\x89") + STOP), None),
        Case("mem_huge_int_in_message", checkpoint(PROTO2 + tensor(
            storage_pid(), 0, (2**30000,), (1,)) + STOP, {"0": FLOATS4}), U, "size"),
    ]


def _repr_bombs() -> list[Case]:
    # A list of 64 references to a list of 64 references ... 12 levels: its repr would be
    # 64**12 characters long.
    wide = EMPTY_LIST + put(0)
    for _ in range(12):
        wide += EMPTY_LIST + MARK + get(0) * 64 + APPENDS + put(0) + POP
    return [
        Case("repr_called_object", checkpoint(PROTO2 + wide + get(0) + EMPTY_TUPLE + REDUCE +
                                              STOP), U, "refusing to call a list"),
        Case("repr_storage_key", checkpoint(PROTO2 + wide + MARK + text("storage") +
                                            glob("torch", "FloatStorage") + get(0) +
                                            text("cpu") + num(4) + TUPLE + BINPERSID + STOP),
             U, "storage key"),
        Case("repr_tensor_metadata", checkpoint(PROTO2 + wide + tensor(
            storage_pid(), 0, (4,), (1,), EMPTY_DICT + text("x") + get(0) + SETITEM) + STOP,
            {"0": FLOATS4}), U, "metadata"),
        Case("repr_newobj_class", checkpoint(PROTO2 + wide + get(0) + EMPTY_TUPLE + NEWOBJ +
                                             STOP), U, "NEWOBJ"),
        Case("repr_version_record", zip_file([
            Rec("archive/data.pkl", PROTO2 + NONE + STOP),
            Rec("archive/version", b"x" * 4096)]), C, "version"),
    ]


def _damaged(honest: bytes) -> list[Case]:
    at = honest.index(FLOATS4)
    flipped = honest[:at] + bytes([honest[at] ^ 1]) + honest[at + 1:]
    pkl = PROTO2 + NONE + STOP
    evil = PROTO2 + call(glob("os", "system"), text("true")) + STOP
    bomb = deflate_zeros(2**31 - 64)
    return [
        Case("zip_empty_file", b"", "EmptyCheckpointError", "empty"),
        Case("zip_garbage", bytes(range(256)) * 8, "NotACheckpointError",
             "not a PyTorch checkpoint"),
        Case("zip_header_then_garbage", b"PK\x03\x04" + bytes(range(256)) * 4, C, "ZIP"),
        Case("zip_truncated_half", honest[:len(honest) // 2], C, "ZIP"),
        Case("zip_truncated_tail", honest[:-10], C, "ZIP"),
        Case("zip_bad_crc", flipped, C, "corrupt"),
        Case("zip_no_folder", zip_file([Rec("data.pkl", pkl)]), C, "folder"),
        Case("zip_no_data_pkl", zip_file([Rec("archive/version", b"3\n")]), C, "data.pkl"),
        Case("zip_duplicate_data_pkl", zip_file([
            Rec("archive/data.pkl", pkl), Rec("archive/version", b"3\n"),
            Rec("archive/data.pkl", evil)]), C, "duplicate"),
        Case("zip_duplicate_storage", checkpoint(
            PROTO2 + tensor(storage_pid(), 0, (4,), (1,)) + STOP, {"0": FLOATS4},
            extra=[Rec("archive/data/0", bytes(16))]), C, "duplicate"),
        Case("zip_compressed_data_pkl", zip_file([
            Rec("archive/data.pkl", bomb, method=8, size=2**31 - 64, crc=0),
            Rec("archive/version", b"3\n")]), C, "compressed"),
        Case("zip_compressed_version", zip_file([
            Rec("archive/data.pkl", pkl),
            Rec("archive/version", bomb, method=8, size=2**31 - 64, crc=0)]), C, "version"),
        Case("zip_compressed_storage", checkpoint(
            PROTO2 + tensor(storage_pid(), 0, (4,), (1,)) + STOP,
            extra=[Rec("archive/data/0", zlib.compress(FLOATS4)[2:-4], method=8, size=16,
                       crc=zlib.crc32(FLOATS4))]), C, "compressed"),
        Case("zip_unknown_method", zip_file([Rec("archive/data.pkl", pkl, method=99),
                                             Rec("archive/version", b"3\n")]), C,
             "compressed|method"),
        Case("zip_mmap_garbage", bytes(range(256)) * 8, C, "mmap", {"mmap": True}),
        Case("zip_mmap_truncated", honest[:len(honest) // 2], C, "ZIP", {"mmap": True}),
        Case("zip_mmap_empty", b"", C, "empty", {"mmap": True}),
        Case("zip_honest_loads", honest, None),
        Case("zip_honest_loads_mmap", honest, None, "", {"mmap": True}),
    ]


def _legacy() -> list[Case]:
    pid = (MARK + text("storage") + glob("torch", "FloatStorage") + text("k") + text("cpu") +
           num(4) + NONE + TUPLE + BINPERSID)
    main = PROTO2 + tensor(pid, 0, (4,), (1,)) + STOP
    keys = MARK + text("k") + LIST
    lie = struct.pack("<q", 2**40) + FLOATS4
    return [
        Case("legacy_honest_loads", legacy(main, keys, struct.pack("<q", 4) + FLOATS4), None),
        Case("legacy_lying_count", legacy(main, keys, lie), C, "truncated"),
        Case("legacy_negative_count", legacy(main, keys, struct.pack("<q", -1)), C,
             "truncated"),
        Case("legacy_truncated", legacy(main, keys, struct.pack("<q", 4) + FLOATS4)[:-40], U,
             "truncated"),
        Case("legacy_bad_magic", PROTO2 + num(7) + STOP + b"\0" * 64, C, "neither"),
    ]


def _modules() -> list[Case]:
    linear = glob("ember.nn.modules.linear", "Linear")
    big = call(linear, num(20000), num(20000))
    wo = {"weights_only": False}
    return [
        Case("module_constructor_called", checkpoint(PROTO2 + big + STOP), U, "constructor",
             wo),
        Case("module_newobj_with_args", checkpoint(
            PROTO2 + linear + MARK + num(20000) + num(20000) + TUPLE + NEWOBJ + STOP), U,
            "constructor", wo),
        Case("module_refused_when_weights_only", checkpoint(PROTO2 + big + STOP), U,
             "ember.nn.modules.linear.Linear"),
    ]


def corpus(marker: str, honest_zip: bytes) -> list[Case]:
    """Every hostile case; `honest_zip` is a valid checkpoint holding arange(4.) as the
    only storage (from ember.save), which the damaged-ZIP cases are cut from."""
    return (_code_execution(marker) + _nesting() + _memory() + _repr_bombs() +
            _damaged(honest_zip) + _legacy() + _modules())
