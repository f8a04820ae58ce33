"""Forward-mode (jvp) and vmap (batch) rules of the unary elementwise maps: every member of the
`unary` family and of `activation_backward`, each through a public call (or, for the two
derivative kernels, a direct bind), checked against finite differences and against a loop.

Inputs are float64 (complex128 for the complex-capable maps), inside each function's domain
and away from its kinks (0 for relu and abs, integers for floor, +-3 for hardswish ...).
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.rule_checks import check_batch, check_jvp, primitive_calls

import ember
import ember.nn.functional as F
from ember import special
from ember._core import (
    BY_LOOP,
    MISSING,
    Interpreter,
    batch_rules,
    interpret,
    jvp_rules,
    vjp_rules,
)
from ember.ops import activation_backward
from ember.ops.activation import activation_backward_p, gelu_backward_p, threshold_backward_p
from ember.ops.float_parts import frexp_exponent_fn, frexp_mantissa_fn
from ember.ops.registry import bind
from ember.ops.unary import unary_p

# real inputs by domain, shaped (2, 3) so that the batch axis can go in three places
_VALUES = {
    "any": [-1.7, -0.6, 0.35, 0.8, 1.3, 2.2],  # no integers, half-integers, 0 or +-1, +-3
    "pos": [0.3, 0.65, 1.1, 1.45, 2.3, 3.2],
    "above1": [1.2, 1.55, 2.1, 2.6, 3.3, 4.1],
    "unit": [-0.85, -0.45, -0.1, 0.2, 0.55, 0.9],  # inside (-1, 1)
    "prob": [0.07, 0.22, 0.38, 0.55, 0.71, 0.93],  # inside (0, 1)
    "mid": [0.24, 0.33, 0.45, 0.52, 0.67, 0.78],  # inside (0.2, 0.8): logit's eps=0.2
    # off every branch cut (no real values), |z| < 1 where asin / atanh / log1p care
    "complex": [0.5 + 0.3j, -0.4 + 0.7j, 0.6 - 0.5j, -0.3 - 0.45j, 0.2 + 0.8j, 0.7 - 0.2j],
    "int": [-3, 0, 5, 7, -1, 2],
}


def _x(kind: str) -> ember.Tensor:
    a = np.array(_VALUES[kind]).reshape(2, 3)
    dtype = {"complex": ember.complex128, "int": ember.int64}.get(kind, ember.float64)
    return ember.tensor(a, dtype=dtype)


# (member, call, input kind); a member may appear more than once (params, complex inputs)
CASES = [
    ("neg", lambda x: -x, "any"),
    ("neg", lambda x: ember.neg(x), "complex"),
    ("exp", ember.exp, "any"),
    ("exp", ember.exp, "complex"),
    ("log", ember.log, "pos"),
    ("log", ember.log, "complex"),
    ("sqrt", ember.sqrt, "pos"),
    ("sqrt", ember.sqrt, "complex"),
    ("sin", ember.sin, "any"),
    ("sin", ember.sin, "complex"),
    ("cos", ember.cos, "any"),
    ("cos", ember.cos, "complex"),
    ("tanh", lambda x: x.tanh(), "any"),
    ("tanh", ember.tanh, "complex"),
    ("sigmoid", lambda x: x.sigmoid(), "any"),
    ("sigmoid", ember.sigmoid, "complex"),
    ("abs", ember.abs, "any"),
    ("abs", ember.abs, "complex"),
    ("sign", ember.sign, "any"),
    ("sgn", ember.sgn, "any"),
    ("sgn", ember.sgn, "complex"),
    ("logical_not", ember.logical_not, "any"),
    ("bitwise_not", ember.bitwise_not, "int"),
    ("conj", ember.conj, "complex"),
    ("conj_physical", ember.conj_physical, "complex"),
    ("rsqrt", ember.rsqrt, "pos"),
    ("rsqrt", ember.rsqrt, "complex"),
    ("exp2", ember.exp2, "any"),
    ("exp2", ember.exp2, "complex"),
    ("expm1", ember.expm1, "any"),
    ("expm1", ember.expm1, "complex"),
    ("log2", ember.log2, "pos"),
    ("log2", ember.log2, "complex"),
    ("log10", ember.log10, "pos"),
    ("log10", ember.log10, "complex"),
    ("log1p", ember.log1p, "pos"),
    ("log1p", ember.log1p, "complex"),
    ("reciprocal", ember.reciprocal, "any"),
    ("reciprocal", ember.reciprocal, "complex"),
    ("tan", ember.tan, "unit"),
    ("tan", ember.tan, "complex"),
    ("asin", ember.asin, "unit"),
    ("asin", ember.asin, "complex"),
    ("acos", ember.acos, "unit"),
    ("acos", ember.acos, "complex"),
    ("atan", ember.atan, "any"),
    ("atan", ember.atan, "complex"),
    ("sinh", ember.sinh, "any"),
    ("sinh", ember.sinh, "complex"),
    ("cosh", ember.cosh, "any"),
    ("cosh", ember.cosh, "complex"),
    ("asinh", ember.asinh, "any"),
    ("asinh", ember.asinh, "complex"),
    ("acosh", ember.acosh, "above1"),
    ("acosh", ember.acosh, "complex"),
    ("atanh", ember.atanh, "unit"),
    ("atanh", ember.atanh, "complex"),
    ("logit", ember.logit, "prob"),
    ("logit", lambda x: ember.logit(x, eps=0.2), "mid"),
    ("erf", ember.erf, "any"),
    ("erfc", ember.erfc, "any"),
    ("erfinv", ember.erfinv, "unit"),
    ("floor", ember.floor, "any"),
    ("ceil", ember.ceil, "any"),
    ("trunc", ember.trunc, "any"),
    ("round", ember.round, "any"),
    ("round_decimals", lambda x: ember.round(x, decimals=2), "any"),
    ("frac", ember.frac, "any"),
    ("float_class", ember.isfinite, "any"),
    ("float_class", ember.isneginf, "any"),
    ("nan_to_num", lambda x: ember.nan_to_num(x, nan=0.5), "any"),
    ("angle", ember.angle, "any"),
    ("angle", ember.angle, "complex"),
    # (frexp binds both of its members: each bound alone here)
    ("frexp", lambda x: bind(unary_p, x, fn=frexp_mantissa_fn), "any"),
    ("frexp_exponent", lambda x: bind(unary_p, x, fn=frexp_exponent_fn), "any"),
    ("relu", lambda x: x.relu(), "any"),
    ("relu", lambda x: F.relu(x), "any"),
    ("hardtanh", F.hardtanh, "any"),
    ("hardtanh", F.relu6, "any"),
    ("threshold", lambda x: F.threshold(x, 0.5, -1.0), "any"),
    ("gelu", F.gelu, "any"),
    ("gelu", lambda x: F.gelu(x, approximate="tanh"), "any"),
    ("silu", F.silu, "any"),
    ("silu", F.silu, "complex"),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=3.0), "any"),
    ("mish", F.mish, "any"),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), "any"),
    ("elu", lambda x: F.elu(x, 0.7), "any"),
    ("elu", F.selu, "any"),
    ("celu", lambda x: F.celu(x, 1.5), "any"),
    ("hardsigmoid", F.hardsigmoid, "any"),
    ("hardswish", F.hardswish, "any"),
    ("log_sigmoid", F.logsigmoid, "any"),
    ("lgamma", ember.lgamma, "pos"),
    ("digamma", ember.digamma, "pos"),
    ("polygamma", lambda x: ember.polygamma(2, x), "pos"),
    ("mvlgamma", lambda x: ember.mvlgamma(x, 3), "above1"),
    ("i0", ember.i0, "any"),
    ("special_i0e", special.i0e, "any"),
    ("special_i1", special.i1, "any"),
    ("special_i1e", special.i1e, "any"),
    ("special_bessel_j0", special.bessel_j0, "any"),
    ("special_bessel_j1", special.bessel_j1, "any"),
    ("special_modified_bessel_i0", special.modified_bessel_i0, "any"),
    ("special_modified_bessel_i1", special.modified_bessel_i1, "any"),
    ("special_spherical_bessel_j0", special.spherical_bessel_j0, "any"),
    ("special_bessel_y0", special.bessel_y0, "pos"),
    ("special_bessel_y1", special.bessel_y1, "pos"),
    ("special_modified_bessel_k0", special.modified_bessel_k0, "pos"),
    ("special_modified_bessel_k1", special.modified_bessel_k1, "pos"),
    ("special_scaled_modified_bessel_k0", special.scaled_modified_bessel_k0, "pos"),
    ("special_scaled_modified_bessel_k1", special.scaled_modified_bessel_k1, "pos"),
    ("special_airy_ai", special.airy_ai, "any"),
    ("special_erfcx", special.erfcx, "any"),
    ("special_ndtr", special.ndtr, "any"),
    ("special_ndtri", special.ndtri, "prob"),
    ("special_log_ndtr", special.log_ndtr, "any"),
    ("special_entr", special.entr, "pos"),
]

# members with no derivative: their jvp entry is NOT_DIFFERENTIABLE, so check_jvp counts none
NOT_DIFFERENTIABLE = {"logical_not", "bitwise_not", "float_class", "frexp_exponent",
                      "special_bessel_j0",
                      "special_bessel_j1", "special_modified_bessel_i0",
                      "special_modified_bessel_i1", "special_spherical_bessel_j0",
                      "special_bessel_y0", "special_bessel_y1", "special_modified_bessel_k0",
                      "special_modified_bessel_k1", "special_scaled_modified_bessel_k0",
                      "special_scaled_modified_bessel_k1", "special_airy_ai"}


def _id(case) -> str:
    return f"{case[0]}-{case[2]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_each_call_binds_its_member_once(case):
    name, fn, kind = case
    calls = primitive_calls(fn, _x(kind))
    assert [(p, params["fn"].name) for p, _, params in calls] == [(unary_p, name)]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_jvp_matches_finite_differences(case):
    name, fn, kind = case
    assert check_jvp(fn, _x(kind)) == (0 if name in NOT_DIFFERENTIABLE else 1)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_batch_matches_a_loop(case):
    name, fn, kind = case
    assert check_batch(fn, _x(kind)) == 1


def _threshold_backward(g, x):
    return bind(activation_backward_p, g, x, fn=threshold_backward_p, threshold=0.5)


def _gelu_backward(g, x, y):
    return bind(activation_backward_p, g, x, y, fn=gelu_backward_p)


def _smooth_backward(name):
    member = getattr(activation_backward, f"{name}_backward_p")
    return lambda g, y: bind(activation_backward_p, g, y, fn=member)


SMOOTH = ["sigmoid", "tanh", "silu"]


def _backward_args():
    x = _x("any")
    g = ember.tensor(np.linspace(-1.3, 0.9, 6).reshape(2, 3), dtype=ember.float64)
    return g, x, F.gelu(x)


def test_the_derivative_kernels_jvp_and_batch():
    g, x, y = _backward_args()
    assert check_jvp(_threshold_backward, g, x) == 1
    assert check_jvp(_gelu_backward, g, x, y) == 1
    assert check_batch(_threshold_backward, g, x) == 1
    assert check_batch(_gelu_backward, g, x, y) == 1
    for name in SMOOTH:  # (y: an output of the activation, or SiLU's input)
        y = x if name == "silu" else getattr(ember, name)(x)
        assert check_jvp(_smooth_backward(name), g, y) == 1
        assert check_batch(_smooth_backward(name), g, y) == 1
    # an unbatched input of higher rank than the batched one's logical rank
    assert check_batch(_threshold_backward, g[0], x) == 1


class _Members(Interpreter):
    def __init__(self) -> None:
        self.fns: list = []

    def process(self, prim, args, params):
        if prim is activation_backward_p:
            self.fns.append(params["fn"])
        return self.lower(prim, args, params)


def test_the_derivative_kernels_bound_by_backward_are_the_members_checked():
    x = _x("any").requires_grad_()
    loss = F.gelu(x).sum() + x.relu().sum() + x.sigmoid().sum() + x.tanh().sum() + \
        F.silu(x).sum() + F.hardsigmoid(x).sum() + F.gelu(x, approximate="tanh").sum()
    with interpret(_Members()) as rec:
        ember.autograd.grad(loss, x)
    assert sorted(m.name for m in rec.fns) == ["gelu_backward", "gelu_tanh_backward",
                                                "hardsigmoid_backward", "sigmoid_backward",
                                                "silu_backward", "tanh_backward",
                                                "threshold_backward"]


def test_every_member_is_checked_and_has_its_rules():
    covered = {c[0] for c in CASES}
    # (the MLX face's own members, mlx_..., registered when ember.mlx is imported, are
    # checked against MLX's in tests/mlx)
    assert covered == {m for m in unary_p.members if not m.startswith("mlx_")}
    assert set(activation_backward_p.members) == {"threshold_backward", "gelu_backward",
                                                  "sigmoid_backward", "tanh_backward",
                                                  "silu_backward", "hardsigmoid_backward",
                                                  "gelu_tanh_backward"}
    for fam in (unary_p, activation_backward_p):
        assert batch_rules.get(fam, MISSING) not in (MISSING, BY_LOOP)
        for m in fam.members.values():
            assert jvp_rules[fam].table.get(m, MISSING) is not MISSING, m
            assert vjp_rules[fam].table.get(m, MISSING) is not MISSING, m
    assert {m.name for m in unary_p.members.values()
            if jvp_rules[unary_p].table[m] is None} == NOT_DIFFERENTIABLE
