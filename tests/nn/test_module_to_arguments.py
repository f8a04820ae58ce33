"""`Tensor.to` and `Module.to` read their arguments as torch's parser does (the three
overloads, its TypeError listing them), and `Module.to` moves 4-d/5-d tensors to the
asked memory format and points meta modules at `to_empty` (ops/copy.py `parse_to`,
nn/modules/_conversion.py)."""

import pytest
import torch

import ember

from helpers import same_message


def _same_text(call, kind=TypeError) -> str:
    """`call(L)` raises `kind` with the same words in both (ember names its dtypes
    `ember.float32` when imported as ember, as torch names them `torch.float32`)."""
    msgs = []
    for L in (ember, torch):
        with pytest.raises(kind) as e:
            call(L)
        msgs.append(str(e.value).replace("ember.", "torch."))
    assert msgs[0] == msgs[1]
    return msgs[0]

GOOD = [
    ((), {}), (("cpu",), {}), ((None,), {}), (("cpu", None), {}), ((None, "float64"), {}),
    ((float,), {}), ((2.5,), {}), ((True,), {}), ((1 + 2j,), {}),
    ((), {"dtype": "float64", "copy": True}), (("float32", True, True), {}),
    (("cpu", "float16", False, True), {}), ((), {"device": "cpu", "non_blocking": True}),
    (("tensor64",), {}), (("tensor64", True), {}), ((), {"tensor": "tensor64"}),
]
BAD = [
    (("cpu", "float32", False, 3), {}), (("cpu", "cpu"), {}), (("float32", "float64"), {}),
    (("float32", 1), {}), (("cpu", 2.5), {}), ((None, True), {}), (("tensor64", "cpu"), {}),
    (("float32", True, False, False), {}), ((), {"foo": 1}), ((), {"dtype": "x"}),
    (("float32",), {"memory_format": 3}), (([1],), {}),
]


def _args(L, args, kwargs):
    def one(a):
        if a == "tensor64":
            return L.zeros(1, dtype=L.float64)
        if isinstance(a, str) and hasattr(L, a) and a not in ("cpu",):
            return getattr(L, a)
        return a

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


@pytest.mark.parametrize("args,kwargs", GOOD)
def test_tensor_to_overloads_as_torch(args, kwargs):
    got = []
    for L in (ember, torch):
        a, k = _args(L, args, kwargs)
        x = L.ones(2)
        y = x.to(*a, **k)
        got.append((str(y.dtype).split(".")[-1], str(y.device), y is x))
    assert got[0] == got[1]


@pytest.mark.parametrize("args,kwargs", BAD)
@pytest.mark.parametrize("form", ["tensor", "module"])
def test_to_argument_errors_as_torch(args, kwargs, form):
    def call(L):
        a, k = _args(L, args, kwargs)
        target = L.ones(1) if form == "tensor" else L.nn.Linear(1, 1)
        return target.to(*a, **k)

    assert _same_text(call).startswith(
        "to() received an invalid combination of arguments - got (")


def test_module_to_a_python_bool_is_a_non_float_dtype():
    assert _same_text(lambda L: L.nn.Linear(1, 1).to(True)).endswith("dtype=torch.bool")


@pytest.mark.parametrize("module,fmt", [("Conv2d", "channels_last"),
                                        ("Conv3d", "channels_last_3d")])
def test_module_to_memory_format_as_torch(module, fmt):
    got = []
    for L in (ember, torch):
        m = getattr(L.nn, module)(3, 4, 3).to(L.float64, memory_format=getattr(L, fmt))
        got.append((m.weight.stride(), m.bias.stride(), str(m.weight.dtype)[-7:]))
    assert got[0] == got[1]


def test_module_to_a_memory_format_of_the_wrong_rank():
    same_message(lambda L: L.nn.Conv3d(3, 4, 3).to(memory_format=L.channels_last))


def test_meta_module_to_cpu_points_at_to_empty_but_cpu_does_not():
    to_msg = same_message(lambda L: L.nn.Linear(1, 1, device="meta").to("cpu"),
                          NotImplementedError)
    assert "to_empty()" in to_msg
    assert same_message(lambda L: L.nn.Linear(1, 1, device="meta").cpu(),
                        NotImplementedError) == "Cannot copy out of meta tensor; no data!"
    same_message(lambda L: L.empty(1, device="meta").to("cpu"), NotImplementedError)


@pytest.mark.parametrize("method", ["xpu", "ipu", "mtia", "cuda"])
@pytest.mark.parametrize("form", ["tensor", "module"])
def test_moves_to_devices_this_build_lacks_fail_as_torch(method, form):
    def call(L):
        target = L.ones(1) if form == "tensor" else L.nn.Linear(1, 1)
        return getattr(target, method)()

    kind = RuntimeError if method == "ipu" else AssertionError
    same_message(call, kind)


def test_an_integer_device_names_the_missing_accelerator():
    same_message(lambda L: L.ones(1).ipu(0))
