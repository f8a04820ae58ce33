"""make_dot: the DOT text of known graphs, checked against torch's own autograd graph.

torchviz is not installed, so the oracle is torch's graph of the same computation walked
by torchviz's rules (a grad_fn node per `next_functions` entry, a leaf per AccumulateGrad,
the output and a view's base as tensor nodes). Node ids differ between the two (they are
`id()`s), so the graphs are compared by structure: each output's label and, recursively,
the sorted descriptions of the nodes that feed it.
"""

import re

import pytest
import torch

import ember
from ember.utils.viz import Digraph, make_dot

# --- reading DOT back -----------------------------------------------------------------

_NODE = re.compile(r'^\t"([^"]+)" \[(.*)\]$')
_EDGE = re.compile(r'^\t"([^"]+)" -> "([^"]+)"(?: \[(.*)\])?$')
_ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _unescape(text):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def parse(source):
    """{id: attrs} and [(tail, head, attrs)] from the DOT text Digraph writes."""
    lines = source.splitlines()
    assert lines[0] == "digraph {" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[1:-1]:
        if line.startswith(("\tgraph [", "\tnode [", "\tedge [")):
            continue
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2),
                          {k: _unescape(v) for k, v in _ATTR.findall(m.group(3) or "")}))
            continue
        m = _NODE.match(line)
        assert m, f"not a statement Digraph writes: {line!r}"
        nodes.setdefault(m.group(1), {}).update(
            {k: _unescape(v) for k, v in _ATTR.findall(m.group(2))})
    return nodes, edges


def canonical(nodes, edges, roots, key=lambda attrs: attrs["label"]):
    """Each root's key and, recursively, the sorted descriptions of its predecessors."""
    preds = {}
    for tail, head, attrs in edges:
        if attrs.get("dir") != "none":
            preds.setdefault(head, []).append(tail)

    def describe(n):
        return (key(nodes[n]), tuple(sorted(describe(p) for p in preds.get(n, ()))))

    return tuple(sorted(describe(r) for r in roots))


def sinks(nodes, edges):
    tails = {t for t, _, a in edges if a.get("dir") != "none"}
    return [n for n in nodes if n not in tails]


# --- the oracle: torch's graph walked by torchviz's rules -----------------------------

def torch_walk(var, params=None):
    names = {id(v): k for k, v in (params or {}).items()}
    nodes, edges, seen = {}, [], set()

    def tensor(t, color):
        shape = "(" + ", ".join(str(n) for n in t.shape) + ")"
        nodes[str(id(t))] = {"label": f"{names.get(id(t), '')}\n {shape}", "fillcolor": color}

    def fn_nodes(fn):
        if fn in seen:
            return
        seen.add(fn)
        if hasattr(fn, "variable"):
            tensor(fn.variable, "lightblue")
            edges.append((str(id(fn.variable)), str(id(fn)), {}))
        nodes[str(id(fn))] = {"label": type(fn).__name__}
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                edges.append((str(id(nxt)), str(id(fn)), {}))
                fn_nodes(nxt)

    def output(t, color):
        if id(t) in seen:
            return
        seen.add(id(t))
        tensor(t, color)
        if t.grad_fn is not None:
            fn_nodes(t.grad_fn)
            edges.append((str(id(t.grad_fn)), str(id(t)), {}))
        if t._is_view():
            output(t._base, "darkolivegreen3")
            edges.append((str(id(t._base)), str(id(t)), {"style": "dotted"}))

    for t in var if isinstance(var, tuple) else (var,):
        output(t, "darkolivegreen1")
    return nodes, edges


def same_structure(ember_dot, torch_graph):
    nodes, edges = parse(ember_dot.source)
    t_nodes, t_edges = torch_graph
    key = lambda a: (a["label"], a.get("fillcolor"))  # noqa: E731
    assert canonical(nodes, edges, sinks(nodes, edges), key) == \
        canonical(t_nodes, t_edges, sinks(t_nodes, t_edges), key)
    # the same sharing, not only the same tree: as many nodes and edges
    assert len(nodes) == len(t_nodes)
    assert len(edges) == len(t_edges)


