"""`tensor` and its relatives on any Python data, against torch, case by case from one table.

Each case builds its data for one module (so tensors inside are that module's own) and is run
through every reader of Python data: `tensor` (with and without a dtype), `as_tensor`,
`asarray`, the legacy `Tensor(...)` and `new_tensor`. Both sides must give the same dtype, shape
and values, or raise the same exception type with the same message.
"""

import array
import collections
import fractions
import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import E2T, assert_same


class Seq:
    """The sequence protocol only: `__len__` and `__getitem__`."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class GetItemOnly:
    def __getitem__(self, i):
        if i < 3:
            return i
        raise IndexError(i)


class IterOnly:
    def __iter__(self):
        return iter([1, 2])


class ArrayOnly:
    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0])


class ArrayInterface:
    def __init__(self):
        self._keep = np.array([1, 2, 3], dtype=np.int32)
        self.__array_interface__ = self._keep.__array_interface__


class Index:
    def __index__(self):
        return 3


class Float:
    def __float__(self):
        return 2.5


class Complex:
    def __complex__(self):
        return 1 + 2j


class Int:
    def __int__(self):
        return 4


def _generator():
    yield 1
    yield 2


def _deep(depth):
    x = 0
    for _ in range(depth):
        x = [x]
    return x


_SELF = []
_SELF.append(_SELF)
_INNER_SELF = [1, _SELF]

NAN, INF = float("nan"), float("inf")

# name -> data builder; `m` is the module (tensors inside the data are its own)
DATA = {
    # sequences that are not lists or tuples
    "deque-int": lambda m: collections.deque([1, 2, 3]),
    "deque-float": lambda m: collections.deque([1.0, 2.5]),
    "deque-nested": lambda m: collections.deque([collections.deque([1, 2]), (3, 4)]),
    "range": lambda m: range(4),
    "range-empty": lambda m: range(0),
    "list-of-ranges": lambda m: [range(2), range(1, 3)],
    "memoryview": lambda m: memoryview(b"abcd"),
    "memoryview-odd": lambda m: memoryview(b"abc"),
    "bytes": lambda m: b"abcd",
    "bytearray": lambda m: bytearray(b"abcd"),
    "list-of-bytes": lambda m: [b"ab"],
    "str": lambda m: "ab",
    "list-of-str": lambda m: ["ab"],
    "int-and-str": lambda m: [1, "a"],
    "numpy-str": lambda m: np.str_("a"),
    "seq": lambda m: Seq([1, 2, 3]),
    "seq-nested": lambda m: Seq([Seq([1.0, 2.0]), Seq([3, 4])]),
    "seq-empty": lambda m: Seq([]),
    "tuple-list-mix": lambda m: ([1, 2], (3, 4)),
    "ranges-in-tuple": lambda m: (range(2), [5, 6]),
    # not sequences
    "dict": lambda m: {1: 2},
    "set": lambda m: {1, 2},
    "frozenset": lambda m: frozenset({1}),
    "generator": lambda m: _generator(),
    "getitem-only": lambda m: GetItemOnly(),
    "iter-only": lambda m: IterOnly(),
    "array-only": lambda m: ArrayOnly(),
    "array-interface": lambda m: ArrayInterface(),
    "index": lambda m: Index(),
    "float-protocol": lambda m: Float(),
    "complex-protocol": lambda m: Complex(),
    "int-protocol": lambda m: Int(),
    "list-of-index": lambda m: [Index(), 1],
    "list-of-float-protocol": lambda m: [Float(), 1],
    "fraction": lambda m: [fractions.Fraction(1, 2)],
    "none": lambda m: None,
    "list-of-none": lambda m: [None],
    "inner-set": lambda m: [[1, 2], {3, 4}],
    "inner-generator": lambda m: [[1, 2], _generator()],
    "self-referential": lambda m: _SELF,
    "inner-self-referential": lambda m: _INNER_SELF,
    "too-deep": lambda m: _deep(129),
    # shapes
    "ragged": lambda m: [[1, 2], [3]],
    "ragged-longer": lambda m: [[1], [2, 3]],
    "ragged-scalar-row": lambda m: [[1, 2], 3],
    "ragged-list-leaf": lambda m: [1, [2]],
    "empty": lambda m: [],
    "empty-rows": lambda m: [[], []],
    "empty-then-row": lambda m: [[], [1]],
    "empty-then-number": lambda m: [[], 1],
    "empty-deep": lambda m: [[[]], [[]]],
    "nested-4d": lambda m: [[[[1], [2]], [[3], [4]]]],
    # numbers
    "bool-int": lambda m: [True, 3],
    "bool-float": lambda m: [False, 3.5],
    "bool-int-float-complex": lambda m: [True, 1, 2.5, 1j],
    "int-float": lambda m: [[1, 2], [3, 4.5]],
    "nan-inf": lambda m: [NAN, INF, -INF],
    "big-int": lambda m: [2 ** 64],
    "big-negative-int": lambda m: [-(2 ** 63) - 1],
    "int64-max-plus-one": lambda m: [2 ** 63],
    "big-int-and-float": lambda m: [2 ** 64, 1.0],
    "huge-int-and-float": lambda m: [10 ** 400, 1.0],
    "large-int-and-float": lambda m: [1.5, 2 ** 62 + 1],
    "int-enum-like": lambda m: [True.__class__(1)],
    "float-subclass": lambda m: [type("F", (float,), {})(1.5)],
    "lone-big-int": lambda m: 2 ** 64,
    "lone-complex": lambda m: 1 + 2j,
    # tensors inside sequences
    "0d-tensors": lambda m: [m.tensor(1.5), m.tensor(2)],
    "0d-int-tensors": lambda m: [m.tensor(1, dtype=m.int8), m.tensor(2, dtype=m.int8)],
    "0d-int8-tensor-and-int": lambda m: [m.tensor(1, dtype=m.int8), 2],
    "0d-int8-tensor-and-float": lambda m: [m.tensor(1, dtype=m.int8), 2.5],
    "0d-bool-tensor-and-int": lambda m: [m.tensor(True), 3],
    "0d-half-tensors": lambda m: [m.tensor(1, dtype=m.bfloat16), m.tensor(1, dtype=m.float16)],
    "0d-complex-tensor": lambda m: [m.tensor(1 + 1j), 1.0],
    "0d-tensors-requiring-grad": lambda m: [m.tensor(1.0, requires_grad=True), m.tensor(2.0)],
    "1-element-tensor": lambda m: [m.tensor([1.5])],
    "1x1-tensor-and-int": lambda m: [m.tensor([[1.5]]), 2],
    "1d-tensors": lambda m: [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
    "1d-tensors-requiring-grad": lambda m: [m.ones(2, requires_grad=True), m.zeros(2)],
    "2d-tensors": lambda m: [m.ones(2, 3), m.zeros(2, 3)],
    "empty-tensor-in-list": lambda m: [m.tensor([])],
    "tensor-then-list": lambda m: [m.tensor([1, 2]), [3, 4]],
    "list-then-int-tensor": lambda m: [[1, 2], m.tensor([3, 4])],
    "list-then-float-tensor": lambda m: [[1, 2], m.tensor([3.0, 4.0])],
    "list-then-short-tensor": lambda m: [[1, 2], m.tensor([3])],
    "0d-meta-tensor": lambda m: [m.tensor(1.0, device="meta")],
    # NumPy arrays inside sequences
    "arrays": lambda m: [np.array([1, 2], np.int8), np.array([3, 4], np.int8)],
    "0d-array-in-list": lambda m: [np.array(1.5), 2],
    "ragged-arrays": lambda m: [np.array([1, 2]), np.array([3])],
    "array-shape-mismatch": lambda m: [np.ones((2, 2)), np.zeros((2, 3))],
    "list-then-array": lambda m: [[1, 2], np.array([3.5, 4], np.float32)],
    "array-then-list": lambda m: [np.array([3.5, 4], np.float32), [1, 2]],
    "2d-half-arrays": lambda m: [np.ones((2, 2), np.float16), np.zeros((2, 2), np.float16)],
    "complex64-array-in-list": lambda m: [np.array([1 + 2j], np.complex64)],
    "bool-array-in-list": lambda m: [np.array([True, False])],
}

# array.array of every type code, and NumPy scalars of every dtype ember holds
for _code, _values in [("b", [1, -2]), ("B", [1, 255]), ("h", [-3, 4]), ("H", [5, 65535]),
                       ("i", [-6, 7]), ("I", [8, 2 ** 32 - 1]), ("l", [-9, 10]), ("L", [11, 12]),
                       ("q", [-(2 ** 63), 13]), ("Q", [2 ** 64 - 1]), ("f", [1.5, -2.0]),
                       ("d", [0.1, NAN])]:
    DATA[f"array.array-{_code}"] = lambda m, c=_code, v=_values: array.array(c, v)
DATA["array.array-u"] = lambda m: array.array("u", "ab")
for _t in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16, np.float32,
           np.float64, np.complex64, np.complex128, np.longdouble):
    DATA[f"numpy-{_t.__name__}-in-list"] = lambda m, t=_t: [t(1), t(0)]
    DATA[f"numpy-{_t.__name__}"] = lambda m, t=_t: t(3)
DATA["numpy-int64-and-float"] = lambda m: [np.int64(1), 2.0]
DATA["numpy-float64-and-float"] = lambda m: [np.float64(1), 2.0]
DATA["numpy-bool-and-int"] = lambda m: [np.bool_(True), 2]
DATA["numpy-complex128-then-none"] = lambda m: [np.complex128(1), None]

# The readers: name -> call(module, data). Each is run on every case of DATA.
_DTYPES = ["float64", "int32", "uint8", "bool", "complex64", "float16"]
READERS = {
    "tensor": lambda m, d: m.tensor(d),
    "as_tensor": lambda m, d: m.as_tensor(d),
    "asarray": lambda m, d: m.asarray(d),
    "Tensor": lambda m, d: m.Tensor(d),
    "LongTensor": lambda m, d: m.LongTensor(d),
    "new_tensor": lambda m, d: m.ones(1, dtype=m.int16).new_tensor(d),
    **{f"tensor-{k}": (lambda m, d, k=k: m.tensor(d, dtype=getattr(m, k))) for k in _DTYPES},
}



def same_message(e: str, t: str) -> bool:
    """Equal messages; for a NumPy dtype neither side holds, the first sentence (the lists of
    supported dtypes that follow differ: torch holds uint16..uint64, ember holds bfloat16)."""
    if t.startswith("can't convert np.ndarray"):
        return e.split(". The only")[0] == t.split(". The only")[0]
    return e == t


# Legacy constructors given a number make an uninitialised tensor of that size.
_UNINITIALISED = {"index", "lone-big-int"}
_UNINITIALISED |= {f"numpy-{t}" for t in ("int8", "uint8", "int16", "int32", "int64")}


def outcome(fn):
    """("ok", result) or ("raised", exception type, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn())
    except Exception as err:
        return ("raised", type(err), str(err))


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("case", list(DATA))
def test_reader_matches_torch(case, reader):
    if reader in ("Tensor", "LongTensor") and case in _UNINITIALISED:
        pytest.skip("an uninitialised tensor: only its size can compare")
    make, read = DATA[case], READERS[reader]
    t = outcome(lambda: read(torch, make(torch)))
    e = outcome(lambda: read(ember, make(ember)))
    if t[0] == "raised":
        assert e[0] == "raised", f"torch raised {t[1].__name__}: {t[2]}; ember gave {e[1]}"
        assert e[1] is t[1], f"{e[1].__name__}: {e[2]} != torch's {t[1].__name__}: {t[2]}"
        assert same_message(e[2], t[2]), (e[2], t[2])
        return
    assert e[0] == "ok", f"ember raised {e[1].__name__}: {e[2]}"
    if t[1].device.type == "meta":
        assert e[1].is_meta and tuple(e[1].shape) == tuple(t[1].shape)
        assert E2T[e[1].dtype] == t[1].dtype
        return
    assert_same(e[1], t[1])
    assert e[1].requires_grad == t[1].requires_grad and e[1].is_leaf == t[1].is_leaf


