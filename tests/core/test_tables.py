"""Every primitive has an entry in each rule table, or an explicit, documented none."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import ember
from ember._core import (
    BY_LOOP,
    BY_VJP,
    MISSING,
    NOT_DIFFERENTIABLE,
    ByParam,
    Family,
    Primitive,
    batch_rules,
    jvp_rules,
    kernels,
    loop_reasons,
    meta_rules,
    primitives,
    vjp_jvp_reasons,
    vjp_rules,
)
from ember._core.dispatch import eval_kernel
from ember._core.fused import FUSED


def test_every_primitive_can_run_eagerly():
    for p in primitives:
        assert p in kernels["cpu"] or p.impl is not eval_kernel, f"{p.name} has no cpu kernel"


def test_every_primitive_has_a_meta_rule_or_says_its_shape_depends_on_data():
    missing = [p.name for p in primitives if p not in meta_rules]
    assert missing == []
    data_dependent = sorted(p.name for p in primitives
                            if getattr(meta_rules[p], "data_dependent", False))
    assert data_dependent == ["bincount", "masked_select", "nonzero", "unique",
                              "unique_consecutive"]
    with pytest.raises(NotImplementedError, match="depends on the input's values"):
        meta_rules[ember.ops.sorting.unique_p](ember.empty(3, device="meta"))


def test_every_primitive_has_a_vjp_or_is_marked_not_differentiable():
    assert [p.name for p in primitives if p not in vjp_rules] == []
    none = {p.name for p in primitives if vjp_rules[p] is NOT_DIFFERENTIABLE}
    assert {"compare", "argextremum", "nonzero", "bitwise"} <= none
    assert not {"add", "mul", "mm", "softmax"} & none


def test_every_fused_primitive_exists():
    names = {p.name for p in primitives}
    assert set(FUSED) <= names


def test_a_primitive_is_counted_once():
    before = len(primitives)
    p = Primitive("test_only_identity", lambda a: a)
    try:
        assert primitives[-1] is p and len(primitives) == before + 1
    finally:
        primitives.remove(p)
        del kernels["cpu"][p]


def test_the_inventory_script_prints_the_count_and_the_fused_list():
    out = subprocess.run([sys.executable, "-m", "ember._core"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    count = int(re.match(r"(\d+) primitives", out.stdout).group(1))  # (this process may
    # (the core's, as test_the_primitive_set_is_small counts them: the script imports no
    # MLX face)
    assert count <= len(primitives) and count <= 117  # hold primitives that tests defined)
    assert re.search(rf"vjp +{count} / {count}", out.stdout)
    assert f"{len(FUSED)} fused primitives:" in out.stdout
    assert "native_layer_norm" in out.stdout


def _members(p) -> list:
    return list(p.members.values()) if isinstance(p, Family) else [p]


def _entry(table: dict, p, m):
    rule = table.get(p, MISSING)
    return rule.table.get(m, MISSING) if isinstance(rule, ByParam) else rule


def test_every_function_has_a_jvp_rule_or_a_documented_none():
    missing, unexplained, mismatched = [], [], []
    for p in primitives:
        for m in _members(p):
            rule = _entry(jvp_rules, p, m)
            if rule is MISSING:
                missing.append(m.name)
            elif rule is BY_VJP and not vjp_jvp_reasons.get(m):
                unexplained.append(m.name)
            if (rule is NOT_DIFFERENTIABLE) != (_entry(vjp_rules, p, m) is NOT_DIFFERENTIABLE):
                mismatched.append(m.name)  # differentiable one way and not the other
    assert missing == [] and unexplained == [] and mismatched == []


def test_every_primitive_has_a_batch_rule_or_says_why_it_loops():
    assert [p.name for p in primitives if p not in batch_rules] == []
    loops = [p for p in primitives if batch_rules[p] is BY_LOOP]
    assert all(loop_reasons.get(p) for p in loops)
    assert {"unique", "nonzero"} <= {p.name for p in loops}
    assert len(loops) < len(primitives) // 3  # vectorised is the rule, a loop the exception


def test_the_primitive_set_is_small():
    # (107 ops, and a fusion of two that only compiled programs bind:
    # nll_log_softmax_backward; the MLX face's own family, mlx_binary, is its table, not
    # the core's. The compressed sparse layouts' four mirror COO's four: build, values,
    # convert, gather at a pattern. LAPACK's sytrf / sytrs (linalg.ldl_factor_ex,
    # ldl_solve) and ATen's native_channel_shuffle are kernels torch gives no derivative;
    # var_mean / std_mean are one kernel with two outputs and one node each, as PyTorch's
    # VarMeanBackward0 / StdMeanBackward0, which save different things; linalg_matrix_exp's
    # VJP is PyTorch's Frechet rule, exp of a block matrix, where differentiating its Taylor
    # polynomial is off by ~1e-4; sparse_mul is SparseCPU's mul, whose result pattern (an
    # intersection, or one operand's uncoalesced entries) no dense primitive gives; lstm_cell
    # is nn.LSTM's step, fused for speed, bit for bit its composite; im2col / col2im are
    # F.unfold / F.fold, each the other's gradient: their composites, a grouped convolution
    # with one-hot weights, made NaN of an inf and lost -0.0, and a gather's backward, an
    # index_add over every tap, took three times theirs; native_group_norm and its backward
    # are group norm's statistics and affine in one kernel each way, where layer norm's node,
    # a mul and an add and their reductions took three passes and three nodes)
    assert len([p for p in primitives if not p.name.startswith("mlx_")]) <= 117
    families = {p.name: len(p.members) for p in primitives if isinstance(p, Family)}
    assert families.get("unary", 0) >= 60 and families.get("binary", 0) >= 15
