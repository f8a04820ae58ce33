"""The argument parser's words for a non-tensor where a torch function wants a Tensor:
the type is named as CPython's tp_name names it (`numpy.ndarray`, not `ndarray`), None is
refused like any other non-tensor, and two-operand ops name the operand at fault."""

import numpy as np
import pytest
import torch

import ember
from ember.ops._arg_parser_text import not_tensor

from helpers import raised, refusals_unlike_torch, same_result

BAD = {"str": "s", "None": None, "list": [1.0], "tuple": (1, 2),
       "ndarray": np.ones(3, dtype=np.float32), "float64": np.float64(1.0)}

CALLS = {
    "add": lambda L, a: L.add(a, 1),
    "add other": lambda L, a: L.add(L.ones(2), a),
    "mul": lambda L, a: L.mul(a, 2),
    "sub": lambda L, a: L.sub(a, 2),
    "div": lambda L, a: L.div(a, 2),
    "maximum": lambda L, a: L.maximum(a, L.ones(2)),
    "matmul": lambda L, a: L.matmul(a, L.ones(2, 2)),
    "matmul other": lambda L, a: L.matmul(L.ones(2, 2), a),
    "mm": lambda L, a: L.mm(a, L.ones(2, 2)),
    "cat": lambda L, a: L.cat([a]),
    "cat second": lambda L, a: L.cat([L.ones(2), a]),
    "stack": lambda L, a: L.stack([a]),
    "sum": lambda L, a: L.sum(a),
    "mean": lambda L, a: L.mean(a),
    "argmax": lambda L, a: L.argmax(a),
    "softmax": lambda L, a: L.softmax(a, 0),
    "squeeze": lambda L, a: L.squeeze(a),
    "exp": lambda L, a: L.exp(a),
    "sqrt": lambda L, a: L.sqrt(a),
    "numel": lambda L, a: L.numel(a),
}


def _outcome(L, call, a):
    return raised(call, L, a)


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("name", list(CALLS))
def test_non_tensor_operand_as_torch(name, kind):
    call, a = CALLS[name], BAD[kind]
    assert _outcome(ember, call, a) == _outcome(torch, call, a)


def test_not_tensor_words():
    e = not_tensor("relu", "input", 1, np.zeros(2))
    assert isinstance(e, TypeError)
    assert str(e) == "relu(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"
    # a keyword-only parameter has no position in the parser's words
    assert str(not_tensor("addmm", "out", None, "s")) == \
        "addmm(): argument 'out' must be Tensor, not str"


def test_argument_readers():
    """need_int / need_number / need_bool / need_dtype take what torch's parser takes for
    an int, a Number, a bool and a dtype, and refuse the rest in its words."""
    from ember.ops._arg_parser_text import need_bool, need_dtype, need_int, need_number

    assert need_int(np.int64(3), "f", "k", 2) == 3
    assert need_int(ember.tensor([4]), "f", "k", 2) == 4  # (a one-element integer tensor)
    for bad, shown in ((True, "bool"), (1.0, "float"), (ember.ones(1), "Tensor"),
                       (ember.tensor([1, 2]), "Tensor"), (None, "NoneType")):
        with pytest.raises(TypeError) as e:
            need_int(bad, "f", "k", 2)
        assert str(e.value) == f"f(): argument 'k' (position 2) must be int, not {shown}"
    assert need_number(ember.tensor(2.0), "full", "fill_value", 2).ndim == 0
    with pytest.raises(TypeError, match=r"^full\(\): argument 'fill_value' \(position 2\) "
                                        r"must be Number, not Tensor$"):
        need_number(ember.ones(1), "full", "fill_value", 2)
    with pytest.raises(TypeError, match=r"^g\(\): argument 'b' must be bool, not int$"):
        need_bool(1, "g", "b")
    assert need_dtype(float, "zeros") is ember.float64 and need_dtype(None, "zeros") is None
    with pytest.raises(TypeError, match=r"^zeros\(\): argument 'dtype' must be [a-z]+\.dtype, "
                                        r"not str$"):
        need_dtype("float32", "zeros")


def test_method_positions_skip_self():
    """A method's positions start after `self`, as torch's parser counts them."""
    x = ember.ones(2, 2)
    for call in (lambda L, t: L.mm(t, "s"), lambda L, t: t.mm("s"),
                 lambda L, t: t.gather(1, "s"), lambda L, t: L.gather(t, 1, "s"),
                 lambda L, t: t.addmm(t, "s"), lambda L, t: t.addmm_(t, "s"),
                 lambda L, t: t.topk(1.5), lambda L, t: L.topk(t, 1.5)):
        assert raised(call, ember, x) == raised(call, torch, torch.ones(2, 2))


def _x(L):
    return L.ones(2, 3)