def test_every_reader_is_exercised_on_the_issue_cases():
    """The cases the issue quotes: a deque and a range read as torch reads them."""
    for data in (collections.deque([1, 2.5]), range(4)):
        assert_same(ember.tensor(data), torch.tensor(data))


def test_as_tensor_and_legacy_share_numpy_memory_as_torch_does():
    a = np.arange(3.0, dtype=np.float32)
    for fn in (lambda m: m.as_tensor(a), lambda m: m.Tensor(a), lambda m: m.asarray(a)):
        e, t = fn(ember), fn(torch)
        assert np.shares_memory(e.numpy(), a) == np.shares_memory(t.numpy(), a)


@pytest.mark.parametrize("fn", [
    lambda m: m.asarray(m.ones(2), dtype=m.float64, copy=False),
    lambda m: m.asarray(np.ones(2), dtype=m.float32, copy=False),
    lambda m: m.asarray(np.float16(2), copy=False),
    lambda m: m.asarray([1, 2], copy=False),
    lambda m: m.asarray(b"", dtype=m.uint8),
    lambda m: m.asarray(b"abcd", dtype=m.uint8, copy=True),
    lambda m: m.asarray(bytearray(b"abcd"), dtype=m.uint8, copy=False),
    lambda m: m.asarray(array.array("d", [1.0, 2.0]), dtype=m.float64),
    lambda m: m.asarray([1, 2], requires_grad=True),
    lambda m: m.asarray([1.0, 2.0], requires_grad=True),
    lambda m: m.asarray(m.ones(2, requires_grad=True) * 2, requires_grad=False),
    lambda m: m.asarray(m.ones(2, requires_grad=True), copy=True),
    lambda m: m.Tensor([1], [2]),
    lambda m: m.Tensor(True),
    lambda m: m.Tensor(2.5),
    lambda m: m.LongTensor(m.tensor([1.0, 2.0])),
    lambda m: m.Tensor(m.Size([2, 3])).shape,
])
def test_asarray_and_legacy_paths_match_torch(fn):
    t = outcome(lambda: fn(torch))
    e = outcome(lambda: fn(ember))
    assert e[0] == t[0], (e, t)
    if t[0] == "raised":
        assert e[1] is t[1], (e, t)
        if "invalid combination" not in t[2] and "TensorOptions" not in t[2]:
            assert e[2] == t[2]
    elif isinstance(t[1], torch.Tensor):
        assert_same(e[1], t[1])
        assert e[1].requires_grad == t[1].requires_grad and e[1].is_leaf == t[1].is_leaf
    else:
        assert tuple(e[1]) == tuple(t[1])


