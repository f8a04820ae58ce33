"""Forward-mode (jvp) and vmap (batch) rules of the binary and ternary pointwise maps: the
`binary` and `ternary` families (every member) and the `compare` and `bitwise` primitives
(every relation), each reached through its public calls."""

from __future__ import annotations

import numpy as np
import pytest
from tests.rule_checks import check_batch, check_jvp, primitive_calls

import ember
from ember._core import BY_LOOP, MISSING, batch_rules, bind, jvp_rule, rule_params
from ember.ops import fake_quant_learnable
from ember.ops._pair_norms import c_pow
from ember.ops.binary import COMPARISONS, binary_p, compare_p, div_wide_fn, mul_wide_fn
from ember.ops.glu import glu_fn
from ember.ops.logical_bitwise import _BITWISE, bitwise_p
from ember.ops.registry import apply
from ember.ops.ternary import ternary_p


def _t(shape, lo=0.5, hi=2.0, seed=0):
    return ember.tensor(np.random.default_rng(seed).uniform(lo, hi, shape))


X = _t((2, 3))  # float64, away from every kink and pole used below
Y = _t((3,), seed=1)  # broadcasts against X
Z = _t((2, 3), seed=2)
W = _t((2, 3), 0.1, 0.9, seed=3)  # lerp weights
COND = ember.tensor([[True], [False]])
I = ember.tensor([[3, -5, 12], [7, 0, -1]])
J = ember.tensor([1, 2, 3])
B1 = ember.tensor([[True, False, True], [False, False, True]])
B2 = ember.tensor([True, True, False])

# (public call, its arguments, primitives whose jvp is checked, primitives batched)
CASES = {
    "add": (lambda a, b: a + b, (X, Y), 1, 1),
    "add_scalar": (lambda a: 2.5 + a, (X,), 1, 1),
    "add_alpha": (lambda a, b: ember.add(a, b, alpha=2), (X, Y), 1, 1),
    "sub_alpha": (lambda a, b: ember.sub(a, b, alpha=0.5), (X, Y), 1, 1),
    # the members for a 16-bit float tensor and a number, bound here in float64 (finite
    # differences need it; the 16-bit path differs from it only in rounding)
    "mul_wide": (lambda a: apply(binary_p, a, np.float32(1.5), fn=mul_wide_fn), (X,), 1, 1),
    "div_wide": (lambda a: apply(binary_p, a, np.float32(3.0), fn=div_wide_fn), (X,), 1, 1),
    "sub": (lambda a, b: a - b, (Y, X), 1, 1),
    "rsub_scalar": (lambda a: 2 - a, (X,), 1, 1),
    "rsub": (lambda a, b: ember.rsub(a, b, alpha=1.5), (X, Y), 1, 1),
    "mul": (lambda a, b: a * b, (X, Y), 1, 1),
    "mul_scalar": (lambda a: a * 1.5, (X,), 1, 1),
    "div": (lambda a, b: a / b, (X, Y), 1, 1),
    "div_scalar": (lambda a: a / 3.0, (X,), 1, 1),
    "div_trunc": (lambda a, b: ember.div(a, b, rounding_mode="trunc"), (X, Y), 1, 1),
    "div_floor": (lambda a, b: ember.div(a, b, rounding_mode="floor"), (X, Y), 1, 1),
    "pow_tensor_scalar": (lambda a: a ** 2.5, (X,), 1, 1),
    "pow_tensor_tensor": (lambda a, b: a ** b, (X, Y), 1, 1),
    "pow_scalar": (lambda a: 2.5 ** a, (X,), 1, 1),
    "remainder": (lambda a, b: ember.remainder(a, b), (X, Y * 0.3), 1, 1),
    "remainder_scalar": (lambda a: a % 0.7, (X,), 1, 1),
    "fmod": (lambda a, b: ember.fmod(a, b), (X, Y * 0.3), 1, 1),
    "fmod_scalar": (lambda a: ember.fmod(a, 0.7), (X,), 1, 1),
    "atan2": (lambda a, b: ember.atan2(a, b), (X - 1.2, Y - 1.0), 1, 1),
    "hypot": (lambda a, b: ember.hypot(a, b), (X - 1.2, Y), 1, 1),
    "copysign": (lambda a, b: ember.copysign(a, b), (X - 1.2, Y - 1.0), 1, 1),
    "maximum": (lambda a, b: ember.maximum(a, b), (X, Y), 1, 1),
    "minimum": (lambda a, b: ember.minimum(a, b), (X, Y), 1, 1),
    "fmax": (lambda a, b: ember.fmax(a, b), (X, Y), 1, 1),
    "fmin": (lambda a, b: ember.fmin(a, b), (X, Y), 1, 1),
    "xlog1py": (lambda a, b: ember.special.xlog1py(a, b), (X - 1.2, Y), 1, 1),
    "xlogy": (lambda a, b: ember.xlogy(a, b), (X - 1.2, Y), 1, 1),
    "where": (lambda c, a, b: ember.where(c, a, b), (COND, X, Y), 1, 1),
    "where_scalar": (lambda c, a: ember.where(c, a, 0.5), (COND, X), 1, 1),
    "clamp": (lambda a: ember.clamp(a, 0.8, 1.5), (X,), 1, 1),
    "clamp_min": (lambda a: ember.clamp(a, min=1.1), (X,), 1, 1),
    "clamp_tensor": (lambda a, lo, hi: ember.clamp(a, lo, hi), (X, Y * 0.5 + 0.3, Z + 0.2), 1, 1),
    "clamp_min_fn": (lambda a: ember.clamp_min(a, 1.1), (X,), 1, 1),
    "clamp_min_tensor": (lambda a, lo: ember.clamp_min(a, lo), (X, Y * 0.5 + 0.3), 1, 1),
    "clamp_max_fn": (lambda a: ember.clamp_max(a, 1.1), (X,), 1, 1),
    "clamp_max_tensor": (lambda a, hi: a.clamp_max(hi), (X, Z + 0.2), 1, 1),
    "lerp": (lambda a, b: ember.lerp(a, b, 0.3), (X, Y), 1, 1),
    "lerp_tensor": (lambda a, b, w: ember.lerp(a, b, w), (X, Z, W), 1, 1),
    "addcmul": (lambda a, b, c: ember.addcmul(a, b, c, value=0.5), (X, Y, Z), 1, 1),
    "addcdiv": (lambda a, b, c: ember.addcdiv(a, b, c, value=0.5), (Y, X, Z), 1, 1),
    "floor_divide": (lambda a, b: ember.floor_divide(a, b), (X, Y), None, 1),
    "remainder_self_scalar": (lambda a: 2.5 % a, (X,), None, 1),
    "zeta": (lambda s, q: ember.special.zeta(s, q), (X + 1.5, Y), None, 1),
    "igamma": (lambda a, x: ember.igamma(a, x), (X, Z), None, 1),
    "igammac": (lambda a, x: ember.igammac(a, x), (X, Z), None, 1),
    "heaviside": (lambda a, v: ember.heaviside(a, v), (X - 1.2, Z), None, 1),
    "ldexp": (lambda a, b: ember.ldexp(a, b), (X, Y), 1, 1),
    "ldexp_int": (lambda a: ember.ldexp(a, J), (X,), 1, 1),
    "nextafter": (lambda a, b: ember.nextafter(a, b), (X, Y), 1, 1),
    "cdist_c_pow": (lambda a: c_pow(a, 3.0), (X,), 1, 1),  # (cdist's general-p terms)
}
# not differentiable: no tangent to check (0), batched once
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    CASES[_op] = (getattr(ember, _op), (X, Y), 0, 1)
for _op in ("logical_and", "logical_or", "logical_xor"):
    CASES[_op] = (getattr(ember, _op), (B1, B2), 0, 1)
