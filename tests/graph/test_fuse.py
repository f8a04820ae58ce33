"""Fusion: every `lower` rule against its member's NumPy kernel bit for bit (special values
included), chains and broadcasts fused into one loop with eager's bits, the generated C
readable, and the NumPy fallback giving the same results."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ember
from ember import native
from ember._core import lower_rules, lower_terms, lower_ulps
from ember.graph.fuse import groups
from ember.graph.passes import live_nodes

from helpers import assert_ulp

pytestmark = pytest.mark.skipif(not native.available(), reason="no C compiler here")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3e38, -3e38, 1e-40, -1e-40, 1e-310, np.inf,
           -np.inf, np.nan, 7.25, -0.1]


def _operands(dtype):
    a = np.array(SPECIAL, dtype)
    grid_a, grid_b = np.meshgrid(a, a, indexing="ij")
    return grid_a.copy(), grid_b.copy()


def _bits_equal(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    both_nan = np.isnan(x) & np.isnan(y)
    np.testing.assert_array_equal(x.view(f"u{x.itemsize}")[~both_nan],
                                  y.view(f"u{y.itemsize}")[~both_nan])
    np.testing.assert_array_equal(np.isnan(x), np.isnan(y))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("member", sorted(lower_rules, key=lambda m: m.name),
                         ids=lambda m: m.name)
def test_each_lower_rule_is_its_kernel_bit_for_bit(member, dtype):
    held, dtypes, _ = lower_terms[member]
    if np.dtype(dtype).name not in dtypes:
        pytest.skip(f"{member.name}'s C is for {', '.join(dtypes)} only")
    a, b = _operands(dtype)
    fam = member.family
    # (as many operands as the expression reads: {0}, {1} ...; a third one mixes the two)
    arity = 1 + max(int(i) for i in re.findall(r"\{(\d+)\}", lower_rules[member]))
    with np.errstate(all="ignore"):
        args = [ember.tensor(a), ember.tensor(b), ember.tensor(a * 0.5 - b)][:arity]

    def f(*xs):
        return ember._core.bind(fam, *xs, fn=member, **held)

    cf = ember.compile(f)
    got = cf(*args)
    with np.errstate(all="ignore"):
        want = member.kernel(*(x.numpy() for x in args), **held)
    if lower_ulps[member] == 0:
        _bits_equal(got.numpy(), want)
    else:
        # ember_math.h's stated bound, plus NumPy's own last bit: same value classes
        # (NaN, inf, zero and its sign) everywhere
        assert_ulp(got.numpy(), want, lower_ulps[member] + 1,
                   "a transcendental from ember_math.h against NumPy's own")
    (program,) = cf.programs.values()
    assert "fused C loop" in program.code


def test_a_chain_is_one_loop_with_eagers_bits():
    @ember.compile
    def f(a, b, c):
        return ((a * b + c).relu() - 0.5) / b

    a, b, c = (ember.randn(33, 17) for _ in range(3))
    _bits_equal(f(a, b, c).numpy(), f.fn(a, b, c).numpy())
    (program,) = f.programs.values()
    assert program.code.count("fused C loop") == 1
    assert "mul, add, relu, sub, div" in program.code
    src = program.c_source
    assert "t2 = x0 * x1;  /* binary.mul */" in src and "ember_parallel_for" in src


def test_broadcast_operands_and_scalars():
    @ember.compile
    def f(x, bias, row, s):
        return (x + bias) * s - row

    x, bias, row = ember.randn(5, 4, 6), ember.randn(6), ember.randn(4, 1)
    for s in (3.0, -1.5):
        _bits_equal(f(x, bias, row, s).numpy(), f.fn(x, bias, row, s).numpy())
    assert len(f.programs) == 1  # a new Python number is an argument of the same loop


def test_values_read_outside_the_group_are_written():
    @ember.compile
    def f(a, b):
        t = a * b
        u = (t + 1).relu()
        return t, u, t.sum()

    a, b = ember.randn(8, 8), ember.randn(8, 8)
    got, want = f(a, b), f.fn(a, b)
    for x, y in zip(got, want):
        _bits_equal(x.numpy(), y.numpy())
    (g,) = f.graphs
    (grp,) = groups(g, live_nodes(g))
    # t (read by the sum and returned) and u are written; t + 1 lives in a register
    assert [v.id for v in grp.outputs] == [grp.nodes[0].outs[0].id, grp.nodes[-1].outs[0].id]
    assert len(grp.nodes) == 3


def test_a_group_read_in_between_runs_before_its_reader():
    @ember.compile
    def f(a):
        t = a * 2
        s = t.sum()  # not pointwise: reads the group's value before the chain goes on
        return (t + 1) * s

    a = ember.randn(16)
    _bits_equal(f(a).numpy(), f.fn(a).numpy())


def test_large_chains_split_over_threads_and_match():
    @ember.compile
    def f(a, b, c):
        return a * b + c

    a, b, c = (ember.randn(300_001) for _ in range(3))
    old = ember.get_num_threads()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            _bits_equal(f(a, b, c).numpy(), f.fn(a, b, c).numpy())
    finally:
        ember.set_num_threads(old)


def test_layout_other_than_recorded_falls_back_to_the_kernels():
    @ember.compile
    def f(a, b):
        return a * b + 1

    a, b = ember.randn(6, 5), ember.randn(6, 5)
    f(a, b)
    (program,) = f.programs.values()
    # the program itself, handed a transposed copy's view: the loop would misread it
    at = np.ascontiguousarray(a.numpy().T).T
    out = program.run([at, b.numpy(), 1])
    _bits_equal(out[0], a.numpy() * b.numpy() + np.float32(1))


def test_numpy_mode_runs_the_same_graph_without_c():
    def f(a, b):
        return (a - b).abs() * 3

    a, b = ember.randn(7, 3), ember.randn(7, 3)
    with native.use("numpy"):
        cf = ember.compile(f)
        got = cf(a, b)
        (program,) = cf.programs.values()
    assert not hasattr(program, "c_source") and "fused" not in program.code
    _bits_equal(got.numpy(), f(a, b).numpy())


def test_common_subexpressions_are_computed_once_and_results_stay_apart():
    @ember.compile
    def f(x, y):
        a = x.exp() * y
        b = x.exp() * y  # the same computation: it runs once (exp in C: compare with f.fn)
        return a, b, x * 2, x * 3  # (2 and 3 are arguments of the program: not the same)

    x, y = ember.randn(5), ember.randn(5)
    a, b, two, three = f(x, y)
    first = a.numpy().copy()
    _bits_equal(a.numpy(), b.numpy())
    _bits_equal(three.numpy(), (x * 3).numpy())
    a.add_(1)  # two tensors, two buffers: writing one leaves the other as it was
    _bits_equal(b.numpy(), first)
    (program,) = f.programs.values()
    assert program.code.count("exp") == 1 and "_copy(" in program.code


def test_chains_that_meet_are_one_loop():
    # b1 * m + (1 - b1) * g: two products of inputs, each opening a chain, then the sum
    # that reads both: one loop, not three (an optimizer's update per parameter)
    @ember.compile
    def f(m, g, p):
        m2 = 0.9 * m + 0.1 * g
        v2 = 0.99 * m + 0.01 * (g * g)
        return p - 0.001 * m2 / (v2.sqrt() + 1e-8)

    m, g, p = ember.rand(40, 30), ember.randn(40, 30), ember.randn(40, 30)
    _bits_equal(f(m, g, p).numpy(), f.fn(m, g, p).numpy())
    (program,) = f.programs.values()
    assert program.code.count("fused C loop") == 1
    (g_,) = f.graphs
    (grp,) = groups(g_, live_nodes(g_))
    assert len(grp.outputs) == 1 and len(grp.inputs) == 3


def test_a_value_written_in_place_is_read_before_the_write():
    @ember.compile
    def f(a, x):
        t = x * 2  # reads x before the in-place write below
        x.mul_(3)
        return t + a

    for _ in range(3):
        a, x = ember.ones(5), ember.arange(5.0)
        assert f(a, x).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]
        assert x.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]


def test_exact_fusion_leaves_transcendentals_to_their_kernels():
    # (what MLX's lazy arrays run: a recurring graph's fused program must give the bits of
    # its first, unfused run, and a transcendental's C may land ulps from its kernel)
    from ember.graph.fuse import lower_fused
    from ember.graph.passes import optimized

    @ember.compile
    def f(a, b):
        return (a * b + 1).tanh() * 2 - (a - b).exp() + a.abs().sqrt()

    a, b = ember.randn(33, 17), ember.randn(33, 17)
    f(a, b)
    (g,) = f.graphs
    fast = lower_fused(optimized(g)).code
    exact = lower_fused(optimized(g), exact=True).code
    assert "unary.tanh" not in fast and "unary.exp" not in fast
    assert "# unary.tanh" in exact and "# unary.exp" in exact
    # the members whose C is the kernel's, bit for bit, still fuse (sqrt among them)
    loops = [line for line in exact.splitlines() if "fused C loop" in line]
    assert any("mul, add" in line for line in loops) and any("sqrt" in line for line in loops)