def test_a_list_of_arrays_warns_once_at_the_callers_line_as_torch():
    # (PyTorch warns once a process: run each side in a fresh interpreter)
    from fresh_process import with_server

    code = ("import warnings, numpy as np\nimport {m} as t\nwarnings.simplefilter('always')\n"
            "a = np.zeros(2, np.float32)\nt.tensor([a, a]); t.tensor([[a]]); t.tensor(a)\n")
    got = []
    for m in ("ember", "torch"):
        err = with_server(m).run_code(code.format(m=m)).stderr  # (a fresh process each)
        got.append([line.split(" (Triggered")[0] for line in err.splitlines()
                    if "extremely slow" in line])
    assert got[0] == got[1] and len(got[0]) == 1 and got[0][0].startswith("<string>:5:")


# A NumPy array's strides survive the copy `tensor` makes, as in PyTorch (which copies
# through from_numpy): NumPy's strides of size-1 dims too, which decide whether a (N, C, 1, 1)
# later reads as channels-last.
STRIDED_ARRAYS = {
    "size-1 dims of a transposed copy": lambda: np.ascontiguousarray(
        np.arange(8.0, dtype=np.float32).reshape(2, 4, 1, 1).transpose(0, 2, 3, 1)),
    "its permuted view": lambda: np.ascontiguousarray(
        np.arange(8.0).reshape(2, 4, 1, 1).transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2),
    "transposed": lambda: np.arange(6.0).reshape(2, 3).T,
    "sliced, not dense": lambda: np.arange(12.0).reshape(3, 4).T[::2],
    "size-1 slice": lambda: np.ones((3, 1, 2))[:, :, :1],
    # (a broadcast dim keeps its row-major place: NumPy's order "K" would put it innermost)
    "broadcast rows": lambda: np.broadcast_to(np.arange(3.0), (2, 3)),
    "broadcast columns": lambda: np.broadcast_to(np.arange(3.0)[:, None], (3, 2)),
    "broadcast beside a transpose": lambda: np.broadcast_to(
        np.arange(12.0).reshape(4, 3).T[None], (2, 3, 4)),
    # (an empty array keeps NumPy's strides, all 0)
    "empty": lambda: np.zeros((0, 3)),
    "empty transposed": lambda: np.zeros((2, 0, 3)).transpose(2, 0, 1),
}