def course_graph(m):
    a = m.tensor(2.0, requires_grad=True)
    b = m.tensor(3.0, requires_grad=True)
    c = a * b
    d = a + b
    e = c * d
    return dict(a=a, b=b, c=c, d=d, e=e, L=e**2)


def mlp(m, seed=0, input_grad=False):
    m.manual_seed(seed)
    model = m.nn.Sequential(m.nn.Linear(8, 16), m.nn.Tanh(), m.nn.Linear(16, 1))
    x = m.randn(3, 8, requires_grad=input_grad)
    return model, model(x).mean()


# --- structure against torch ------------------------------------------------------------

def test_course_graph_matches_torchs():
    ev, tv = course_graph(ember), course_graph(torch)
    params = lambda v: {"a": v["a"], "b": v["b"]}  # noqa: E731
    same_structure(make_dot(ev["L"], params=params(ev)), torch_walk(tv["L"], params(tv)))


def test_course_graph_by_hand():
    v = course_graph(ember)
    nodes, edges = parse(make_dot(v["L"], params={"a": v["a"], "b": v["b"]}).source)
    labels = sorted(a["label"] for a in nodes.values())
    # L, PowBackward0, MulBackward0 (e), MulBackward0 (c), AddBackward0 (d), two
    # AccumulateGrads, the leaves a and b: 9 nodes
    assert labels == sorted(["\n ()", "PowBackward0", "MulBackward0", "MulBackward0",
                             "AddBackward0", "AccumulateGrad", "AccumulateGrad",
                             "a\n ()", "b\n ()"])
    # a -> acc, b -> acc, acc_a -> c, acc_b -> c, acc_a -> d, acc_b -> d, c -> e, d -> e,
    # e -> pow, pow -> L: 10 edges
    assert len(edges) == 10
    by_label = {a["label"]: n for n, a in nodes.items()}
    assert (by_label["PowBackward0"], by_label["\n ()"], {}) in edges
    assert nodes[by_label["a\n ()"]]["fillcolor"] == "lightblue"
    assert nodes[by_label["\n ()"]]["fillcolor"] == "darkolivegreen1"


def test_mlp_with_named_parameters_matches_torchs():
    em, ey = mlp(ember)
    tm, ty = mlp(torch)
    same_structure(make_dot(ey, params=dict(em.named_parameters())),
                   torch_walk(ty, dict(tm.named_parameters())))
    labels = [a["label"] for a in parse(make_dot(ey, params=dict(em.named_parameters()))
                                        .source)[0].values()]
    assert "0.weight\n (16, 8)" in labels and "2.bias\n (1)" in labels


@pytest.mark.parametrize("case", ["view_output", "two_outputs", "reused_input", "unused_branch",
                                  "integer_exponent_and_clamp"])
def test_more_graphs_match_torchs(case):
    def build(m):
        x = m.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
        w = m.tensor([0.25, -0.5, 2.0], requires_grad=True)
        if case == "view_output":  # a view: its base drawn dark green, joined by a dotted edge
            return (x * w).t(), {"x": x, "w": w}
        if case == "two_outputs":
            return ((x * w).sum(), (x + w).exp()), {"x": x}
        if case == "reused_input":
            return (x * x + x).sum(), {"x": x}
        if case == "unused_branch":  # w is a constant here: no edge, no leaf
            return (x * w.detach()).relu().mean(), {"x": x, "w": w}
        return (x.pow(3).clamp(-1, 1) * w).sum(), {"x": x, "w": w}

    (ev, ep), (tv, tp) = build(ember), build(torch)
    same_structure(make_dot(ev, params=ep), torch_walk(tv, tp))


