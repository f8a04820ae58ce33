"""Forward-mode (jvp) and vmap (batch) rules of the views, movement, copies, factories and
random ops: every primitive and member of the area is checked against finite differences
and against a loop over examples (tests/rule_checks.py), and each has both entries."""

from __future__ import annotations

import numpy as np
import pytest
from tests.rule_checks import check_batch, check_jvp

import ember
from ember._core import BY_LOOP, MISSING, NOT_DIFFERENTIABLE, Family, batch_rules, jvp_rules
from ember._core.primitive import ByParam, loop_reasons
from ember.ops.copy import COPY, clone_p
from ember.ops.device_copy import to_device_p
from ember.ops.dtype_views import as_complex_fn, dtype_fn, reinterpret_p
from ember.ops.factories import factory_p
from ember.ops.fill import FILL_, FILL_TENSOR, ZERO, fill_p
from ember.ops.inplace_view import copy_slices_geom, copy_slices_p
from ember.ops.join import flip_p, repeat_p, roll_p
from ember.ops.movement import detach_p
from ember.ops.random_ops import _DRAWS, sample_p
from ember.ops.views import restride, restride_p, view_p

AREA = [view_p, detach_p, restride_p, copy_slices_p, repeat_p, flip_p, roll_p, clone_p,
        fill_p, to_device_p, factory_p, sample_p, reinterpret_p]


def _t(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.uniform(0.5, 1.5, shape), dtype=ember.float64)


x3 = _t(3, 4, 5)
m2 = _t(3, 4, seed=1)
v1 = _t(4, seed=2)
s0 = _t(seed=3)
ones = _t(1, 4, 1, seed=4)

# (id, call, inputs, primitives it binds and the rules check): every view member, and the
# copies, writes and reorderings, each through its public call where one binds it
CALLS = [
    ("view", lambda a: a.view(4, 15), (x3,), 1),
    ("alias", lambda a: a[...], (x3,), 1),
    ("reshape_copy", lambda a: a.transpose(0, 1).reshape(-1), (x3,), 3),  # t, clone, unsafe
    # (a view of a non-contiguous tensor: PyTorch's _reshape_alias; transpose, then it)
    ("reshape_alias", lambda a: a.transpose(0, 1).reshape(a.shape[1], a.shape[0], -1, 1),
     (x3,), 2),
    ("permute", lambda a: a.permute(2, 0, 1), (x3,), 1),
    ("transpose", lambda a: a.transpose(0, 2), (x3,), 1),
    ("transpose_0d", lambda a: a.transpose(0, -1), (s0,), 1),
    ("t", lambda a: a.t(), (m2,), 1),
    ("t_1d", lambda a: a.t(), (v1,), 1),
    ("expand", lambda a: a.expand(2, 3, 4, 2), (_t(3, 4, 1),), 1),
    ("squeeze", lambda a: a.squeeze(), (ones,), 1),
    ("squeeze_dim", lambda a: a.squeeze(2), (ones,), 1),
    ("squeeze_dims", lambda a: a.squeeze((0, 2)), (ones,), 1),
    ("unsqueeze", lambda a: a.unsqueeze(1), (m2,), 1),
    ("slice", lambda a: a[:, 1:4:2], (x3,), 1),
    ("narrow", lambda a: a.narrow(2, 1, 3), (x3,), 1),
    ("select", lambda a: a.select(1, 2), (x3,), 1),
    ("diagonal", lambda a: a.diagonal(1, 0, 2), (x3,), 1),
    ("diagonal_neg", lambda a: a.diagonal(-1), (m2,), 1),
    ("unfold", lambda a: a.unfold(1, 2, 1), (x3,), 1),
    ("unfold_0d", lambda a: a.unfold(0, 1, 1), (s0,), 1),
    ("as_strided", lambda a: a.as_strided((2, 3), (1, 2), 1), (m2,), 1),
    ("restride", lambda g: restride(g, ((2, 3), (1, 2), 1), ((3, 4), (4, 1), 0)),
     (_t(2, 3),), 1),
    ("restride_overlapping", lambda g: restride(g, ((2, 3), (0, 1), 0), ((4,), (1,), 0)),
     (_t(2, 3),), 1),
    ("view_as_real", lambda a: ember.view_as_real(a), (x3 + 0.5j * x3.flip(0),), 1),
    ("view_as_complex", lambda a: ember.view_as_complex(a), (_t(3, 4, 2, seed=6),), 1),
    ("real", lambda a: a.real, (x3 * (1 - 2j),), 2),  # view_as_real, then select
    ("imag", lambda a: a.imag, (x3 * (1 - 2j),), 2),
    ("copy_slices", lambda b, s: copy_slices_geom(b, s, ((3, 4), (4, 1), 0), ((3,), (4,), 1)),
     (m2, _t(3, seed=5)), 1),
    ("repeat", lambda a: a.repeat(2, 1, 3), (m2,), 1),
    ("flip", lambda a: a.flip(0, 2), (x3,), 1),
    ("roll", lambda a: a.roll((1, -2), (0, 2)), (x3,), 1),
    ("roll_flat", lambda a: a.roll(3), (m2,), 1),
    ("clone", lambda a: a.clone(), (x3,), 1),
    ("clone_contiguous", lambda a: a.t().contiguous(), (m2,), 2),  # t, clone
    ("copy", lambda d, s: ember._core.bind(fill_p, d, s, fn=COPY), (m2, v1), 1),
    ("fill", lambda d: ember._core.bind(fill_p, d, 2.5, fn=FILL_), (m2,), 1),
    ("zero", lambda d: ember._core.bind(fill_p, d, 0.0, fn=ZERO), (m2,), 1),
    ("fill_tensor", lambda d, v: ember._core.bind(fill_p, d, v, fn=FILL_TENSOR),
     (m2, _t(seed=7)), 1),
    ("draw", lambda d, s: ember._core.bind(fill_p, d, s, fn=_DRAWS["NormalBackward0"]),
     (m2, _t(3, 4, seed=6)), 1),
]


