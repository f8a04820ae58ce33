"""ember.fx Graph and Node (src/ember/fx/graph.py, node.py, codegen.py) against torch.fx:
graphs built and edited by hand print the same, generate the same code, and refuse the
same edits with the same messages."""

from __future__ import annotations

import operator
import sys

import pytest
import torch
import torch.fx

import ember
import ember.fx
from fresh_process import with_server


def build(L):
    """A graph built by hand with every kind of node and insert point."""
    fx = L.fx
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=2.0)
    s = g.call_function(L.add, (x, y), {"alpha": 2})
    m = g.call_method("mul", (s, 3))
    r = g.call_function(L.sin, (m,))
    getattr_ = g.call_function(getattr, (r, "shape"))
    item = g.call_function(operator.getitem, (getattr_, 0))
    with g.inserting_before(r):
        g.call_function(operator.neg, (m,), name="negated")
    with g.inserting_after(x):
        twice = g.call_function(operator.mul, (x, 2))
    g.output((r, s, item, [twice, slice(None, 1)]))
    return g


def test_built_graph_prints_and_generates_as_torch():
    tg, eg = build(torch), build(ember)
    assert str(eg) == str(tg)
    assert eg.python_code("self").src == tg.python_code("self").src
    assert [n.name for n in eg.nodes] == [n.name for n in tg.nodes]
    assert [n.format_node() for n in eg.nodes] == [n.format_node() for n in tg.nodes]
    assert len(eg.nodes) == len(tg.nodes) == 10


def test_node_links_users_and_inputs():
    for L in (torch, ember):
        g = build(L)
        nodes = {n.name: n for n in g.nodes}
        x, mul, add = nodes["x"], nodes["mul"], nodes["add"]
        assert [u.name for u in x.users] == ["add", "mul_1"]  # (in creation order)
        assert [n.name for n in add.all_input_nodes] == ["x", "y"]
        assert x.next.name == "mul_1" and mul.prev.name == "add"
        assert list(reversed(g.nodes))[0].op == "output"
        mul.replace_input_with(add, x)
        assert [n.name for n in mul.all_input_nodes] == ["x"] and mul not in add.users
        mul.meta["k"] = 1
        assert g.node_copy(mul).meta == {"k": 1}


def test_replace_all_uses_and_dead_code():
    out = {}
    for L in (torch, ember):
        g = build(L)
        nodes = {n.name: n for n in g.nodes}
        changed = nodes["mul"].replace_all_uses_with(nodes["add"])
        removed = g.eliminate_dead_code()
        out[L.__name__] = (str(g), [n.name for n in changed], removed)
    assert out["ember"] == out["torch"]


def test_erase_node_with_users_refused_with_torchs_message():
    msgs = []
    for L in (torch, ember):
        g = build(L)
        x = next(iter(g.nodes))
        with pytest.raises(RuntimeError) as info:
            g.erase_node(x)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("Tried to erase Node x but it still had 2 users in the graph")


def test_lint_refusals_match_torch():
    msgs = []
    for L in (torch, ember):
        g = L.fx.Graph()
        p = g.placeholder("x")
        other = L.fx.Graph().placeholder("y")
        g.call_function(L.add, (p, other))
        with pytest.raises(RuntimeError) as info:
            g.lint()
        msgs.append(str(info.value))
        g2 = L.fx.Graph()
        a = g2.placeholder("a")
        b = g2.call_function(operator.neg, (a,))
        c = g2.call_function(operator.neg, (b,))
        b.prepend(c)  # (c now comes before what it uses)
        with pytest.raises(RuntimeError) as info:
            g2.lint()
        msgs.append(str(info.value))
    assert msgs[:2] == msgs[2:]


def test_args_are_immutable_and_reassignable():
    msgs = []
    for L in (torch, ember):
        g = build(L)
        s = next(n for n in g.nodes if n.name == "add")
        with pytest.raises(TypeError) as info:
            s.kwargs["alpha"] = 3
        msgs.append(str(info.value))
        s.kwargs = {"alpha": 3}
        s.args = (s.args[1], s.args[0])
        msgs.append(str(g))
    assert msgs[:2] == msgs[2:]


def test_graph_copy_and_deepcopy():
    import copy

    outs = []
    for L in (torch, ember):
        g = build(L)
        new = L.fx.Graph()
        val_map = {}
        rv = new.graph_copy(g, val_map)
        new.output(rv)
        outs.append((str(new), len(val_map), str(copy.deepcopy(g))))
    assert outs[0] == outs[1]


def test_print_tabular_without_tabulate_as_torch():
    pytest.importorskip("torch")
    if "tabulate" in sys.modules or _has_tabulate():
        pytest.skip("tabulate installed: both print a table")
    outs = []
    for L in (torch, ember):
        res = with_server("ember.run" if L is ember else "torch").run_code(
            "import torch, torch.fx\n"
            "g = torch.fx.symbolic_trace(lambda x: x + 1).graph\n"
            "try:\n    g.print_tabular()\nexcept ImportError as e:\n"
            "    print(type(e).__name__, e)\n")
        outs.append(res.stdout)
    assert outs[0] == outs[1]
    assert "relies on the library `tabulate`" in outs[0]


def _has_tabulate() -> bool:
    import importlib.util

    return importlib.util.find_spec("tabulate") is not None


def test_importing_fx_leaves_the_protocol_off():
    res = with_server("ember.run").run_code(
        "import sys, ember\n"
        "print('ember.fx' in sys.modules)\n"
        "import ember.fx\n"
        "from ember import _torch_function as tf\n"
        "print(tf.is_active())\n"
        "gm = ember.fx.symbolic_trace(lambda x: ember.relu(x) + 1)\n"
        "print(tf.is_active(), gm(ember.tensor([-1.0, 2.0])).tolist())\n")
    assert res.stdout.split("\n")[:3] == ["False", "False", "False [1.0, 3.0]"], res.stderr


def _annotated(L):
    from typing import List, Optional, Tuple  # noqa: UP035 (annotations as users write them)

    def f(x: L.Tensor, n: int = 2, y: Optional[L.Tensor] = None) -> L.Tensor:  # noqa: UP045
        return x * n

    def g(x: L.Tensor, sizes: List[int] = [1]) -> Tuple[L.Tensor, L.Tensor]:  # noqa: B006, UP006
        return x, x

    def h(x: torch.Tensor) -> torch.Tensor:  # noqa: F821 (a string, printed as one)
        return x + 1

    out = []
    for fn, concrete in ((f, {"y": None}), (g, None), (h, None)):
        gm = L.fx.symbolic_trace(fn, concrete_args=concrete)
        out += [gm.code, str(gm.graph)]
    return out


def test_annotations_print_as_torch():
    assert _annotated(ember) == _annotated(torch)


def _dce(L):
    def f(x):
        x.add_(1)  # (an in-place method call: not kept, as torch keeps none)
        L.nn.functional.dropout(x, 0.5)
        L.relu_(x)
        L.randn_like(x)  # (a random draw: kept)
        L._assert(x.sum() > -1, "negative")  # (kept)
        return x * 2

    gm = L.fx.symbolic_trace(f)
    changed = gm.graph.eliminate_dead_code()
    return changed, [n.name for n in gm.graph.nodes], \
        [n.is_impure() for n in gm.graph.nodes], \
        [n.is_impure(impure_random=False) for n in gm.graph.nodes]


def test_dead_code_elimination_keeps_what_torch_keeps():
    assert _dce(ember) == _dce(torch)
