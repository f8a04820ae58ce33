"""ember.library.infer_schema against torch.library.infer_schema: the schema string read
from type hints, and its refusals."""

# ruff: noqa: UP006, UP035, UP045 - the typing forms users annotate custom ops with

from collections.abc import Sequence
from typing import List, Optional

import pytest
import torch

import ember


def _fn(L, annotation, ret=lambda L: L.Tensor, default=None):
    """`def f(x: annotation[=default]) -> ret` with L's types substituted."""
    ann = annotation(L)
    r = ret(L)
    if default is None:
        def f(x: ann) -> r: ...
    else:
        def f(x: ann = default) -> r: ...
    return f


ARGS = [
    lambda L: L.Tensor, lambda L: Optional[L.Tensor], lambda L: list[L.Tensor],
    lambda L: Sequence[L.Tensor], lambda L: List[Optional[L.Tensor]], lambda L: int,
    lambda L: Optional[int], lambda L: list[int], lambda L: Optional[Sequence[int]],
    lambda L: float, lambda L: list[float], lambda L: bool, lambda L: Optional[bool],
    lambda L: str, lambda L: int | None, lambda L: int | float | bool, lambda L: L.dtype,
    lambda L: Optional[L.device],
]
RETURNS = [
    lambda L: None, lambda L: L.Tensor, lambda L: list[L.Tensor], lambda L: int,
    lambda L: float, lambda L: bool,
    lambda L: tuple[L.Tensor, L.Tensor], lambda L: tuple[L.Tensor, int],
]


@pytest.mark.parametrize("annotation", ARGS, ids=range(len(ARGS)))
def test_argument_types(annotation):
    got = [L.library.infer_schema(_fn(L, annotation), mutates_args=()) for L in (ember, torch)]
    assert got[0] == got[1]


@pytest.mark.parametrize("ret", RETURNS, ids=range(len(RETURNS)))
def test_return_types(ret):
    got = [L.library.infer_schema(_fn(L, lambda L: L.Tensor, ret), mutates_args=())
           for L in (ember, torch)]
    assert got[0] == got[1]


def test_defaults_keyword_only_mutation_and_op_name():
    got = []
    for L in (ember, torch):
        def f(x: L.Tensor, out: L.Tensor, outs: list[L.Tensor], n: int = -3, y: float = 1.5,
              z: Optional[L.Tensor] = None, s: str = "a", *, b: bool = True,
              dt: L.dtype = L.float32) -> None: ...

        got.append((L.library.infer_schema(f, mutates_args=("out", "outs"), op_name="foo"),
                    L.library.infer_schema(f, mutates_args="unknown")))
    assert got[0] == got[1]


@pytest.mark.parametrize("case", ["no_hint", "no_return", "varargs", "bad_type", "bad_return",
                                  "mutate_int", "mutate_missing", "mutates_str",
                                  "list_default"])
def test_refusals(case):
    msgs = []
    for L in (ember, torch):
        mutates = ()
        if case == "no_hint":
            def f(x): ...
        elif case == "no_return":
            def f(x: L.Tensor): ...
        elif case == "varargs":
            def f(x: L.Tensor, *args: L.Tensor) -> L.Tensor: ...
        elif case == "bad_type":
            def f(x: complex) -> L.Tensor: ...
        elif case == "bad_return":
            def f(x: L.Tensor) -> dict: ...
        elif case == "list_default":
            def f(x: L.Tensor, y: list[int] = [1]) -> L.Tensor: ...  # noqa: B006
        else:
            def f(x: L.Tensor, n: int) -> None: ...
            mutates = {"mutate_int": ("n",), "mutate_missing": ("q",),
                       "mutates_str": "x"}[case]
        with pytest.raises(ValueError) as info:
            L.library.infer_schema(f, mutates_args=mutates)
        # the first sentence; PyTorch then lists every type it accepts and the signature
        msgs.append(str(info.value).replace("torch.", "").replace("ember._tensor.", "")
                    .split(" The valid types")[0].split(" Got func")[0])
    assert msgs[0] == msgs[1]


# a call checked against a schema: which values fit an argument type, and the type's name
# in the message as PyTorch's typing spells it
_CALL_TYPES = ["Tensor?", "Tensor[]", "float[]", "Scalar?", "int?", "bool[3]", "Tensor?[]",
               "str?", "int[]", "SymInt[2]", "int[2]", "int[]?"]


@pytest.mark.parametrize("i, type_", list(enumerate(_CALL_TYPES)))
@pytest.mark.parametrize("value", [object(), 3])
def test_call_checks_match_torchs(i, type_, value):
    out = []
    for L in (ember, torch):
        name = f"schema_calls::f{i}"
        if not hasattr(L.ops, "schema_calls") or not hasattr(L.ops.schema_calls, f"f{i}"):
            L.library.define(name, f"(Tensor x, {type_} s) -> Tensor")
            L.library.impl(name, "cpu", lambda x, s, L=L: x + L.tensor(s))
        try:
            out.append(("ok", getattr(L.ops.schema_calls, f"f{i}")(L.zeros(1), value).tolist()))
        except RuntimeError as e:
            out.append(("error", str(e).splitlines()[0]))
    assert out[0] == out[1]