@pytest.mark.parametrize("name", STRIDED_ARRAYS)
@pytest.mark.parametrize("dtype", [None, "float64", "float16"])
def test_tensor_keeps_a_numpy_arrays_strides_as_torch(name, dtype):
    got = []
    for L in (ember, torch):
        t = L.tensor(STRIDED_ARRAYS[name](), dtype=dtype and getattr(L, dtype))
        got.append((t.stride(), t.is_contiguous(), t._base is None, t.tolist()))
    assert got[0] == got[1]


# Every reader of a NumPy array views it as a tensor first, so each refuses a negative stride
# (a size-1 dim's too), even where it then copies; an empty reversed array has no negative
# stride (NumPy's are 0), and a list of such arrays is read by value.
NEGATIVE_STRIDES = {"reversed": lambda: np.arange(5.0)[::-1], "reversed columns": lambda: np.arange(
    6.0).reshape(2, 3)[:, ::-1], "reversed size-1 dim": lambda: np.ones((2, 1))[:, ::-1],
    "reversed then transposed": lambda: np.arange(6).reshape(2, 3)[::-1].T,
    "empty reversed": lambda: np.zeros(0)[::-1]}
NUMPY_READERS = {
    "tensor": lambda L, a: L.tensor(a), "tensor float32": lambda L, a: L.tensor(a, dtype=L.float32),
    "as_tensor": lambda L, a: L.as_tensor(a),
    "as_tensor float32": lambda L, a: L.as_tensor(a, dtype=L.float32),
    "from_numpy": lambda L, a: L.from_numpy(a), "asarray": lambda L, a: L.asarray(a),
    "asarray copy": lambda L, a: L.asarray(a, copy=True), "Tensor": lambda L, a: L.Tensor(a),
    "DoubleTensor": lambda L, a: L.DoubleTensor(a),
    "new_tensor": lambda L, a: L.ones(1).new_tensor(a),
    "a list of them": lambda L, a: L.tensor([a, a]),
}


