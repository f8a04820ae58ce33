"""The core unary ops (unary.py) against torch: every dtype, 0-d / empty / transposed inputs,
exceptions, gradients (vs torch, finite differences, second order), in-place and meta."""

import pytest
import torch

import ember
from ops._elementwise import Spec, make, same_outcome, unary_tests

from helpers import same_message, same_result

POS = ((0.1, 3.0),)
SPECS = [
    Spec("neg", ember.neg, torch.neg),
    Spec("exp", ember.exp, torch.exp),
    Spec("log", ember.log, torch.log, POS),
    Spec("sqrt", ember.sqrt, torch.sqrt, POS),
    Spec("sin", ember.sin, torch.sin),
    Spec("cos", ember.cos, torch.cos),
    Spec("tanh", ember.tanh, torch.tanh),
    Spec("sigmoid", ember.sigmoid, torch.sigmoid),
    Spec("abs", ember.abs, torch.abs),
    Spec("sign", ember.sign, torch.sign),
    Spec("sgn", ember.sgn, torch.sgn),
    Spec("logical_not", ember.logical_not, torch.logical_not, grad=False),
    Spec("bitwise_not", ember.bitwise_not, torch.bitwise_not, grad=False),
    Spec("neg_operator", lambda x: -x, lambda x: -x, inplace=None),
    Spec("invert_operator", lambda x: ~x, lambda x: ~x, grad=False, inplace=None),
]
test_values, test_grad_vs_torch, test_grad_fd, test_inplace, test_meta = unary_tests(SPECS)

COMPLEX_GRAD = [s for s in SPECS if s.name in ("exp", "log", "sqrt", "sin", "cos", "tanh",
                                               "sigmoid", "abs", "sgn", "neg")]


@pytest.mark.parametrize("spec", COMPLEX_GRAD, ids=[s.name for s in COMPLEX_GRAD])
def test_complex_grad_vs_torch(spec):
    from ops._elementwise import _grad_compare

    e, t = make((3, 4), ember.complex128, (0.2, 2.0), seed=4)
    _grad_compare(spec, [e], [t])


def test_sigmoid_is_stable_at_extremes():
    x = [-1000.0, -50.0, 0.0, 50.0, 1000.0]
    same_outcome(ember.sigmoid, torch.sigmoid, (ember.tensor(x),), (torch.tensor(x),))


def test_abs_of_complex_is_real_and_abs_inplace_complex_raises():
    e, t = make((3,), ember.complex64)
    same_outcome(ember.abs, torch.abs, (e,), (t,))
    same_outcome(lambda x: x.abs_(), lambda x: x.abs_(), (e,), (t,))


def test_sign_of_complex_raises_runtime_error():
    e, t = make((3,), ember.complex64)
    same_outcome(ember.sign, torch.sign, (e,), (t,))


def test_grad_fn_names_match_torch():
    for name in ("exp", "log", "sqrt", "sin", "tanh", "sigmoid", "abs", "neg", "sgn"):
        e = ember.tensor([0.5, 1.5], requires_grad=True)
        t = torch.tensor([0.5, 1.5], requires_grad=True)
        assert type(getattr(e, name)().grad_fn).__name__ == \
            type(getattr(t, name)().grad_fn).__name__


def test_out_argument_writes_and_casts():
    e, t = make((2, 3), ember.float32)
    oe, ot = ember.empty(2, 3, dtype=ember.float64), torch.empty(2, 3, dtype=torch.float64)
    assert ember.exp(e, out=oe) is oe
    torch.exp(t, out=ot)
    # NOTE: torch computes in the out= dtype; ember computes in float32, then casts.
    same_outcome(lambda o: o, lambda o: o, (oe,), (ot,), 1e-6, 1e-7)
    bad_e, bad_t = ember.empty(2, 3, dtype=ember.int64), torch.empty(2, 3, dtype=torch.int64)
    same_outcome(lambda x: ember.exp(x, out=bad_e), lambda x: torch.exp(x, out=bad_t), (e,), (t,))


def test_non_tensor_input_raises_type_error():
    same_outcome(ember.exp, torch.exp, (2.0,), (2.0,))
    same_outcome(ember.neg, torch.neg, ([1.0],), ([1.0],))


# --- out= of another dtype: refused by same-dtype unary ops, checked before the kernel -------

_EXACT = ["abs", "absolute", "neg", "negative", "sign", "sgn", "bitwise_not", "floor", "ceil",
          "trunc", "fix", "round", "frac", "conj_physical"]
_OUT_CASES = [("float32", "float64"), ("float32", "int64"), ("int64", "int32"),
              ("int64", "float32"), ("int64", "bool"), ("int16", "int8"), ("uint8", "int16")]


def _out_call(name: str, src: str, dst: str, **kw):
    def call(L):
        x = L.tensor([3, -4, 0], dtype=getattr(L, src)) if src != "float32" else \
            L.tensor([1.5, -2.5, 0.0])
        return getattr(L, name)(x, out=L.empty(3, dtype=getattr(L, dst)), **kw)
    return call


@pytest.mark.parametrize("src,dst", _OUT_CASES)
@pytest.mark.parametrize("name", _EXACT)
def test_same_dtype_unary_ops_refuse_other_out_dtypes_like_torch(name, src, dst):
    # NOTE: PyTorch's message ("Found dtype Int but expected Long") comes before its kernel
    # refusals (frac of an integer, bitwise_not of a float).
    same_message(_out_call(name, src, dst))


def test_exact_out_cases_that_pass_or_refuse_otherwise_like_torch():
    same_message(_out_call("round", "float32", "float64", decimals=1))
    same_message(_out_call("nan_to_num", "float32", "float64"))
    same_message(_out_call("isposinf", "float32", "float32"))
    for name in ("isnan", "isinf", "isfinite"):
        same_message(_out_call(name, "float32", "bool"), TypeError)
    # the same dtype writes; complex abs writes into any float; grad's refusal comes first
    same_result(_out_call("abs", "int16", "int16"))
    same_result(lambda L: L.abs(L.tensor([3 + 4j]), out=L.empty(1, dtype=L.float64)))
    same_message(lambda L: L.abs(L.ones(2, requires_grad=True), out=L.empty(2, dtype=L.float64)))
