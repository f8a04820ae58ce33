"""NumPy keyword spellings (`axis=`, `keepdims=`, `x=`, `x2=` ...) against torch.

The generated sweep asks torch at test time which of its natively parsed functions and
Tensor methods take `dim` / `keepdim` (their ATen schemas), calls each that ember has with
both spellings in both frameworks, and compares results and exception types.
"""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest
import torch

import ember
from ember._aliases import ALIASES

from helpers import assert_same, same_error, same_message

_SCHEMAS = torch._C._jit_get_schemas_for_operator


def _dim_names(namespace) -> list[str]:
    """Public names in a torch native namespace whose schemas take `dim` or `keepdim`."""
    out = []
    for name in sorted(dir(namespace)):
        if name.startswith("_"):
            continue
        args = (a.name for s in _SCHEMAS(f"aten::{name}") for a in s.arguments)
        if any(a in ("dim", "keepdim") for a in args):
            out.append(name)
    return out


# (native_norm takes `dim` only in its sparse kernel: torch and ember refuse a dense tensor)
_SPARSE_ONLY = {"native_norm"}
FUNCTIONS = [n for n in _dim_names(torch._C._VariableFunctions)
             if hasattr(torch, n) and n not in _SPARSE_ONLY]
METHODS = [n for n in _dim_names(torch._C.TensorBase) if hasattr(torch.Tensor, n)]


def _inputs(L):
    x = L.tensor([[0.5, -1.0, 2.0, 3.0], [1.5, 0.25, -2.0, 4.0], [0.0, 1.0, 7.0, -3.0]])
    idx = L.tensor([[0, 2, 1], [3, 3, 0], [1, 0, 2]])
    i = L.tensor([0, 2])
    return x, idx, i


def _templates(L):
    """Argument sets (canonical spellings) tried in turn until torch accepts one."""
    x, idx, i = _inputs(L)
    x3 = L.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    return [
        ((x,), {"dim": 1, "keepdim": True}),
        ((x,), {"dim": 1}),
        (([x, x],), {"dim": 1}),
        ((x, 2), {"dim": 1}),
        ((x, 0.5), {"dim": 1}),
        ((x,), {"dim": 1, "index": 0}),
        ((x,), {"dim": 1, "start": 1, "length": 2}),
        ((x,), {"dim": 1, "index": i}),
        ((x,), {"dim": 1, "index": idx}),
        ((x, idx), {"dim": 1}),
        ((x,), {"dim": 1, "index": idx, "src": x * 2}),
        ((x,), {"dim": 1, "index": idx, "src": x * 2, "reduce": "sum"}),
        ((x,), {"dim": 1, "index": i, "source": x[:, :2] * 3}),
        ((x,), {"dim": 1, "index": i, "value": 2.0}),
        ((x,), {"dim": 1, "index": i, "source": x[:, :2] * 3, "reduce": "prod"}),
        ((x,), {"p": 2, "dim": 1, "maxnorm": 1.0}),
        ((x3, x3.flip(0)), {"dim": 1}),
        ((x3, x3.flip(0)), {"keepdim": True}),
        ((x,), {"dim": 1, "sizes": (2, 2)}),
        ((x, x[:, 1] * 2), {"dim": 1, "index": 0}),
        ((x, [1, 3]), {"dim": 1}),
        ((x,), {"dim": (0, 1), "keepdim": True}),
    ]


def _call(L, name, method, args, kwargs):
    if method:
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(L, name)(*args, **kwargs)


def _same(make):
    """`make(L)` gives the same result in both frameworks, or the same exception type."""
    try:
        expected = make(torch)
    except Exception:  # noqa: BLE001 - whatever torch raises, ember must raise in kind
        same_error(make)
        return "error"
    assert_same(make(ember), expected)
    return "value"


def _spellings(method: bool, args, kwargs):
    """(args, kwargs) variants of one call that spell its keywords through aliases."""
    out = []
    for alias, canonical in ALIASES.items():
        if canonical in kwargs:
            kw = {(alias if k == canonical else k): v for k, v in kwargs.items()}
            out.append((args, kw))
    renamed = {{"dim": "axis", "keepdim": "keepdims"}.get(k, k): v for k, v in kwargs.items()}
    out.append((args, renamed))
    if not method:
        for alias in ("x", "a", "x1"):
            out.append((args[1:], {alias: args[0], **kwargs}))
        if len(args) > 1:
            out.append(((args[0], *args[2:]), {"x2": args[1], **kwargs}))
    return out