def test_custom_function_saved_tensors_are_drawn_as_torchviz_does():
    def build(m):
        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = m.tensor([1.0, 2.0], requires_grad=True)
        return Square.apply(x).sum(), x

    (ey, ex), (ty, tx) = build(ember), build(torch)
    nodes, edges = parse(make_dot(ey, params={"x": ex}).source)
    t_nodes, t_edges = torch_walk(ty, {"x": tx})
    fn = next(n for n, a in nodes.items() if a["label"] == "SquareBackward")
    t_fn = next(n for n, a in t_nodes.items() if a["label"] == "SquareBackward")
    assert fn and t_fn
    # the saved x is drawn (orange, an undirected edge to the node) on top of torch's graph
    saved = [(t, a) for t, h, a in edges if h == fn and a.get("dir") == "none"]
    assert len(saved) == 1 and saved[0][0] == str(id(ex))
    assert len(edges) == len(t_edges) + 1
    # after backward the saved tensor is freed: the graph is drawn without it
    ey.backward()
    nodes, edges = parse(make_dot(ey, params={"x": ex}).source)
    assert len(edges) == len(t_edges)


# --- options ----------------------------------------------------------------------------

def _torch_saved_shapes(fn):
    return sorted(tuple(getattr(fn, a).shape) for a in dir(fn)
                  if a.startswith("_saved_") and isinstance(getattr(fn, a), torch.Tensor))


def test_show_saved_draws_the_tensors_each_node_saved_as_torch_saves_them():
    # (the input requires grad: for an input that needs none, torch's addmm saves only
    # mat1, where ember's keeps mat2 too, whose layout the weight's gradient copies)
    em, ey = mlp(ember, input_grad=True)
    tm, ty = mlp(torch, input_grad=True)
    nodes, edges = parse(make_dot(ey, show_saved=True).source)
    saved = {}
    for tail, head, attrs in edges:
        if attrs.get("dir") == "none":
            shape = nodes[head]["label"].split("\n")[1].strip()
            saved.setdefault(nodes[tail]["label"], []).append(shape)
    # torch: per node name, the shapes of its `_saved_*` tensors
    expect, stack, seen = {}, [ty.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        shapes = _torch_saved_shapes(fn)
        if shapes:
            expect.setdefault(type(fn).__name__, []).extend(
                "(" + ", ".join(map(str, s)) + ")" for s in shapes)
        stack.extend(n for n, _ in fn.next_functions if n is not None)
    assert {k: sorted(v) for k, v in saved.items()} == {k: sorted(v) for k, v in expect.items()}
    # orange, but for a saved leaf (x here), drawn over in light blue as torchviz's later
    # statement for the same id does
    colors = {nodes[h]["fillcolor"] for t, h, a in edges if a.get("dir") == "none"}
    assert colors == {"orange", "lightblue"}


def test_show_saved_after_backward_raises_as_torch_does():
    v = course_graph(ember)
    v["L"].backward()
    t = course_graph(torch)
    t["L"].backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        t["L"].grad_fn._saved_self  # noqa: B018
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        make_dot(v["L"], show_saved=True)
    make_dot(v["L"])  # the graph's shape is still there to draw


def test_show_attrs_lists_static_arguments_in_torchvizs_table():
    x = ember.ones(2, 3, requires_grad=True)
    y = x.sum(dim=1, keepdim=True)
    label = parse(make_dot(y, show_attrs=True).source)[0][str(id(y.grad_fn))]["label"]
    name, rule, *rows = label.split("\n")
    assert name == "SumBackward1"
    assert set(rule) == {"-"} and len(rule) == len(rows[0])
    assert sorted(r.split(":")[0].strip() for r in rows) == ["dims", "keepdim"]
    assert any(r.endswith("True") for r in rows)
    long = parse(make_dot(y, show_attrs=True, max_attr_chars=3).source)[0]
    assert all(len(r.split(": ")[1]) <= 6 for r in long[str(id(y.grad_fn))]["label"]
               .split("\n")[2:])
    # without show_attrs the label is the name alone
    assert parse(make_dot(y).source)[0][str(id(y.grad_fn))]["label"] == "SumBackward1"


def test_show_values_gives_the_course_numbers():
    v = course_graph(ember)
    for k in "cdeL":
        v[k].retain_grad()
    v["L"].backward()
    nodes, _ = parse(make_dot(v["L"], params=v, show_values=True).source)
    labels = {a["label"].split("\n")[0]: a["label"] for a in nodes.values()}
    # by hand: L = (ab(a+b))^2 = 900; dL/da = 2e(bd + c) = 1260, dL/db = 2e(ad + c) = 960
    assert labels["a"].split("\n")[2:] == ["= 2", "grad = 1260"]
    assert labels["b"].split("\n")[2:] == ["= 3", "grad = 960"]
    assert labels["L"].split("\n")[2:] == ["= 900", "grad = 1"]
    # the named intermediates sit on their grad_fn nodes: dL/de = 2e = 60, dL/dc = 60*d = 300
    mul = [a["label"] for a in nodes.values() if a["label"].startswith("MulBackward0")]
    assert sorted(mul) == ["MulBackward0\nc ()\n= 6\ngrad = 300",
                           "MulBackward0\ne ()\n= 30\ngrad = 60"]
    add = next(a["label"] for a in nodes.values() if a["label"].startswith("AddBackward0"))
    assert add == "AddBackward0\nd ()\n= 5\ngrad = 360"


def test_show_values_summarises_large_and_meta_tensors():
    x = ember.arange(20.0).requires_grad_()
    y = (x * 2).sum()
    label = parse(make_dot(y, params={"x": x}, show_values=True).source)[0][str(id(x))]["label"]
    assert "= [0 .. 19]" in label and "grad = None" in label
    m = ember.ones(3, device="meta", requires_grad=True)
    label = parse(make_dot((m * 2).sum(), params={"m": m}, show_values=True).source)[0]
    assert "(meta: no values)" in label[str(id(m))]["label"]


def test_params_must_be_tensors():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="params\\['lr'\\] is a float"):
        make_dot(x.sum(), params={"lr": 0.1})