# calls torch's parser refuses, by class: each must be refused with torch's type and words
REFUSALS = {
    # a dim no overload takes: the overloads listed, by position or keyword as passed
    "sum float dim": lambda L: _x(L).sum(1.5),
    "sum keyword dim": lambda L: _x(L).sum(dim=1.5),
    "torch.sum str dim": lambda L: L.sum(_x(L), "a"),
    "torch.sum str dtype": lambda L: L.sum(_x(L), dtype="a"),
    "mean tensor dim": lambda L: _x(L).mean(L.ones(2)),
    "var float dim": lambda L: _x(L).var(1.5),
    "all tensor dim": lambda L: L.all(_x(L), L.ones(2)),
    "sort None dim": lambda L: L.sort(_x(L), None),
    "repeat_interleave keyword dim": lambda L: L.repeat_interleave(_x(L), 2, dim=1.5),
    "repeat_interleave method float": lambda L: _x(L).repeat_interleave(1.5),
    "tensor_split float": lambda L: L.tensor_split(_x(L), 1.5),
    "split float dim": lambda L: _x(L).split(1, 1.5),
    "split list, float dim": lambda L: _x(L).split([1, 1], 1.5),
    "count_nonzero keyword str dim": lambda L: _x(L).count_nonzero(dim="a"),
    "squeeze str dim": lambda L: L.ones(2, 1).squeeze("a"),
    "argsort keyword None dim": lambda L: _x(L).argsort(dim=None),
    # None where the overload has no None: not taken as "left out"
    "max None dim": lambda L: _x(L).max(None),
    "prod keyword None dim": lambda L: L.prod(_x(L), dim=None),
    "median None dim": lambda L: _x(L).median(None),
    "round None decimals": lambda L: L.round(_x(L), decimals=None),
    "repeat_interleave None": lambda L: _x(L).repeat_interleave(None),
    # a keepdim that is no bool, by position or keyword
    "sum int keepdim": lambda L: _x(L).sum(0, 1),
    "max None keepdim": lambda L: _x(L).max(0, None),
    "amax keyword str keepdim": lambda L: L.amax(_x(L), 0, keepdim="a"),
    "all int keepdim (listed)": lambda L: _x(L).all(0, 1),
    # a dim list ("tuple of ints") of one overload: its words, of a bad first element too
    "amax tensor dim": lambda L: L.amax(_x(L), L.ones(2)),
    "amax float element": lambda L: _x(L).amax([0.5]),
    "logsumexp None dim": lambda L: L.logsumexp(_x(L), None),
    "vector_norm float dim": lambda L: L.linalg.vector_norm(_x(L), 2, 1.5),
    "norm tensor p": lambda L: _x(L).norm(L.ones(2)),
    "randint later str element": lambda L: L.randint(5, size=[2, "a"]),
    # one overload plausible by count: the argument named rather than the overloads listed
    "sum str input": lambda L: L.sum("a"),
    "trapezoid str y": lambda L: L.trapezoid("a"),
    "randint float size element": lambda L: L.randint(5, [2.5]),
    # a non-tensor operand of an op with several overloads
    "std_mean str": lambda L: L.std_mean("a"),
    "movedim list": lambda L: L.movedim([1.0], 0, 1),
    "normal str mean": lambda L: L.normal("a", _x(L)),
    "scatter_ str index": lambda L: _x(L).scatter_(1, "a", 1.0),
    # numbers the parser reads as float, bool
    "allclose str rtol": lambda L: L.allclose(_x(L), _x(L), "a"),
    "allclose tensor atol": lambda L: L.allclose(_x(L), _x(L), 1e-5, L.ones(2)),
    "isclose str equal_nan": lambda L: L.isclose(_x(L), _x(L), 1e-5, 1e-8, "a"),
    # an unbound method given no tensor for self: CPython's descriptor words
    "Tensor.exp str": lambda L: L.Tensor.exp("a"),
    "Tensor.abs None": lambda L: L.Tensor.abs(None),
    "Tensor.sum str": lambda L: L.Tensor.sum("a"),
    "Tensor.add list": lambda L: L.Tensor.add([1.0], 1),
    # torch's Python code touching the argument first
    "split str": lambda L: L.split("a", 1),
    "tensordot list": lambda L: L.tensordot([1.0], _x(L), 1),
    "norm None": lambda L: L.norm(None),
    "backward list": lambda L: L.ones(2, requires_grad=True).mul(2).backward([1.0, 2.0]),
    "backward int": lambda L: L.ones(2, requires_grad=True).mul(2).backward(2),
    "ger str": lambda L: L.ger("a", L.ones(2)),
}


# their neighbours torch takes: what is left out, None where an overload has None, an int
# given as a NumPy int or a 0-d integer tensor
TAKEN = {
    "sum None dim": lambda L: _x(L).sum(None),
    "amax None dim": lambda L: _x(L).amax(None),
    "amax 0-d tensor dim": lambda L: _x(L).amax(L.tensor(1)),
    "all None dim": lambda L: _x(L).all(None),
    "max no dim": lambda L: _x(L).max(),
    "prod no dim": lambda L: L.prod(_x(L)),
    "median no dim": lambda L: _x(L).median(),
    "round no decimals": lambda L: L.round(_x(L)),
    "repeat_interleave counts": lambda L: L.repeat_interleave(L.tensor([1, 2])),
    "tensor_split NumPy int": lambda L: L.tensor_split(_x(L), np.int64(2), 1),
    "allclose 0-d rtol": lambda L: L.allclose(_x(L), _x(L), L.tensor(1e-5)),
    "norm 0-d p": lambda L: _x(L).norm(L.tensor(3.0)),
    "backward tuple": lambda L: L.ones(2, requires_grad=True).mul(2).backward((L.ones(2),)),
}


def test_refusals_by_class_as_torch(monkeypatch):
    monkeypatch.setattr(ember._names, "prefix", "torch")
    wrong = refusals_unlike_torch(REFUSALS)
    assert not wrong, "\n".join(wrong)
    for name, call in TAKEN.items():
        result = call(torch)
        if result is None:
            assert call(ember) is None, name
        else:
            same_result(call)


def test_refusal_first_line_only_where_listed(monkeypatch):
    """The overloads torch lists after its first line: ember's listing has those it knows,
    each with its note where the call has as many arguments as it has parameters."""
    monkeypatch.setattr(ember._names, "prefix", "torch")
    e, t = (raised(lambda L: L.sum(L.ones(2), "a"), L)[1] for L in (ember, torch))
    assert e == t