def _sweep(names, method):
    covered, skipped = [], []
    for name in names:
        if not hasattr(ember.Tensor if method else ember, name):
            continue
        chosen = None
        for k, (targs, tkw) in enumerate(_templates(torch)):
            if method and isinstance(targs[0], list):
                continue
            try:
                _call(torch, name, method, targs, tkw)
            except Exception:  # noqa: BLE001 - not this template
                continue
            chosen = k
            break
        if chosen is None:
            skipped.append(name)
            continue

        def run(spell, L, k=chosen, name=name):
            args, kwargs = _templates(L)[k]
            a, kw = spell(args, kwargs)
            return _call(L, name, method, a, kw)

        _same(lambda L: run(lambda a, kw: (a, kw), L))
        n_variants = len(_spellings(method, *_templates(torch)[chosen]))
        for j in range(n_variants):
            _same(lambda L, j=j: run(lambda a, kw: _spellings(method, a, kw)[j], L))
        # dim and axis together: torch raises TypeError, so must ember.
        if "dim" in _templates(torch)[chosen][1]:
            same_error(lambda L: run(lambda a, kw: (a, {**kw, "axis": 1}), L))
        covered.append(name)
    return covered, skipped


def test_every_torch_function_alias_ember_has():
    covered, skipped = _sweep(FUNCTIONS, method=False)
    # The sweep must not pass vacuously: ember has most of torch's dim-taking functions.
    assert len(covered) >= 55, covered
    assert not skipped, f"no argument template fits {skipped}: add one"


def test_every_torch_method_alias_ember_has():
    covered, skipped = _sweep(METHODS, method=True)
    assert len(covered) >= 55, covered
    assert not skipped, f"no argument template fits {skipped}: add one"


def test_notebook_spellings():
    counts = [[3.0, 1.0], [2.0, 2.0]]
    for L in (torch, ember):
        c = L.tensor(counts)
        p = c / c.sum(1, keepdims=True)
        assert tuple(p.shape) == (2, 2)
    assert_same(ember.tensor(counts).sum(1, keepdims=True),
                torch.tensor(counts).sum(1, keepdims=True))
    assert_same(ember.tensor(counts).argmax(axis=1), torch.tensor(counts).argmax(axis=1))
    assert_same(ember.softmax(ember.tensor(counts), axis=0),
                torch.softmax(torch.tensor(counts), axis=0))


@pytest.mark.parametrize("call", [
    lambda L: L.split(L.ones(4), 2, axis=0),           # written in Python in torch
    lambda L: L.ones(4).split(2, axis=0),
    lambda L: L.ones(2, 2).unflatten(axis=1, sizes=(2, 1)),
    lambda L: L.nn.functional.softmax(L.ones(2, 2), axis=1),
    lambda L: L.ones(2, 2).sum(1, axis=1),              # dim positional and by alias
    lambda L: L.sum(L.ones(2), x=L.ones(2)),            # input positional and by alias
    lambda L: L.ones(2, 2).sum(axis=1, keepdim=True, keepdims=True),
    lambda L: L.add(L.ones(2), L.ones(2), x2=L.ones(2)) if L is torch else L.add(
        L.ones(2), L.ones(2), other=L.ones(2)),
])
def test_alias_errors_match(call):
    assert same_error(call) is TypeError


def test_wrapped_functions_keep_signature_and_pickle():
    import inspect

    assert list(inspect.signature(ember.sum).parameters)[:3] == ["input", "dim", "keepdim"]
    assert pickle.loads(pickle.dumps(ember.sum)) is ember.sum
    assert pickle.loads(pickle.dumps(ember.Tensor.cumsum)) is ember.Tensor.cumsum
    # Functions with no dim are bound as they are (no wrapper, no cost).
    assert ember.add is ember.ops.binary.add


