"""ember.fx symbolic tracing (src/ember/fx/_symbolic_trace.py, proxy.py, _names.py)
against torch.fx in-process: the same program traced under each gives the same graph
text, node list (op, name, target, args), generated code and outputs, and the same
refusals."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
import torch
import torch.fx

import ember
import ember.fx
from ember import _torch_function as _tf

from helpers import copy_module_state, to_ember


def _helper_count(x):
    return x.dim()


torch.fx.wrap("_helper_count")
ember.fx.wrap("_helper_count")


def node_rows(gm) -> list[tuple]:
    """(op, name, target as fx prints it, args text, kwargs text) per node."""
    rows = []
    for n in gm.graph.nodes:
        target = n.target if isinstance(n.target, str) else type(n)._pretty_print_target(n.target)
        rows.append((n.op, n.name, target, str(n.args), str(n.kwargs)))
    return rows


def traced_pair(make, concrete_args=None):
    t_root, e_root = make(torch), make(ember)
    if isinstance(t_root, torch.nn.Module):
        copy_module_state(e_root, t_root)
    t_gm = torch.fx.symbolic_trace(t_root, concrete_args=concrete_args)
    e_gm = ember.fx.symbolic_trace(e_root, concrete_args=concrete_args)
    return t_root, e_root, t_gm, e_gm


# -- programs, each written once against a library `L` --------------------------------------

def mlp(L):
    class MLP(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(4, 3)
            self.act = L.nn.ReLU()
            self.w = L.nn.Parameter(L.ones(3))
            self.unused = L.nn.Conv2d(1, 1, 1)

        def forward(self, x, y=None):
            a = self.act(self.lin(x)) + self.w
            b = L.relu(a) * 2
            c = L.nn.functional.relu(b).sum(dim=1, keepdim=True)
            d = a.shape[0]
            e = a.size(1)
            f = c.view(d, -1) + L.tensor(3.0)
            g = L.nn.functional.softmax(f, dim=1)
            h = L.nn.functional.dropout(g, 0.1, training=False)
            return L.cat([h, a], 1).reshape(-1), e, L.nn.functional.gelu(a), \
                L.flatten(a, 1), x.T, L.add(a, a, alpha=2), a[:, 0], L.nn.functional.linear(a, a)

    return MLP()


def operators(L):
    def f(x, y):
        a = -x + 2 * y - (x / 3) ** 2
        b = (x @ y.t()) // 1.5 % 4
        c = (x > 0) & (y < 1) | ~(x == y)
        d = abs(x) ** 0.5 + 1 / (y + 5)
        e = x[0, 1:] + x[..., None].squeeze(-1)[0] - y[:, 0:2].mean()
        return a, b, c, d, e, x.abs().exp().max(1), L.max(x, 1), math.sqrt(x.size(0)) * x

    return f


def nested(L):
    class Block(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = L.nn.Conv2d(2, 2, 3, padding=1)
            self.bn = L.nn.BatchNorm2d(2)

        def forward(self, x):
            return L.nn.functional.relu(self.bn(self.conv(x))) + x

    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = L.nn.Sequential(Block(), Block())
            self.pool = L.nn.AdaptiveAvgPool2d(1)
            self.fc = L.nn.Linear(2, 2)

        def forward(self, x):
            x = self.blocks(x)
            x = L.nn.functional.max_pool2d(x, 2)
            x = self.pool(x).flatten(1)
            return L.nn.functional.log_softmax(self.fc(x), dim=-1), self.fc.weight.t()

    return Net().eval()


def extras(L):
    def f(x, *args, scale=2.0, **kw):
        y = L.nn.functional.layer_norm(x, (3,)) * scale
        z = L.split(y, 1) + (L.nn.functional.pad(y, (1, 1)), L.sigmoid(y),
                             L.nn.functional.sigmoid(y), L.nn.functional.tanh(y))
        return z, _helper_count(x), L.nn.functional.interpolate(x[None], scale_factor=2)

    return f


def flagged(L):
    def f(x, flag=True, y=None):
        if flag:
            x = x + 1
        if y is None:
            x = x * 2
        return x

    return f


def factories(L):
    def f(x):
        mask = L.ones(x.shape).tril()
        steps = L.arange(x.size(-1)).float()
        return x * mask + L.zeros_like(x) + steps + L.full((1,), 2.0)

    return f


def leaf_root(L):
    return L.nn.Linear(3, 2)


PROGRAMS = {"mlp": mlp, "operators": operators, "nested": nested, "extras": extras,
            "factories": factories, "leaf_root": leaf_root}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_graph_code_and_nodes_match_torch(name):
    t_root, e_root, t_gm, e_gm = traced_pair(PROGRAMS[name])
    assert str(e_gm.graph) == str(t_gm.graph)
    assert e_gm.code == t_gm.code
    assert node_rows(e_gm) == node_rows(t_gm)
    assert str(e_gm) == str(t_gm)
    assert type(e_gm).__name__ == type(t_gm).__name__


def test_traced_module_computes_what_the_module_does():
    t_root, e_root, t_gm, e_gm = traced_pair(mlp)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    out_t, out_e = t_gm(torch.tensor(x)), e_gm(ember.tensor(x))
    ref_e = e_root(ember.tensor(x))
    for a, b, c in zip(out_e, out_t, ref_e):
        if isinstance(a, int):
            assert a == b == c
            continue
        # float32 kernels differ in their last bits between the libraries
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
        # (the same ember ops run)
        np.testing.assert_array_equal(a.detach().numpy(), c.detach().numpy())
    # only the submodules and attributes the graph uses are copied, and they are shared
    assert [n for n, _ in e_gm.named_children()] == [n for n, _ in t_gm.named_children()]
    assert e_gm.lin is e_root.lin
    assert list(e_gm.state_dict()) == list(t_gm.state_dict())


def test_nested_modules_and_sequential_paths():
    t_root, e_root, t_gm, e_gm = traced_pair(nested)
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 4)).astype(np.float32)
    out_e, out_t = e_gm(ember.tensor(x)), t_gm(torch.tensor(x))
    np.testing.assert_allclose(out_e[0].detach().numpy(), out_t[0].detach().numpy(), rtol=1e-5,
                               atol=1e-6)  # (float32 convolutions: last bits differ)
    assert [n.target for n in e_gm.graph.nodes if n.op == "call_module"] == \
        ["blocks.0.conv", "blocks.0.bn", "blocks.1.conv", "blocks.1.bn", "pool", "fc"]


def test_concrete_args_specialise_with_asserts():
    t_root, e_root, t_gm, e_gm = traced_pair(flagged, {"flag": True, "y": None})
    assert e_gm.code == t_gm.code
    assert str(e_gm.graph) == str(t_gm.graph)
    assert e_gm(ember.tensor([1.0])).tolist() == t_gm(torch.tensor([1.0])).tolist() == [4.0]
    for lib, gm in ((torch, t_gm), (ember, e_gm)):
        with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
            gm(lib.tensor([1.0]), False)


def test_tracing_leaves_the_protocol_as_it_found_it():
    _tf.deactivate()
    e_gm = ember.fx.symbolic_trace(flagged(ember), concrete_args={"flag": True, "y": None})
    assert not _tf.is_active()
    relu = [n for n in ember.fx.symbolic_trace(mlp(ember)).graph.nodes if n.name == "relu"][0]
    assert relu.target is ember.relu  # (the plain function again, once tracing is over)
    assert e_gm(ember.tensor([1.0])).tolist() == [4.0]


def test_tensor_constants_numbered_across_traces():
    def f(L):
        class M(L.nn.Module):
            def forward(self, x):
                return x + L.tensor(1.0)

        return M()

    t_root, e_root = f(torch), f(ember)
    for _ in range(2):
        t_gm, e_gm = torch.fx.symbolic_trace(t_root), ember.fx.symbolic_trace(e_root)
        assert e_gm.code.replace("_tensor_constant", "C") == \
            t_gm.code.replace("_tensor_constant", "C")
    assert hasattr(e_root, "_tensor_constant0")
    assert [n for n, _ in e_gm.named_buffers()] == [n for n, _ in t_gm.named_buffers()]


def _refusal(lib, fn):
    fx = lib.fx
    try:
        fx.symbolic_trace(fn)
    except Exception as e:  # noqa: BLE001 - the refusal itself is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["bool", "iter", "len", "int", "proxy_key"])
def test_refusals_match_torch(case):
    def make(L):
        return {
            "bool": lambda x: x if x.sum() > 0 else -x,
            "iter": lambda x: [v for v in x],
            "len": lambda x: len(x),
            "int": 42,
            "proxy_key": lambda x: {x: 1},
        }[case]

    t, e = _refusal(torch, make(torch)), _refusal(ember, make(ember))
    assert t is not None and e == t


def test_unpacking_a_proxy_records_getitems():
    def f(x):
        a, b = x
        return a * b

    t_gm, e_gm = torch.fx.symbolic_trace(f), ember.fx.symbolic_trace(f)
    assert e_gm.code == t_gm.code
    assert e_gm(ember.tensor([2.0, 3.0])).item() == 6.0


def test_custom_tracer_leaf_choice():
    def make(L):
        class Inner(L.nn.Module):
            def forward(self, x):
                return x * 2

        class Outer(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
                self.lin = L.nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(self.inner(x))

        return Outer()

    class TLeaf(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname == "inner" or super().is_leaf_module(m, qualname)

    class ELeaf(ember.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname == "inner" or super().is_leaf_module(m, qualname)

    assert str(ELeaf().trace(make(ember))) == str(TLeaf().trace(make(torch)))
    assert str(ember.fx.Tracer().trace(make(ember))) == str(torch.fx.Tracer().trace(make(torch)))


def test_wrapped_function_recorded_as_one_call():
    def f(x):
        return x * _helper_count(x)

    t_gm, e_gm = torch.fx.symbolic_trace(f), ember.fx.symbolic_trace(f)
    assert e_gm.code == t_gm.code
    assert e_gm(ember.ones(2, 2)).tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_graph_module_shares_the_submodules():
    t_root, e_root, t_gm, e_gm = traced_pair(mlp)
    e_root.lin.weight.data.mul_(0)
    # the GraphModule shares the module's submodules (no copies), as torch's does
    assert float(e_gm.lin.weight.detach().abs().sum()) == 0.0
    assert to_ember(t_gm.lin.weight).shape == e_gm.lin.weight.shape


def test_operator_targets_are_operator_functions():
    e_gm = ember.fx.symbolic_trace(lambda x: x + 1)
    (add,) = [n for n in e_gm.graph.nodes if n.op == "call_function"]
    assert add.target is operator.add


def test_proxies_made_by_hand_record_calls():
    """The fx docs' decomposition recipe: Proxies over a new graph, outside any trace."""
    outs = []
    for L in (torch, ember):
        graph = L.fx.Graph()
        tracer = L.fx.proxy.GraphAppendingTracer(graph)
        x = L.fx.Proxy(graph.placeholder("x"), tracer)
        y = L.nn.functional.relu(x) * 2 + L.sigmoid(x)
        graph.output(y.node)
        gm = L.fx.GraphModule(L.nn.Module(), graph)
        outs.append((gm.code, gm(L.tensor([-1.0, 1.0])).tolist()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-6)  # (sigmoid: last bits)


def test_generated_code_sees_functions_swapped_later():
    gm = ember.fx.symbolic_trace(lambda x: ember.relu(x))
    original = ember.relu
    try:
        ember.relu = lambda x: x * 0 + 7  # (looked up when the code runs, as torch's is)
        assert gm(ember.tensor([1.0])).tolist() == [7.0]
    finally:
        ember.relu = original
    assert gm(ember.tensor([-1.0])).tolist() == [0.0]


def _shapes_constant(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = L.nn.Parameter(L.ones(2, 3))

        def forward(self, x):
            return x.view(self.w.shape[0], -1) * self.w.size()[1] + self.w.dim() + self.w.numel()

    out = []
    for constant in (False, True):
        graph = L.fx.Tracer(param_shapes_constant=constant).trace(M())
        out.append(str(graph))
    return out


def test_param_shapes_constant_matches_torch():
    assert _shapes_constant(ember) == _shapes_constant(torch)


def test_aliases_and_functional_twins_are_recorded_under_the_name_called():
    """torch.absolute / torch.arccos / F.celu / F.threshold are functions of their own in
    torch, and fx records each under the name the program called (ember published one
    function under two names, and recorded torch.abs / torch.celu)."""
    import textwrap

    from fresh_process import with_server

    code = textwrap.dedent("""
        import torch, torch.nn.functional as F
        def f(x):
            return (torch.absolute(x) + torch.arccos(x.clamp(-1, 1)) + F.celu(x)
                    + F.selu(x) + F.threshold(x, 0.1, 0.0) + x.float().arctan())
        print(torch.fx.symbolic_trace(f).code)
    """)
    outs = [with_server(lib).run_code(code) for lib in ("torch", "ember.run")]
    assert [o.returncode for o in outs] == [0, 0], outs[1].stderr
    assert outs[0].stdout == outs[1].stdout
