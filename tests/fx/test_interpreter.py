"""ember.fx Interpreter, Transformer (src/ember/fx/interpreter.py), ShapeProp
(passes/shape_prop.py) and replace_pattern (subgraph_rewriter.py) against torch.fx."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp as TShapeProp

import ember
import ember.fx
from ember.fx.passes.shape_prop import ShapeProp as EShapeProp


def make(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = L.nn.Conv2d(1, 2, 3)
            self.fc = L.nn.Linear(8, 2)

        def forward(self, x):
            y = L.relu(self.conv(x))
            y = L.nn.functional.max_pool2d(y, 2).flatten(1)
            return self.fc(y).softmax(-1), y.size(1)

    L.manual_seed(0)
    return Net()


def test_interpreter_runs_and_counts():
    x = np.random.default_rng(0).standard_normal((1, 1, 6, 6)).astype(np.float32)

    class Count(ember.fx.Interpreter):
        def __init__(self, m):
            super().__init__(m)
            self.ops = []

        def call_function(self, target, args, kwargs):
            self.ops.append(("f", ember.fx.Node._pretty_print_target(target)))
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            self.ops.append(("m", target))
            return super().call_method(target, args, kwargs)

    gm = ember.fx.symbolic_trace(make(ember))
    c = Count(gm)
    out = c.run(ember.tensor(x))
    ref = gm(ember.tensor(x))
    np.testing.assert_array_equal(out[0].detach().numpy(), ref[0].detach().numpy())
    assert out[1] == 8
    assert c.ops == [("f", "torch.relu"), ("f", "torch.nn.functional.max_pool2d"),
                     ("m", "flatten"), ("m", "softmax"), ("m", "size")]
    assert [n.op for n in c.env] == ["output"]  # (values dropped after their last use)


def test_interpreter_errors_name_the_node():
    msgs = []
    for L in (torch, ember):
        gm = L.fx.symbolic_trace(lambda x: x.view(5))
        with pytest.raises(RuntimeError) as info:
            L.fx.Interpreter(gm).run(L.ones(2))
        msgs.append(str(info.value).split("\n\n", 1)[1].splitlines()[0])
        with pytest.raises(RuntimeError) as info:
            L.fx.Interpreter(gm).run()
        msgs.append(str(info.value).splitlines()[0])
    assert msgs[:2] == msgs[2:]


def _transformed(L):
    class Swap(L.fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target == L.relu:
                return L.sigmoid(*args)
            return super().call_function(target, args, kwargs)

    new = Swap(L.fx.symbolic_trace(make(L))).transform()
    return new.code, str(new.graph)


def test_transformer_matches_torch():
    assert _transformed(ember) == _transformed(torch)


def test_shape_prop_matches_torch():
    x = np.random.default_rng(0).standard_normal((3, 1, 6, 6)).astype(np.float32)
    rows = []
    for L, SP in ((torch, TShapeProp), (ember, EShapeProp)):
        gm = L.fx.symbolic_trace(make(L))
        SP(gm).propagate(L.tensor(x))
        rows.append([(n.name, tuple(n.meta["tensor_meta"].shape),
                      str(n.meta["tensor_meta"].dtype).split(".")[-1],
                      n.meta["tensor_meta"].stride, n.meta["tensor_meta"].requires_grad,
                      str(n.meta["tensor_meta"].memory_format).split(".")[-1],
                      n.meta["type"].__name__)
                     for n in gm.graph.nodes if hasattr(n.meta.get("tensor_meta"), "shape")])
    assert rows[0] == rows[1]


def _rewritten(L):
    def f(x, y):
        a = L.relu(x) + y
        b = a * 2
        c = L.relu(b) + y
        return c.neg() + a, L.cat([x, y]).sum() + L.cat([x, y]).sum()

    def pattern(x, y):
        return L.relu(x) + y

    def replacement(x, y):
        return L.sigmoid(x) - y

    gm = L.fx.symbolic_trace(f)
    matches = L.fx.replace_pattern(gm, pattern, replacement)
    anchors = [m.anchor.name for m in matches]
    maps = [sorted((k.name, v.name) for k, v in m.nodes_map.items()) for m in matches]
    res = gm(L.tensor([1.0, -2.0]), L.tensor([0.5, 0.5]))
    return gm.code, anchors, maps, [round(v, 5) for v in res[0].tolist()]


def test_replace_pattern_matches_torch():
    assert _rewritten(ember) == _rewritten(torch)


def _kept(L):
    def f(x):
        a = L.relu(x)
        return L.neg(a), a  # (relu's value is used outside the pattern)

    gm = L.fx.symbolic_trace(f)
    found = L.fx.replace_pattern(gm, lambda x: L.neg(L.relu(x)), lambda x: L.sigmoid(x))
    return found, [n.op for n in gm.graph.nodes].count("call_function")


def test_replace_pattern_keeps_values_used_outside():
    assert _kept(ember) == _kept(torch) == ([], 2)


def test_boxed_run_empties_its_list():
    outs = []
    for L in (torch, ember):
        gm = L.fx.symbolic_trace(lambda x, y: x * y + 1)
        args = [L.tensor([2.0]), L.tensor([3.0])]
        outs.append((L.fx.Interpreter(gm).boxed_run(args).tolist(), args))
    assert outs[0] == outs[1] == ([7.0], [])
