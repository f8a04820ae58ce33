"""Type promotion and broadcasting of the binary ops, property-tested against torch.

Hypothesis draws an op, two operands (a tensor of any dtype and shape, a 0-d tensor, or a
Python bool / int / float / complex) and shape pairs that do or do not broadcast; the result
dtype, shape and values, or the exception type, must be torch's.
"""

import operator

import numpy as np
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ember
from ops._elementwise import np_dtype, same_outcome

from helpers import DTYPE_PAIRS, to_torch

OPS = {
    "add": (ember.add, torch.add), "sub": (ember.sub, torch.sub),
    "mul": (ember.mul, torch.mul), "div": (ember.div, torch.div),
    "floor_divide": (ember.floor_divide, torch.floor_divide),
    "remainder": (ember.remainder, torch.remainder), "pow": (ember.pow, torch.pow),
    "float_power": (ember.float_power, torch.float_power),
    "eq": (ember.eq, torch.eq), "lt": (ember.lt, torch.lt),
    "maximum": (ember.maximum, torch.maximum), "fmin": (ember.fmin, torch.fmin),
    "atan2": (ember.atan2, torch.atan2), "hypot": (ember.hypot, torch.hypot),
    "bitwise_and": (ember.bitwise_and, torch.bitwise_and),
    "bitwise_xor": (ember.bitwise_xor, torch.bitwise_xor),
    "logical_or": (ember.logical_or, torch.logical_or),
    "+": (operator.add, operator.add), "-": (operator.sub, operator.sub),
    "*": (operator.mul, operator.mul), "/": (operator.truediv, operator.truediv),
    "**": (operator.pow, operator.pow), "%": (operator.mod, operator.mod),
    "<<": (operator.lshift, operator.lshift), "&": (operator.and_, operator.and_),
    "where": (lambda a, b: ember.where(ember.tensor(True), a, b),
              lambda a, b: torch.where(torch.tensor(True), a, b)),
}
DTYPES = [e for e, _ in DTYPE_PAIRS]
SCALARS = [True, 2, 1.5, 1 + 2j]


@st.composite
def shape_pairs(draw):
    """Two shapes that broadcast, or (about a third of the time) two that do not."""
    base = draw(st.lists(st.integers(0, 4), max_size=4))
    start = draw(st.integers(0, len(base)))
    other = [draw(st.sampled_from([d, 1])) for d in base[start:]]
    if other and draw(st.integers(0, 2)) == 0:
        i = draw(st.integers(0, len(other) - 1))
        d = base[start + i]
        other[i] = d + 1 if d > 0 else 2
        if base[start + i] == 1:
            base = list(base)
            base[start + i] = 3
    pair = (tuple(base), tuple(other))
    return pair if draw(st.booleans()) else pair[::-1]


@st.composite
def operand(draw, shape):
    kind = draw(st.sampled_from(["tensor", "tensor", "zero_dim", "scalar"]))
    if kind == "scalar":
        return draw(st.sampled_from(SCALARS))
    dtype = draw(st.sampled_from(DTYPES))
    shape = shape if kind == "tensor" else ()
    seed = draw(st.integers(0, 1000))
    # Values in 1..3: no division by zero, no negative powers, nothing out of range.
    values = np.random.default_rng(seed).integers(1, 4, size=shape)
    return ember.tensor(values.astype(np_dtype(dtype)) if dtype is not ember.bool
                        else values > 1)


def as_torch(x):
    return to_torch(x) if isinstance(x, ember.Tensor) else x


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(OPS)), shape_pairs(), st.data())
def test_binary_result_dtype_shape_and_errors_match_torch(name, shapes, data):
    a = data.draw(operand(shapes[0]), label="a")
    b = data.draw(operand(shapes[1]), label="b")
    assume(isinstance(a, ember.Tensor) or isinstance(b, ember.Tensor))
    # NOTE: ember has no complex32 (DESIGN.md): half with a complex number is out of scope.
    assume(not _half_with_complex(a, b))
    fe, ft = OPS[name]
    same_outcome(fe, ft, (a, b), (as_torch(a), as_torch(b)))


def _half_with_complex(a, b) -> bool:
    if not isinstance(a, ember.Tensor):
        a, b = b, a
    return torch.result_type(as_torch(a), as_torch(b)) == torch.complex32


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.sampled_from(["+", "*", "&", "-"]))
def test_in_place_forms_follow_torchs_casting_rule(d1, d2, name):
    fe, _ = OPS[name]
    iop = {"+": operator.iadd, "*": operator.imul, "&": operator.iand, "-": operator.isub}[name]
    a = ember.ones(2, 3, dtype=d1)
    b = ember.ones(3, dtype=d2)
    same_outcome(iop, iop, (a, b), (to_torch(a), to_torch(b)))


def test_result_type_matches_torch_for_all_pairs_and_scalars():
    for d1 in DTYPES:
        t1 = to_torch(ember.ones(2, dtype=d1))
        e1 = ember.ones(2, dtype=d1)
        for other in [*SCALARS, *(ember.ones((), dtype=d) for d in DTYPES),
                      *(ember.ones(2, dtype=d) for d in DTYPES)]:
            got = ember.result_type(e1, other)
            want = torch.result_type(t1, as_torch(other))
            if want == torch.complex32:
                continue  # ember has no complex32 (DESIGN.md)
            assert str(got).split(".")[1] == str(want).split(".")[1], (d1, other)