@pytest.mark.parametrize("fn, args, n", [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_jvp_rules_match_finite_differences(fn, args, n):
    assert check_jvp(fn, *args) == n


@pytest.mark.parametrize("fn, args, n", [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_batch_rules_match_a_loop(fn, args, n):
    assert check_batch(fn, *args) == n


def test_a_cast_copy_batches():
    assert check_batch(lambda a: a.float(), x3) == 1


def test_the_view_batch_rule_copies_only_when_a_view_cannot_express_the_batch():
    from ember.ops.views import view_ as VIEW

    a = _t(3, 2, 4)  # batch dim 1: per example (3, 4), viewed as (12,)
    out, d = batch_rules[view_p]((a,), (1,), fn=VIEW, size=(12,))
    assert d == 0 and out.shape == (2, 12) and out._base is not a
    np.testing.assert_array_equal(out.numpy(), a.numpy().transpose(1, 0, 2).reshape(2, 12))
    out, d = batch_rules[view_p]((a,), (0,), fn=VIEW, size=(8,))
    assert d == 0 and out.shape == (3, 8) and out._base is a  # a view where one exists


def test_random_ops_and_factories_batch_by_a_loop_with_a_reason_and_have_no_tangent():
    for prim in (factory_p, sample_p):
        assert batch_rules[prim] is BY_LOOP and loop_reasons[prim]
        # (the drawn_* members hand drawn values on, linked to the parameters they were drawn
        # from as in PyTorch's graph: a zero gradient, and a zero tangent)
        # (binomial's derivative is "not implemented" in PyTorch: forward mode refuses it)
        assert all(r is NOT_DIFFERENTIABLE or getattr(r, "not_implemented", None) == "binomial"
                   for m, r in jvp_rules[prim].table.items() if not m.name.startswith("drawn_"))
    # (their public calls bind them, with nothing for the checks to differentiate)
    p = _t(3, 4).clamp(0, 1)
    assert check_jvp(lambda q: ember.bernoulli(q), p) == 0
    assert check_batch(lambda: ember.zeros(3)) == 0


def test_to_device_is_linear_and_batches_on_meta():
    a = _t(2, 3)
    out, d = batch_rules[to_device_p]((a,), (1,), dst=ember.device("meta"), src=a.device,
                                      dtype=None)
    assert d == 1 and out.device.type == "meta" and out.shape == (2, 3)
    t = jvp_rules[to_device_p]((a,), (a * 2,), None, dst=ember.device("meta"), src=a.device,
                               dtype=None)
    assert t.device.type == "meta" and t.shape == (2, 3)


def _entries(prim, table):
    rule = table.get(prim, MISSING)
    if isinstance(rule, ByParam):
        return [rule.table.get(m, MISSING) for m in prim.members.values()]
    return [rule]


def test_every_primitive_and_member_of_the_area_has_a_jvp_and_a_batch_entry():
    members = sum(len(p.members) for p in AREA if isinstance(p, Family))
    assert (len(AREA), members) == (13, 49)
    for prim in AREA:
        assert all(r is not MISSING for r in _entries(prim, jvp_rules)), prim
        assert batch_rules.get(prim, MISSING) is not MISSING, prim


def test_view_as_complex_batches_with_the_batch_as_the_pairs_axis_neighbour():
    a = _t(3, 2, 4, seed=7)  # per example (3, 2), batched along the last axis
    out, d = batch_rules[reinterpret_p]((a,), (2,), fn=as_complex_fn)
    assert d == 0 and out.shape == (4, 3)
    np.testing.assert_array_equal(out.numpy(), a.numpy()[:, 0].T + 1j * a.numpy()[:, 1].T)
    out, d = batch_rules[reinterpret_p]((a.permute(2, 0, 1).contiguous(),), (0,),
                                        fn=as_complex_fn)
    assert d == 0 and out._base is not None  # a view where the layout allows one


def test_view_dtype_has_no_tangent_and_batches_with_the_batch_in_front():
    assert check_jvp(lambda a: a.view(ember.int64), x3) == 0  # (no derivative)
    assert check_batch(lambda a: a.view(ember.int64), x3) == 1
    for d in (0, 1):  # not the last: the rescaled dim must keep stride 1
        a = ember.stack([x3[0], x3[1] * 2], dim=d)
        out, od = batch_rules[reinterpret_p]((a,), (d,), fn=dtype_fn, dtype=ember.float16)
        assert od == 0 and out.dtype is ember.float16 and out.shape == (2, 4, 20)
        for i, ex in enumerate((x3[0], x3[1] * 2)):
            np.testing.assert_array_equal(out[i].numpy(), ex.view(ember.float16).numpy())


def test_every_view_member_is_exercised_above():
    from tests.rule_checks import primitive_calls

    seen = set()
    for _, fn, args, _ in CALLS:
        seen |= {params["fn"] for prim, _, params in primitive_calls(fn, *args)
                 if prim is view_p}
    assert seen == set(view_p.members.values())


@pytest.mark.parametrize("fn, args, n", [c[1:] for c in CALLS if c[0] in (
    "view", "permute", "transpose", "t", "expand", "squeeze_dim", "unsqueeze", "slice",
    "select", "diagonal", "diagonal_neg", "unfold", "as_strided")],
                         ids=lambda v: "")
def test_each_view_members_numpy_kernel_takes_the_same_window(fn, args, n):
    from tests.rule_checks import primitive_calls

    (prim, pargs, params), = primitive_calls(fn, *args)
    member = params.pop("fn")
    got = member.kernel(pargs[0].numpy(), **params)
    assert np.shares_memory(got, pargs[0].numpy())
    np.testing.assert_array_equal(got, fn(*args).numpy())
