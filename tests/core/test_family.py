"""A family primitive: one primitive for many functions of one kind, each member with its
own kernel, node name and derivatives; the family's batch rule serves them all."""

from __future__ import annotations

import numpy as np
import pytest
from tests.rule_checks import check_batch, check_jvp

import ember
from ember._core import (
    Family,
    Member,
    batch_rules,
    bind,
    defbatch,
    defjvp,
    defvjp,
    jvp_rules,
    meta_rules,
    primitives,
    vjp_rules,
)
from ember._core.primitive import kernels
from ember.ops.registry import apply_


@pytest.fixture
def family():
    fam = Family("test_pointwise")

    def meta(x):
        return x.shape, x.dtype

    double = Member(fam, "test_double", lambda a: a * 2, meta)
    defvjp(double, lambda g, out, x: g * 2, reads=((),))
    defjvp(double, lambda primals, tangents, out: tangents[0] * 2)
    cube = Member(fam, "test_cube", lambda a: a ** 3, meta, grad_name="CubeBackward7")
    defvjp(cube, lambda g, out, x: g * 3 * x * x)
    defjvp(cube, lambda primals, tangents, out: tangents[0] * 3 * primals[0] ** 2)
    defbatch(fam, lambda args, dims, **params: (bind(fam, *args, **params), dims[0]))
    yield fam, double, cube
    primitives.remove(fam)
    for table in (kernels["cpu"], meta_rules, vjp_rules, jvp_rules, batch_rules):
        table.pop(fam, None)


def test_members_share_one_primitive_and_keep_their_node_names_and_gradients(family):
    fam, double, cube = family
    x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = bind(fam, x, fn=double)
    z = bind(fam, y, fn=cube)
    assert type(y.grad_fn).__name__ == "TestDoubleBackward0"
    assert type(z.grad_fn).__name__ == "CubeBackward7"
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * (2 * np.array([1.0, -2, 3])) ** 2)


def test_a_member_runs_in_place_and_on_meta(family):
    fam, double, _ = family
    x = ember.tensor([1.0, 2.0])
    assert apply_(fam, x, fn=double) is x
    np.testing.assert_array_equal(x.numpy(), [2.0, 4.0])
    m = bind(fam, ember.empty(2, 3, device="meta"), fn=double)
    assert m.shape == (2, 3) and m.device.type == "meta"


def test_the_rule_checks_accept_correct_rules_and_catch_a_wrong_one(family):
    fam, double, cube = family
    x = ember.tensor([0.5, -1.5, 2.0], dtype=ember.float64)
    assert check_jvp(lambda t: bind(fam, bind(fam, t, fn=double), fn=cube), x) == 2
    assert check_batch(lambda t: bind(fam, t, fn=cube), x) == 1
    defjvp(cube, lambda primals, tangents, out: tangents[0] * 2 * primals[0] ** 2)
    with pytest.raises(AssertionError, match="jvp of test_pointwise"):
        check_jvp(lambda t: bind(fam, t, fn=cube), x)


def test_a_tangent_through_the_vjp_matches_finite_differences():
    from ember._core import BY_VJP, jvp_by_vjp, jvp_rules
    from ember.ops.matmul import matmul_p

    saved = jvp_rules.get(matmul_p)
    jvp_by_vjp(matmul_p, "test: the transposed VJP stands in for the rule")
    try:
        assert jvp_rules[matmul_p] is BY_VJP
        a = ember.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=ember.float64)
        b = ember.tensor(np.arange(12.0).reshape(3, 4) / 5 - 1, dtype=ember.float64)
        assert check_jvp(lambda x, y: x @ y, a, b) == 1
    finally:
        if saved is None:
            jvp_rules.pop(matmul_p)
        else:
            jvp_rules[matmul_p] = saved