for _op in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
            "bitwise_right_shift", "gcd", "lcm"):
    CASES[_op] = (getattr(ember, _op), (I, J), 0, 1)
CASES["isclose"] = (lambda a, b: ember.isclose(a, b, rtol=0.1), (X, Z), 0, 1)
# LSQ's fake quantisations and their backward factors: no forward mode in torch (None)
_LSQ = dict(quant_min=-8, quant_max=7, grad_factor=0.5)
for _pc in (False, True):
    _qs = (Y[:1] * 0.1, Z[0, :1] * 3) if not _pc else (Y.reshape(1, 3) * 0.1, Z[:1] * 3)
    CASES[f"lsq_{_pc}"] = (lambda a, s, z, pc=_pc: apply(
        ternary_p, a, s, z, fn=fake_quant_learnable._forward[pc], per_channel=pc, **_LSQ),
        (X * 2,) + _qs, None, 1)
    for _which in ("inside", "a", "b"):
        CASES[f"lsq_{_pc}_{_which}"] = (lambda a, s, z, pc=_pc, w=_which: apply(
            ternary_p, a, s, z, fn=fake_quant_learnable._factor[pc], per_channel=pc, which=w,
            **_LSQ), (X * 2,) + _qs, None, 1)
CASES["compare_scalar"] = (lambda a: a > 1.2, (X,), 0, 1)
# the orthogonal polynomials (x in (-1, 1), float degrees): no derivative in torch
DEGREES = ember.tensor([1.0, 2.0, 5.0], dtype=ember.float64)
for _name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
              "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
              "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
              "laguerre_polynomial_l", "legendre_polynomial_p"):
    CASES[_name] = (getattr(ember.special, _name), (X - 1.2, DEGREES), 0, 1)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[2] is not None])
