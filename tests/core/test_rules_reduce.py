"""The jvp and batch rules of the reduction area (reduce.py, scan.py, softmax.py,
sorting.py, searchsorted.py, stats.py, composite.py's isin and histogram.py): every
primitive and every family member, checked against finite differences and against a loop.

Each case is a public call; the primitives of this area it binds are each checked alone
(bound with the arguments and params the call gave them), so a rule of another area
does not decide these tests. Inputs are float64 with distinct values away from kinks,
so that an argmax or a sort is the same under the finite-difference step.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.rule_checks import check_batch, check_jvp, primitive_calls

import ember
from ember._core import BY_LOOP, MISSING, Member, batch_rules, bind, jvp_rule, loop_reasons
from ember.ops import (
    composite,
    counting,
    extrema,
    histogram,
    reduce,
    scan,
    searchsorted,
    softmax,
    sorting,
    stats,
)
from ember.ops._pair_norms import in_order_sum

F = ember.nn.functional

FAMILIES = (reduce.reduce_p, reduce.pick_p, scan.scan_p)
PRIMITIVES = FAMILIES + (
    extrema.argextremum_p, softmax.softmax_p, softmax.softmax_backward_p, sorting.unique_p,
    sorting.unique_consecutive_p, searchsorted.searchsorted_p, counting.bincount_p,
    counting.histc_p, stats.quantile_index_p, composite.isin_p, histogram.histogram_p)


def _distinct(*shape, seed: int = 0, low: float = 0.5):
    """float64 values, all distinct and at least 1/(2n) apart, in [low, low + 1)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    v = (rng.permutation(n) + 0.25 + 0.5 * rng.random(n)) / n + low
    return ember.tensor(v.reshape(shape), dtype=ember.float64)


def _signed(*shape, seed: int = 1):
    """As `_distinct`, with both signs and distinct magnitudes away from 0."""
    rng = np.random.default_rng(seed)
    x = _distinct(*shape, seed=seed).numpy()
    return ember.tensor(x * rng.choice([-1.0, 1.0], size=shape), dtype=ember.float64)


X = _distinct(3, 4, 5)
S = _signed(3, 4)
V = _distinct(6)
Z = ember.tensor(0.75, dtype=ember.float64)  # a 0-d input
SEQ = ember.tensor(np.sort(_distinct(3, 5, seed=4).numpy(), axis=-1), dtype=ember.float64)
Y = F.softmax(_distinct(3, 5, seed=5), 1)
G = _signed(3, 5, seed=6)