@pytest.mark.parametrize("space", ["linalg", "special"])
def test_linalg_and_special_aliases(space):
    """torch.linalg and torch.special parse their arguments natively too: same sweep."""
    covered = []
    for name in getattr(ember, space).__all__:
        if not hasattr(getattr(torch, space), name):
            continue

        def call(L, kw, name=name):
            x = L.tensor(np.arange(1.0, 33.0).reshape(2, 4, 4) / 9)
            return getattr(getattr(L, space), name)(x, **kw)

        for kw in ({"dim": 1, "keepdim": True}, {"dim": (1, 2), "keepdim": True}, {"dim": 1}):
            try:
                call(torch, kw)
            except Exception:  # noqa: BLE001 - not this template
                continue
            spelled = {{"dim": "axis", "keepdim": "keepdims"}[k]: v for k, v in kw.items()}
            _same(lambda L, spelled=spelled, call=call: call(L, spelled))
            same_error(lambda L, kw=kw, call=call: call(L, {**kw, "axis": 1}))
            covered.append(name)
            break
    assert len(covered) >= 3, covered


@pytest.mark.parametrize("call", [
    lambda L: L.reshape([1.0, 2.0], (2,)),
    lambda L: L.transpose([[1]], 0, 1),
    lambda L: L.flatten([[1]]),
    lambda L: L.permute([[1]], (1, 0)),
    lambda L: L.clone([1]),
    lambda L: L.tril([[1]]),
    lambda L: L.diag("ab"),
    lambda L: L.flip([1], (0,)),
    lambda L: L.roll([1], 1),
    lambda L: L.t([[1.0]]),
    lambda L: L.ravel(np.ones(2)),
    lambda L: L.zeros_like([1.0]),
])
def test_functions_without_aliases_refuse_non_tensors_as_torch(call):
    # these take no `dim` alias, so only the guard wraps them: TypeError, torch's words
    assert same_message(call, TypeError)


def test_parsed_functions_are_not_wrapped():
    # hot functions that refuse non-tensors themselves keep no wrapper frame
    from ember.ops import matmul, movement, unary

    assert ember.exp is unary.exp
    assert ember.matmul is matmul.matmul
    assert ember.reshape is not movement.reshape and ember.reshape.__wrapped__ is movement.reshape
    assert same_error(lambda L: L.movedim((1.0,), 0, 0)) is TypeError  # (an overload listing)


def test_functions_torch_shares_with_functional_stay_one_object():
    # `F.conv_tbc is torch.conv_tbc` in torch: the guard leaves these unwrapped
    import torch.nn.functional as F

    from ember._aliases import SHARED_WITH_FUNCTIONAL

    shared = {n for n in dir(F) if not n.startswith("_") and hasattr(torch, n)
              and callable(getattr(F, n)) and getattr(F, n) is getattr(torch, n)} - {"Tensor"}
    assert shared == SHARED_WITH_FUNCTIONAL
    for name in shared - {"cosine_similarity", "pairwise_distance"}:  # (dim aliases wrap)
        if hasattr(ember, name) and hasattr(ember.nn.functional, name):
            assert getattr(ember, name) is getattr(ember.nn.functional, name), name


def _missing_args_message(call) -> str | None:
    """torch's message when `call(torch)` leaves out required arguments, else None."""
    try:
        call(torch)
    except TypeError as exc:
        msg = str(exc)
        return msg if "required positional argument" in msg else None
    except Exception:  # noqa: BLE001 - another refusal: not this test's
        return None
    return None


@pytest.mark.parametrize("method", [False, True])
def test_missing_arguments_in_the_parsers_words(method):
    """A natively parsed function or method called with its tensor alone, where torch's
    parser names the missing arguments (`logsumexp() missing 1 required positional
    arguments: "dim"`, its own grammar): ember says the same."""
    names = METHODS if method else FUNCTIONS
    checked = []
    for name in names:
        if not hasattr(ember.Tensor if method else ember, name):
            continue

        def call(L, name=name):
            x = L.ones(2, 3)
            return getattr(x, name)() if method else getattr(L, name)(x)

        expected = _missing_args_message(call)
        if expected is None or expected.startswith("Tensor."):  # (torch's Python methods)
            continue
        try:
            call(ember)
        except TypeError as exc:
            got = str(exc)
        else:
            got = "(returned)"
        assert got == expected, name
        checked.append(name)
    assert len(checked) >= 15, checked