def test_jvp_rules_match_finite_differences(name):
    fn, args, n_jvp, _ = CASES[name]
    assert check_jvp(fn, *args) == n_jvp


@pytest.mark.parametrize("name", CASES)
def test_batch_rules_match_a_loop(name):
    fn, args, _, n_batch = CASES[name]
    assert check_batch(fn, *args) == n_batch


def test_a_higher_rank_unbatched_operand_broadcasts_against_the_logical_axes_only():
    rule = batch_rules[binary_p]
    from ember.ops.binary import add_fn

    xs = _t((4, 3), seed=5)  # batch of 4 vectors of 3
    out, dim = rule((xs, X), (0, None), fn=add_fn)
    assert dim == 0 and out.shape == (4, 2, 3)
    np.testing.assert_allclose(out.numpy(), xs.numpy()[:, None] + X.numpy())


def _jvp_of_second_input(fn, a, b, eps=1e-6):
    """The rule's tangent along the second input only, and its central difference."""
    ((prim, pargs, params),) = primitive_calls(fn, a, b)
    t = _t(tuple(pargs[1].shape), -1.0, 1.0, seed=7)
    rule = jvp_rule(prim, params)
    with ember.no_grad():
        out = bind(prim, *pargs, **params)
        got = rule(pargs, (None, t), out, **rule_params(prim, params))
        fd = (bind(prim, pargs[0], pargs[1] + eps * t, **params)
              - bind(prim, pargs[0], pargs[1] - eps * t, **params)) / (2 * eps)
    return got, fd, rule, (prim, pargs, params, out)


@pytest.mark.parametrize("name", ["zeta", "igamma", "igammac"])
def test_functions_differentiable_in_their_second_input_only(name):
    fn, args, _, _ = CASES[name]
    got, fd, rule, (prim, pargs, params, out) = _jvp_of_second_input(fn, *args)
    np.testing.assert_allclose(got.numpy(), fd.numpy(), rtol=1e-5, atol=1e-7)
    # a tangent on the first input: PyTorch has no derivative there, and says so
    with pytest.raises(NotImplementedError, match="is not implemented"):
        rule(pargs, (ember.ones_like(pargs[0]), None), out, **rule_params(prim, params))


# Bound only for float16 / bfloat16 GLU, which has no forward mode in PyTorch (its rule
# refuses, as there); its batch rule is the family's, checked here in float64.
NO_FORWARD_MODE = {"glu": (lambda a, b: apply(binary_p, a, b, fn=glu_fn), (X, Z))}


@pytest.mark.parametrize("name", NO_FORWARD_MODE)
def test_functions_without_forward_mode_refuse_it_and_batch_as_a_loop(name):
    fn, args = NO_FORWARD_MODE[name]
    assert check_batch(fn, *args) == 1
    ((prim, pargs, params),) = primitive_calls(fn, *args)
    rule = jvp_rule(prim, params)
    with pytest.raises(NotImplementedError, match="not implemented"):
        rule(pargs, tuple(ember.ones_like(a) for a in pargs), None, **rule_params(prim, params))


def _members():
    return [(fam, m) for fam in (binary_p, ternary_p) for m in fam.members.values()]


def test_every_function_of_the_area_has_a_jvp_and_a_batch_rule():
    for fam, m in _members():
        assert jvp_rule(fam, {"fn": m}) is not MISSING, f"{m} has no jvp rule"
        assert batch_rules.get(fam, MISSING) not in (MISSING, BY_LOOP)
    for prim in (compare_p, bitwise_p):
        assert jvp_rule(prim, {}) is None  # marked not differentiable
        assert batch_rules.get(prim, MISSING) not in (MISSING, BY_LOOP)
    assert len(binary_p.members) == 50 and len(ternary_p.members) == 15
    assert set(COMPARISONS) == {"eq", "ne", "lt", "le", "gt", "ge", "logical_and",
                                "logical_or", "logical_xor", "isclose"}
    assert set(_BITWISE) == {"and", "or", "xor", "left_shift", "right_shift", "gcd", "lcm"}


def test_the_cases_reach_every_function_of_the_area():
    reached = set()
    for fn, args in [c[:2] for c in CASES.values()] + list(NO_FORWARD_MODE.values()):
        for prim, _, params in primitive_calls(fn, *args):
            reached.add(params.get("fn") or (prim, params.get("op")))
    for _, m in _members():
        assert m in reached, f"no case binds {m}"
    for op in COMPARISONS:
        assert (compare_p, op) in reached, f"no case binds compare {op}"
    for op in _BITWISE:
        assert (bitwise_p, op) in reached, f"no case binds bitwise {op}"