def test_numpy_arrays_with_a_negative_stride_are_refused_by_every_reader():
    for aname, make_array in NEGATIVE_STRIDES.items():
        for rname, read in NUMPY_READERS.items():
            got = []
            for L in (ember, torch):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # (a list of arrays: "extremely slow")
                    try:
                        t = read(L, make_array())
                        got.append((str(t.dtype).split(".")[1], t.tolist()))
                    except (ValueError, TypeError) as exc:
                        got.append((type(exc).__name__, str(exc)))
            assert got[0] == got[1], (aname, rname, got)


@pytest.mark.parametrize("make_buffer", [
    lambda: np.ones((2, 3)).T, lambda: np.ones(4)[::2], lambda: memoryview(b"abcdefgh")[::2],
    lambda: np.ones((3, 1))[::2], lambda: np.ones((2, 3)), lambda: bytearray(b"ab")],
    ids=["transposed", "stepped", "stepped memoryview", "stepped column", "C order", "bytes"])
def test_frombuffer_takes_only_a_plain_contiguous_buffer(make_buffer):
    got = []
    for L in (ember, torch):
        try:
            got.append(L.frombuffer(make_buffer(), dtype=L.uint8).tolist())
        except RuntimeError as exc:
            got.append(str(exc))
    assert got[0] == got[1]
