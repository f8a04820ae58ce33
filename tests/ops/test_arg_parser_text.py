"""The argument parser's words for a non-tensor where a torch function wants a Tensor:
the type is named as CPython's tp_name names it (`numpy.ndarray`, not `ndarray`), None is
refused like any other non-tensor, and two-operand ops name the operand at fault."""

import numpy as np
import pytest
import torch

import ember
from ember.ops._arg_parser_text import not_tensor

from helpers import raised

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
