"""clamp's and where's refusals and warnings in PyTorch's words: a float result written into
an integer tensor (clamp names the C++ type for number bounds, the dtype for tensor ones),
where's out= overload taking tensors only, and its once-per-process uint8 warning."""

from __future__ import annotations

import pytest
import torch

import ember
from fresh_process import with_server

from helpers import same_error, same_message

CALLS = {
    "clamp_": lambda m, x: x.clamp_(0.5),
    "clamp_tensor_bound": lambda m, x: x.clamp_(m.tensor(0.5)),
    "clamp_out": lambda m, x: m.clamp(x, 0.5, out=x),
    "clamp_min_": lambda m, x: x.clamp_min_(0.5),
    "clip_": lambda m, x: x.clip_(0.5, 1.5),
    "add_": lambda m, x: x.add_(0.5),
    "where_out_number_other": lambda m, x: m.where(x > 0, x, 1.5, out=x),
    "where_out_number_input": lambda m, x: m.where(x > 0, 1, x, out=x),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_refusal_in_torchs_words(name):
    def call(m):
        return CALLS[name](m, m.arange(3))

    same_message(call, same_error(call))


def test_uint8_condition_warns_once_per_process_as_torch():
    script = (
        "import warnings, {m} as t\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3):\n"
        "        r = t.where(t.tensor([1, 0], dtype=t.uint8), 1., 0.)\n"
        "print(r.tolist(), [str(x.message).split(' (Triggered')[0] for x in w])\n")
    outs = [with_server(m).run_code(script.format(m=m)).stdout for m in ("torch", "ember")]
    assert outs[0] == outs[1] and "uint8 condition" in outs[0]


# a number bound beside a tensor one fits no overload of clamp (as the positional call reads;
# a keyword call's "got (...)" lists its keywords, which ember cannot tell from positions);
# clamp_min / clamp_max take no None bound. Method forms print their notes: every argument
# is marked where it meets a piece with a default, "(!float!, !Tensor!)".
MIXED = [
    lambda m, x, t: m.clamp(x, 0.0, t),
    lambda m, x, t: m.clamp(x, t, 1.0),
    lambda m, x, t: m.clip(x, 0.0, t),
    lambda m, x, t: m.clamp(x, 0.0, t, out=m.empty(3)),
    lambda m, x, t: x.clamp(0.0, t),
    lambda m, x, t: x.clamp_(0.0, t),
    lambda m, x, t: x.clip(t, 1),
    lambda m, x, t: x.clip_(t, 1),
    lambda m, x, t: x.clamp(t, "a"),
    lambda m, x, t: x.clamp("a", 1.0),
    lambda m, x, t: x.lerp(t, "a"),
    lambda m, x, t: m.clamp_min(x, None),
    lambda m, x, t: m.clamp_max(x, None, out=t),
    lambda m, x, t: x.clamp_max(None),
    lambda m, x, t: x.clamp_min_(None),
]


@pytest.mark.parametrize("i", range(len(MIXED)))
def test_bound_types_refused_in_the_parsers_words(i):
    def call(m):
        return MIXED[i](m, m.zeros(3), m.ones(3))

    same_message(call, TypeError)


# Tensor.where(condition, other): its own printed overloads, typed one place early
WHERE_METHOD = [
    lambda m, x: x.where(x > 0, "a"),
    lambda m, x: x.where("a", 1.0),
    lambda m, x: x.where(x > 0, [1]),
    lambda m, x: x.where(x > 0, None),
    lambda m, x: x.where(x > 0),
    lambda m, x: x.where(x > 0, x, x),
    lambda m, x: x.where(cond=x > 0, other=x),
    lambda m, x: x.where(),
]


@pytest.mark.parametrize("i", range(len(WHERE_METHOD)))
def test_where_method_refusals_in_the_parsers_words(i):
    same_message(lambda m: WHERE_METHOD[i](m, m.tensor([-1.0, 0.5, 2.0])), TypeError)


def test_where_method_takes_keywords_and_numbers():
    from helpers import same_result

    for call in (lambda m, x: x.where(condition=x > 0, other=m.zeros(3)),
                 lambda m, x: x.where(x > 0, other=2), lambda m, x: x.where(x > 0, True),
                 lambda m, x: x.where(x > 0, m.tensor(5))):
        same_result(lambda m, call=call: call(m, m.tensor([-1.0, 0.5, 2.0])))


# A complex number where lerp's weight or addcmul's / addcdiv's value meets real tensors, or
# one beyond the range of the type the kernel computes in: refused in c10's words, naming
# that C type (float for float16); with a zero imaginary part it is the real number
# (truncated for integer tensors).
COMPLEX_NUMBER = {
    "lerp": lambda m, x: m.lerp(x, x * 2, 0.5j),
    "lerp_ f16": lambda m, x: x.half().lerp_(x.half(), 1 + 2j),
    "lerp f64": lambda m, x: x.double().lerp(x.double(), -1j),
    "addcmul": lambda m, x: m.addcmul(x, x, x, value=1j),
    "addcdiv_ f64": lambda m, x: x.double().addcdiv_(x.double(), x.double() + 1, value=2j),
    "addcmul int": lambda m, x: m.addcmul(x.long(), x.long(), x.long(), value=0.5j),
    # (a finite number beyond the type the kernel computes in: float32 for float16)
    "lerp beyond float": lambda m, x: m.lerp(x.half(), x.half(), 1e300),
    "addcmul beyond int": lambda m, x: m.addcmul(x.int(), x.int(), x.int(), value=2 ** 40),
    "addcdiv beyond float": lambda m, x: m.addcdiv(x, x, x + 1, value=-1e39),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_NUMBER))
def test_complex_number_into_a_real_kernel_is_refused_as_torch(name):
    same_message(lambda m: COMPLEX_NUMBER[name](m, m.arange(3.0)))


def test_complex_number_with_zero_imaginary_part_is_its_real_part():
    got = []
    for m in (ember, torch):
        x = m.arange(3.0)
        got.append((m.lerp(x, x * 2 + 1, 0.25 + 0j).tolist(),
                    m.lerp(x.half(), x.half() + 1, 0.5 + 0j).tolist(),
                    m.addcmul(x.long(), x.long(), x.long(), value=2 + 0j).tolist(),
                    x.clone().addcdiv_(x, x + 1, value=-2 + 0j).tolist()))
    assert got[0] == got[1]