# (id, call, args, how many primitives of this area it binds)
CASES = [
    ("sum", lambda x: x.sum(), (X,), 1),
    ("sum_dims", lambda x: x.sum((0, 2), keepdim=True), (X,), 1),
    ("sum_0d", lambda z: z.sum(), (Z,), 1),
    ("nansum", lambda x: ember.nansum(x, 1), (X,), 1),
    ("mean", lambda x: x.mean(), (X,), 1),
    ("mean_dims", lambda x: x.mean(-1), (X,), 1),
    ("prod", lambda s: s.prod(), (S,), 1),
    ("prod_dim", lambda x: x.prod(1, keepdim=True), (X,), 1),
    ("amax", lambda s: s.amax((0, 1)), (S,), 1),
    ("amin", lambda x: x.amin(2, keepdim=True), (X,), 1),
    ("max_all", lambda s: s.max(), (S,), 1),
    ("min_all", lambda x: x.min(), (X,), 1),
    ("aminmax", lambda x: ember.aminmax(x, dim=1), (X,), 2),
    ("any", lambda s: (s > 0).any(1), (S,), 1),
    ("all", lambda s: s.all(), (S,), 1),
    # (every example of the loop is the same bool tensor here, so the whole batch's truth
    # is each one's; tests/ops/test_reduce.py checks a batch whose examples disagree)
    ("is_all_true", lambda s: ember._is_all_true(s > 0), (S,), 1),
    ("is_any_true", lambda x: ember._is_any_true(x > 1.2), (X,), 1),
    ("count_nonzero", lambda s: ember.count_nonzero(s - s.round(), 0), (S,), 1),
    ("hash_tensor", lambda x: ember.hash_tensor(x, (0, 2), keepdim=True), (X,), 1),
    ("logsumexp", lambda x: ember.logsumexp(x, (1, 2)), (X,), 1),
    ("sum_in_order", lambda x: in_order_sum(x), (X,), 1),  # (cdist's sums)
    ("var", lambda x: x.var(1), (X,), 1),
    ("std", lambda x: x.std((0, 2), keepdim=True, correction=0), (X,), 1),
    ("norm2", lambda s: ember.linalg.vector_norm(s), (S,), 1),
    ("norm1", lambda s: ember.linalg.vector_norm(s, 1, 1), (S,), 1),
    ("norm3", lambda s: ember.linalg.vector_norm(s, 3, 0, keepdim=True), (S,), 1),
    ("norm_half", lambda x: ember.linalg.vector_norm(x, 0.5, 1), (X,), 1),
    ("norm_inf", lambda s: ember.linalg.vector_norm(s, float("inf"), 1), (S,), 1),
    ("median", lambda x: x.median(), (X,), 1),
    ("nanmedian", lambda s: s.nanmedian(), (S,), 1),
    ("argmax", lambda x: x.argmax(), (X,), 1),
    ("argmax_keepdim", lambda x: x.argmax(keepdim=True), (X,), 1),
    ("argmin_dim", lambda x: x.argmin(1, keepdim=True), (X,), 1),
    ("argmax_0d", lambda z: z.argmax(0), (Z,), 1),
    ("max_dim", lambda x: x.max(1), (X,), 1),
    ("min_dim", lambda s: s.min(0, keepdim=True), (S,), 1),
    ("max_dim_0d", lambda z: z.max(0), (Z,), 1),
    ("median_dim", lambda x: x.median(2), (X,), 1),
    ("nanmedian_dim", lambda s: s.nanmedian(1, keepdim=True), (S,), 1),
    ("mode", lambda x: x.mode(1), (X,), 1),
    ("kthvalue", lambda x: x.kthvalue(2, 2), (X,), 1),
    ("sort", lambda s: s.sort(1, descending=True), (S,), 1),
    ("sort_0d", lambda z: z.sort(), (Z,), 1),
    ("sort_stable", lambda s: s.sort(stable=True, dim=0, descending=True), (S,), 1),
    ("topk", lambda x: x.topk(2, 1), (X,), 1),
    ("topk_smallest", lambda x: x.topk(3, 0, largest=False), (X,), 1),
    ("cummax", lambda s: s.cummax(1), (S,), 1),
    ("cummin", lambda x: x.cummin(2), (X,), 1),
    ("cumsum", lambda x: x.cumsum(1), (X,), 1),
    ("cumsum_0d", lambda z: z.cumsum(0), (Z,), 1),
    ("cumprod", lambda s: s.cumprod(1), (S,), 1),
    ("logcumsumexp", lambda s: ember.logcumsumexp(s * 3, 0), (S * 3,), 1),
    ("softmax", lambda x: F.softmax(x, 1), (X,), 1),
    ("log_softmax", lambda x: F.log_softmax(x, -1), (X,), 1),
    ("softmax_0d", lambda z: ember.softmax(z, 0), (Z,), 1),
    ("softmax_backward_data", lambda g, y: bind(softmax.softmax_backward_p, g, y, dim=1),
     (G, Y), 1),
    ("log_softmax_backward_data",
     lambda g, y: bind(softmax.softmax_backward_p, g, y.log(), dim=1, log=True), (G, Y), 1),
    ("quantile", lambda x: ember.quantile(x, 0.3, dim=1), (X,), 1),
    ("searchsorted", lambda s, v: ember.searchsorted(s, v), (SEQ, _distinct(3, 2, seed=7)), 1),
    ("searchsorted_1d", lambda s, v: ember.searchsorted(s[0], v, right=True),
     (SEQ, _distinct(2, 3, seed=8)), 1),
    ("isin", lambda e, t: ember.isin(e, t), (X, X[0, :2]), 1),
    ("unique", lambda x: ember.unique(x.round(decimals=1), return_counts=True), (X,), 1),
    ("unique_consecutive", lambda x: ember.unique_consecutive(x.round(decimals=1)), (V,), 1),
    ("bincount", lambda v: ember.bincount((v * 4).long()), (V,), 1),
    ("histc", lambda x: ember.histc(x, 4), (X,), 1),
    ("histogram", lambda x: ember.histogram(x, 4), (X,), 1),
    ("histogramdd", lambda x: ember.histogramdd(x.reshape(-1, 2), 3), (X,), 1),
]


def _mine(fn, args) -> list:
    """The calls of this area's primitives that `fn(*args)` binds."""
    return [c for c in primitive_calls(fn, *args) if c[0] in PRIMITIVES]


