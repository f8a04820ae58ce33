"""Every primitive has an entry in each rule table, or an explicit, documented none."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import ember
from ember._core import NOT_DIFFERENTIABLE, Primitive, kernels, meta_rules, primitives, vjp_rules
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
    assert 100 < count <= len(primitives)  # hold primitives that tests defined)
    assert re.search(rf"vjp +{count} / {count}", out.stdout)
    assert f"{len(FUSED)} fused primitives:" in out.stdout
    assert "native_layer_norm" in out.stdout
