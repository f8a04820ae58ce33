"""ember.fx GraphModule (src/ember/fx/graph_module.py) against torch.fx: edits then
recompile, submodule management, copies, and construction from a dict root."""

from __future__ import annotations

import copy
import operator

import numpy as np
import torch
import torch.fx

import ember
import ember.fx


def make(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(3, 3)
            self.sub = L.nn.Sequential(L.nn.Linear(3, 3), L.nn.ReLU())
            self.register_buffer("offset", L.ones(3))

        def forward(self, x):
            return self.sub(self.a(x)) + self.offset

    L.manual_seed(0)
    return Net()


def traced(L):
    m = make(L)
    return m, L.fx.symbolic_trace(m)


def test_edit_then_recompile_matches_torch():
    outs = []
    for L in (torch, ember):
        m, gm = traced(L)
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is operator.add:
                with gm.graph.inserting_after(node):
                    new = gm.graph.call_function(L.tanh, (node,))
                node.replace_all_uses_with(new, delete_user_cb=lambda u, new=new: u is not new)
        gm.recompile()
        outs.append((gm.code, str(gm), [n for n, _ in gm.named_buffers()]))
    assert outs[0] == outs[1]


def test_submodule_add_delete_and_unused():
    outs = []
    for L in (torch, ember):
        m, gm = traced(L)
        assert gm.add_submodule("extra.deep", L.nn.ReLU())
        assert not gm.add_submodule("offset.x", L.nn.ReLU())
        before = [n for n, _ in gm.named_modules()]
        gm.delete_all_unused_submodules()
        after = [n for n, _ in gm.named_modules()]
        outs.append((before, after, gm.delete_submodule("nope"), gm.delete_submodule("a")))
    assert outs[0] == outs[1]


def test_numbers_and_copies():
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    m, gm = traced(ember)
    np.testing.assert_array_equal(gm(ember.tensor(x)).detach().numpy(),
                                  m(ember.tensor(x)).detach().numpy())
    deep = copy.deepcopy(gm)
    assert deep.a is not gm.a and deep.graph is not gm.graph and deep.code == gm.code
    np.testing.assert_array_equal(deep(ember.tensor(x)).detach().numpy(),
                                  gm(ember.tensor(x)).detach().numpy())
    shallow = copy.copy(gm)
    assert shallow.a is gm.a
    t_m, t_gm = traced(torch)
    t_deep = copy.deepcopy(t_gm)
    # (a deep copy shares the class and renames it, the original included, as torch does)
    assert type(deep).__name__ == type(t_deep).__name__ == type(gm).__name__ == "GraphModule"


def test_dict_root_and_class_name():
    outs = []
    for L in (torch, ember):
        g = L.fx.Graph()
        x = g.placeholder("x")
        w = g.get_attr("lin.weight")
        g.output(g.call_function(operator.matmul, (x, w)))
        gm = L.fx.GraphModule({"lin.weight": L.ones(2, 2)}, g, "FromDict")
        outs.append((gm.code, type(gm).__name__, repr(gm), gm(L.ones(1, 2)).tolist(),
                     [n for n, _ in gm.named_buffers()]))
    assert outs[0] == outs[1]
    msgs = []
    for L in (torch, ember):
        g = L.fx.Graph()
        g.output(g.get_attr("missing"))
        try:
            L.fx.GraphModule({}, g)
        except RuntimeError as e:
            msgs.append(str(e))
    assert msgs[0] == msgs[1]


def test_each_graph_module_has_its_own_forward():
    _, g1 = traced(ember)
    _, g2 = traced(ember)
    for node in g1.graph.nodes:
        if node.op == "output":
            node.args = (0,)
    for node in reversed(g1.graph.nodes):
        if node.op != "output" and node.op != "placeholder" and not node.users:
            g1.graph.erase_node(node)
    g1.recompile()
    assert g1(ember.ones(1, 3)) == 0
    assert g2(ember.ones(1, 3)).shape == (1, 3)


def _readable(L):
    from importlib import import_module

    shape_prop = import_module(f"{L.__name__}.fx.passes.shape_prop")
    m, gm = traced(L)
    plain = gm.print_readable(print_output=False)
    shape_prop.ShapeProp(gm).propagate(L.ones(2, 3))
    annotated = gm.print_readable(print_output=False)
    outer = L.nn.Module()
    outer.inner = gm
    g = L.fx.Graph()
    g.output(g.call_module("inner", (g.placeholder("a"),)))
    nested = L.fx.GraphModule(outer, g).print_readable(print_output=False)
    stacks = [(n.name, [(k, v[0], v[1].__name__) for k, v in n.meta["nn_module_stack"].items()])
              for n in gm.graph.nodes if "nn_module_stack" in n.meta]
    return plain, annotated, nested, stacks


def test_print_readable_and_module_stacks_match_torch():
    assert _readable(ember) == _readable(torch)


def _pickled(L):
    import pickle

    m, gm = traced(L)
    again = pickle.loads(pickle.dumps(gm))
    return again.code, type(again).__name__, [n for n, _ in again.named_parameters()], \
        str(again.graph)


def test_pickle_round_trip_matches_torch():
    assert _pickled(ember) == _pickled(torch)
    m, gm = traced(ember)
    import pickle

    again = pickle.loads(pickle.dumps(gm))
    x = ember.ones(2, 3)
    np.testing.assert_array_equal(again(x).detach().numpy(), gm(x).detach().numpy())