@pytest.mark.parametrize("fn, args, expected", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_jvp_and_batch_rules_of_each_call(fn, args, expected):
    calls = _mine(fn, args)
    assert len(calls) == expected
    for prim, pargs, params in calls:
        def one(*a, prim=prim, params=params):
            return bind(prim, *a, **params)

        differentiable = jvp_rule(prim, params) is not None and any(
            isinstance(a, ember.Tensor) and a.dtype.is_floating_point for a in pargs)
        assert check_jvp(one, *pargs) == int(differentiable)
        looped = batch_rules[prim] is BY_LOOP
        assert check_batch(one, *pargs) == int(not looped)


_RNG = np.random.default_rng(9)
C = ember.tensor(_RNG.standard_normal((3, 4)) + 1j * _RNG.standard_normal((3, 4)),
                 dtype=ember.complex128)
COMPLEX = {
    "var": lambda c: c.var(1), "std": lambda c: c.std(), "prod": lambda c: c.prod(1),
    "norm2": lambda c: ember.linalg.vector_norm(c, 2, 1),
    "norm3": lambda c: ember.linalg.vector_norm(c, 3), "cumprod": lambda c: c.cumprod(1),
    "logcumsumexp": lambda c: ember.logcumsumexp(c, 1),
    "logsumexp": lambda c: ember.logsumexp(c, 0), "mean": lambda c: c.mean(),
}


@pytest.mark.parametrize("fn", COMPLEX.values(), ids=COMPLEX.keys())
def test_jvp_rules_of_complex_inputs(fn):
    # a complex input, its tangent along a real direction (for the real-valued var and
    # norm, Re(conj(grad) t)); the complex branches of the rules differ from the real ones
    (call,) = _mine(fn, (C,))
    prim, pargs, params = call
    assert check_jvp(lambda *a: bind(prim, *a, **params), *pargs) == 1


def test_every_member_and_primitive_of_the_area_is_exercised():
    seen = set()
    for _, fn, args, _ in CASES:
        for prim, _, params in _mine(fn, args):
            fn_ = params.get("fn")
            seen.add(fn_ if isinstance(fn_, Member) else prim)
    members = {m for fam in FAMILIES for m in fam.members.values()}
    assert members | (set(PRIMITIVES) - set(FAMILIES)) == seen


def test_every_primitive_and_member_has_jvp_and_batch_entries():
    assert len(PRIMITIVES) == 14
    for prim in PRIMITIVES:
        assert batch_rules.get(prim, MISSING) is not MISSING, prim.name
        if batch_rules[prim] is BY_LOOP:
            assert loop_reasons[prim], prim.name
        if prim in FAMILIES:
            for m in prim.members.values():
                assert jvp_rule(prim, {"fn": m}) is not MISSING, m.name
        else:
            assert jvp_rule(prim, {}) is not MISSING, prim.name
    looped = sorted(p.name for p in PRIMITIVES if batch_rules[p] is BY_LOOP)
    assert looped == ["bincount", "histc", "histogram", "unique",
                      "unique_consecutive"]


def test_member_node_names_are_pytorchs():
    x = _distinct(2, 3).requires_grad_()
    names = {
        "SumBackward0": x.sum(), "SumBackward1": x.sum(0), "MeanBackward0": x.mean(),
        "MeanBackward1": x.mean(1), "ProdBackward0": x.prod(), "ProdBackward1": x.prod(1),
        "AmaxBackward0": x.amax(1), "AminBackward0": x.amin(1), "MaxBackward1": x.max(),
        "MinBackward1": x.min(), "MaxBackward0": x.max(1)[0], "MinBackward0": x.min(1)[0],
        "NansumBackward0": x.nansum(), "LogsumexpBackward0": x.logsumexp(1),
        "VarBackward0": x.var(), "StdBackward0": x.std(),
        "LinalgVectorNormBackward0": ember.linalg.vector_norm(x),
        "MedianBackward0": x.median(), "MedianBackward1": x.median(1)[0],
        "NanmedianBackward0": x.nanmedian(), "NanmedianBackward1": x.nanmedian(1)[0],
        "ModeBackward0": x.mode(1)[0], "KthvalueBackward0": x.kthvalue(1)[0],
        "SortBackward0": x.sort()[0], "TopkBackward0": x.topk(1)[0],
        "CummaxBackward0": x.cummax(1)[0], "CumminBackward0": x.cummin(1)[0],
        "CumsumBackward0": x.cumsum(1), "CumprodBackward0": x.cumprod(1),
        "LogcumsumexpBackward0": x.logcumsumexp(1), "SoftmaxBackward0": x.softmax(1),
        "LogSoftmaxBackward0": x.log_softmax(1),
    }
    for name, y in names.items():
        assert type(y.grad_fn).__name__ == name
    y = x.softmax(1)
    (g,) = ember.autograd.grad(y, x, ember.ones_like(y), create_graph=True)
    assert type(g.grad_fn).__name__ == "SoftmaxBackwardDataBackward0"
    y = x.log_softmax(1)
    (g,) = ember.autograd.grad(y, x, ember.ones_like(y), create_graph=True)
    assert type(g.grad_fn).__name__ == "LogSoftmaxBackwardDataBackward0"