def test_labels_are_quoted_for_dot():
    x = ember.ones(2, requires_grad=True)
    source = make_dot(x.sum(), params={'say "hi"\\': x}).source
    assert 'label="say \\"hi\\"\\\\\\n (2)"' in source
    nodes, _ = parse(source)
    assert nodes[str(id(x))]["label"] == 'say "hi"\\\n (2)'


def test_digraph_source_layout_and_size_grow_with_the_graph():
    g = Digraph(graph_attr={"size": "12,12"}, node_attr={"shape": "box"})
    g.node("a", "A", fillcolor="lightblue")
    g.node("b")
    g.edge("a", "b", dir="none")
    assert g.source == ('digraph {\n\tgraph [size="12,12"]\n\tnode [shape="box"]\n'
                        '\t"a" [label="A" fillcolor="lightblue"]\n\t"b"\n'
                        '\t"a" -> "b" [dir="none"]\n}\n')
    x = ember.ones(1, requires_grad=True)
    y = x
    for _ in range(60):
        y = y * 1.5
    dot = make_dot(y)
    # torchviz's rule: 0.15 inches per statement, at least 12; here 60 MulBackward0 nodes,
    # the leaf, its AccumulateGrad and the output, and 59 + 3 edges
    rows = len(dot.body)
    assert rows == 63 + 62
    assert dot.graph_attr["size"] == f"{rows * 0.15},{rows * 0.15}"


def test_a_compiled_graph_draws_with_its_ops_and_edges():
    @ember.compile
    def f(a, b):
        return (a * b + 1).relu(), a.sum()

    f(ember.ones(2, 3), ember.ones(2, 3))
    (graph,) = f.graphs
    dot = make_dot(graph)
    src = dot.source
    assert src.count("lightblue") == 2  # the two inputs
    for op in ("binary.mul", "binary.add", "unary.relu", "reduce.sum"):
        assert op in src
    assert src.count("darkolivegreen1") == 2  # relu and sum are returned
    # every operand is an edge: mul(a, b), add(mul), relu(add), sum(a)
    assert src.count("->") == 5