@pytest.mark.parametrize("call, expected", [
    (lambda L: L.logsumexp(L.ones(2)),
     'logsumexp() missing 1 required positional arguments: "dim"'),
    (lambda L: L.renorm(L.ones(2), 1), 'renorm() missing 2 required positional argument: "dim", '
                                       '"maxnorm"'),
    (lambda L: L.ones(2).softmax(), 'softmax() missing 1 required positional arguments: "dim"'),
    (lambda L: L.flip(L.ones(2)), 'flip() missing 1 required positional arguments: "dims"'),
    (lambda L: L.diff(), 'diff() missing 1 required positional arguments: "input"'),
    (lambda L: L.cdist(L.ones(2, 2)), "cdist() missing 1 required positional argument: 'x2'"),
])
def test_missing_argument_examples(call, expected):
    # (cdist is written in Python in torch: Python's own words)
    assert same_message(call, TypeError) == expected


# methods PyTorch's parser checks but ember binds unwrapped (hot: `size`, `stride`), and
# norm, which torch writes in Python (its words come from linalg_vector_norm's parser)
_DIM_SWEEP_SKIP = {"size", "stride", "norm"}


@pytest.mark.parametrize("method", [False, True])
def test_wrong_typed_dim_in_the_parsers_words(method):
    """Every natively parsed function or method taking `dim` alone, given one no overload
    takes (a float, a tuple with a float or a bool in it, a str, a complex), by position and
    by keyword: where torch's parser names `dim`, ember raises the same TypeError."""
    checked = []
    for name in METHODS if method else FUNCTIONS:
        if name in _DIM_SWEEP_SKIP or not hasattr(ember.Tensor if method else ember, name):
            continue

        def call(L, v, kw, name=name):
            x = L.ones(2, 3)
            f = getattr(x, name) if method else functools.partial(getattr(L, name), x)
            return f(dim=v) if kw else f(v)

        if _words(lambda L: call(L, 0, False)) is not None:  # (it needs more than `dim`)
            continue
        for v in (0.5, (0, 0.5), (0.5,), (True,), "a", 1j, [1, None]):
            for kw in (False, True):
                expected = _words(lambda L, v=v, kw=kw: call(L, v, kw))
                if expected is None or "argument 'dim'" not in expected:
                    continue
                got = _words(lambda L, v=v, kw=kw: call(L, v, kw), ember)
                assert got == expected, (name, v, kw)
                checked.append(name)
    assert len(set(checked)) >= 15, sorted(set(checked))


def _words(call, lib=torch) -> str | None:
    """`call(lib)`'s exception as "Type: first line", None if it returns."""
    try:
        call(lib)
    except Exception as exc:  # noqa: BLE001 - what is compared is the type and words
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


@pytest.mark.parametrize("call", [
    lambda L: L.logsumexp(L.ones(2, 3), 0.5),
    lambda L: L.ones(2, 3).logsumexp(dim=(0, 0.5)),
    lambda L: L.logsumexp(L.ones(2, 3), None),
    lambda L: L.special.logsumexp(L.ones(2, 3), 0.5),
    lambda L: L.softmax(L.ones(2, 3), (0,)),
    lambda L: L.nn.functional.softmax(L.ones(2, 3), dim=0.5),
    lambda L: L.nn.functional.softmin(L.ones(2, 3), 0.5),
    lambda L: L.special.softmax(L.ones(2, 3), 0.5),
    lambda L: L.ones(2, 3).sum((0, 0.5)),
])
def test_wrong_typed_dim_examples(call):
    assert same_message(call, TypeError)


def test_dim_parser_tables_match_torch():
    """The tables `wrong_dim` reads: which ops' parser lists its overloads for a `dim` it
    cannot take, and which read `dim` as a list of ints (their ATen schemas)."""
    from ember._aliases import _LIST_DIM, _OVERLOADED_DIM, _OVERLOADED_LIST_DIM

    listed = set()
    for method in (False, True):
        for name in METHODS if method else FUNCTIONS:
            for extra in ((), (0,), (1,), (torch.ones(2, 3),), (0.5,)):
                x = torch.ones(2, 3)
                f = getattr(x, name) if method else functools.partial(getattr(torch, name), x)
                if "invalid combination" in (_words(lambda L, f=f, e=extra: f(*e, dim=0.5))
                                             or ""):
                    listed.add(name)
    assert listed - {"split"} <= _OVERLOADED_DIM, listed - _OVERLOADED_DIM  # (split: Python)
    for name in _LIST_DIM | _OVERLOADED_LIST_DIM:
        aten = name.removeprefix("special_").rstrip("_")
        kinds = {str(a.type) for s in _SCHEMAS(f"aten::{aten}") for a in s.arguments
                 if a.name == "dim"}
        assert any("List[int]" in k for k in kinds), (name, kinds)
