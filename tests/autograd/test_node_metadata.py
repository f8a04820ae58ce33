"""Node metadata as programs inspect it, against torch: node class names and
`next_functions` over an op table, PyTorch's `_saved_*` / `_raw_saved_*` attributes (names,
values, freed after backward), node hooks' arguments, `type(grad_fn)`, and the helpers of
`torch.autograd.graph` (GradientEdge, allow_mutation_on_saved_tensors ...)."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, same_message


def leaf(m, seed=0, shape=(3, 4)):
    a = np.random.RandomState(seed).uniform(0.2, 1.5, shape)
    return m.tensor(a, dtype=m.float64, requires_grad=True)


# One call per entry: `fn(m, a, b)` with a, b (3, 4) float64 leaves in (0.2, 1.5). (Dims
# given negative, as tuples or as None: test_saved_attrs.py.)
OPS = {
    # elementwise, with numbers where PyTorch wraps them into tensors
    "mul": lambda m, a, b: a * b, "mul_int": lambda m, a, b: a * 2,
    "mul_float": lambda m, a, b: a * 2.5, "div": lambda m, a, b: a / b,
    "div_num": lambda m, a, b: a / 3, "add_alpha": lambda m, a, b: a.add(b, alpha=2),
    "sub": lambda m, a, b: a - b, "rsub": lambda m, a, b: 1 - a,
    "pow_num": lambda m, a, b: a ** 2, "pow_t": lambda m, a, b: a ** b,
    "rpow": lambda m, a, b: 2 ** a, "square": lambda m, a, b: a.square(),
    "exp": lambda m, a, b: a.exp(), "exp2": lambda m, a, b: a.exp2(),
    "log": lambda m, a, b: a.log(), "log10": lambda m, a, b: a.log10(),
    "sin": lambda m, a, b: a.sin(), "cos": lambda m, a, b: a.cos(),
    "tan": lambda m, a, b: a.tan(), "asin": lambda m, a, b: (a / 2).asin(),
    "acos": lambda m, a, b: (a / 2).acos(), "atanh": lambda m, a, b: (a / 2).atanh(),
    "acosh": lambda m, a, b: (a + 1).acosh(), "cosh": lambda m, a, b: a.cosh(),
    "sqrt": lambda m, a, b: a.sqrt(), "rsqrt": lambda m, a, b: a.rsqrt(),
    "tanh": lambda m, a, b: a.tanh(), "sigmoid": lambda m, a, b: a.sigmoid(),
    "relu": lambda m, a, b: a.relu(), "abs": lambda m, a, b: a.abs(),
    "ceil": lambda m, a, b: a.ceil(), "neg": lambda m, a, b: -a,
    "clamp": lambda m, a, b: a.clamp(0.5, 1.0), "clamp_max": lambda m, a, b: a.clamp(max=1.0),
    "clamp_t": lambda m, a, b: a.clamp(b), "clamp_t_max": lambda m, a, b: a.clamp(max=b),
    "minimum": lambda m, a, b: m.minimum(a, b), "fmin": lambda m, a, b: m.fmin(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b), "hypot": lambda m, a, b: m.hypot(a, b),
    "lerp": lambda m, a, b: m.lerp(a, b, 0.3), "addcmul": lambda m, a, b: m.addcmul(a, a, b),
    "where": lambda m, a, b: m.where(a > 0.8, a, b),
    # reductions
    "sum": lambda m, a, b: a.sum(), "sum_dim": lambda m, a, b: a.sum(1, keepdim=True),
    "mean": lambda m, a, b: a.mean(), "mean_dim": lambda m, a, b: a.mean(0),
    "prod": lambda m, a, b: a.prod(), "prod_dim": lambda m, a, b: a.prod(1),
    "max": lambda m, a, b: a.max(), "max_dim": lambda m, a, b: a.max(1)[0],
    "min_dim": lambda m, a, b: a.min(0).values, "amax": lambda m, a, b: a.amax(1),
    "amin": lambda m, a, b: a.amin(0), "sort": lambda m, a, b: a.sort(1)[0],
    "topk": lambda m, a, b: a.topk(2, 1)[0], "cumsum": lambda m, a, b: a.cumsum(1),
    "cumprod": lambda m, a, b: a.cumprod(0), "logsumexp": lambda m, a, b: a.logsumexp(1),
    "median": lambda m, a, b: a.median(), "cummax": lambda m, a, b: a.cummax(1)[0],
    "softmax": lambda m, a, b: a.softmax(1), "log_softmax": lambda m, a, b: a.log_softmax(0),
    "aminmax": lambda m, a, b: m.aminmax(a)[0],
    "aminmax_dim": lambda m, a, b: m.aminmax(a, dim=1)[1],
    # linear algebra
    "mm": lambda m, a, b: a @ b.t(), "mv": lambda m, a, b: a @ b[0],
    "dot": lambda m, a, b: a[0] @ b[0], "bmm": lambda m, a, b: a[None].bmm(b.t()[None]),
    "addmv": lambda m, a, b: m.addmv(a[:, 0], a, b[0]),
    # views and copies
    "view": lambda m, a, b: a.view(12), "reshape_t": lambda m, a, b: a.t().reshape(-1),
    "expand": lambda m, a, b: a[:1].expand(3, 4), "t": lambda m, a, b: a.t(),
    "mT": lambda m, a, b: a.transpose(0, 1), "H": lambda m, a, b: a.H,
    "permute": lambda m, a, b: a.permute(1, 0), "select": lambda m, a, b: a[1],
    "slice": lambda m, a, b: a[:, 1:3], "unsqueeze": lambda m, a, b: a.unsqueeze(0),
    "squeeze": lambda m, a, b: a[None].squeeze(0), "unbind": lambda m, a, b: a.unbind(0)[1],
    "narrow": lambda m, a, b: a.narrow(1, 1, 2), "diagonal": lambda m, a, b: a.diagonal(),
    "flip": lambda m, a, b: a.flip(0), "roll": lambda m, a, b: a.roll(1, 0),
    "repeat": lambda m, a, b: a.repeat(2, 1), "triu": lambda m, a, b: a.triu(),
    "cat": lambda m, a, b: m.cat([a, b], 1), "stack": lambda m, a, b: m.stack([a, b]),
    "unfold": lambda m, a, b: a.unfold(1, 2, 1), "clone": lambda m, a, b: a.clone(),
    "atleast_2d": lambda m, a, b: m.atleast_2d(a[0]), "atleast_3d": lambda m, a, b: m.atleast_3d(a),
    "atleast_3d_1d": lambda m, a, b: m.atleast_3d(a[0]),
    "broadcast_to": lambda m, a, b: a[0].broadcast_to(3, 4),
    # indexing
    "gather": lambda m, a, b: a.gather(1, m.tensor([[0], [1], [2]])),
    "masked_fill": lambda m, a, b: a.masked_fill(b > 0.8, 0.0),
    "masked_select": lambda m, a, b: a.masked_select(b > 0.8),
    "scatter": lambda m, a, b: a.scatter(1, m.tensor([[0], [1], [2]]), b[:, :1]),
    "index_add": lambda m, a, b: a.index_add(1, m.tensor([0, 2]), b[:, :2]),
    "index_copy": lambda m, a, b: a.index_copy(1, m.tensor([0, 2]), b[:, :2]),
    # nn functionals
    "gelu": lambda m, a, b: m.nn.functional.gelu(a),
    "silu": lambda m, a, b: m.nn.functional.silu(a),
    "elu": lambda m, a, b: m.nn.functional.elu(a), "selu": lambda m, a, b: m.nn.functional.selu(a),
    "leaky_relu": lambda m, a, b: m.nn.functional.leaky_relu(a, 0.2),
    "softplus": lambda m, a, b: m.nn.functional.softplus(a),
    "hardtanh": lambda m, a, b: m.nn.functional.hardtanh(a),
    "linear": lambda m, a, b: m.nn.functional.linear(a, b),
    "mse": lambda m, a, b: m.nn.functional.mse_loss(a, b),
    "batch_norm": lambda m, a, b: m.nn.functional.batch_norm(a, None, None, training=True),
    "batch_norm_w": lambda m, a, b: m.nn.functional.batch_norm(a, None, None, b[0],
                                                               training=True),
    "outer": lambda m, a, b: m.outer(a[0], b[1]),
    "cross_entropy": lambda m, a, b: m.nn.functional.cross_entropy(a, m.tensor([0, 1, 3])),
    # in place, and through views
    "mul_": lambda m, a, b: a.clone().mul_(b), "exp_": lambda m, a, b: a.clone().exp_(),
    "relu_": lambda m, a, b: a.clone().relu_(), "pow_": lambda m, a, b: a.clone().pow_(2),
    "setitem": lambda m, a, b: _setitem(a.clone(), b[0]),
    "view_mul_": lambda m, a, b: _view_mul(a.clone()),
    "view_after_inplace": lambda m, a, b: _view_after_inplace(a.clone()),
    "outofplace_on_view": lambda m, a, b: a[0] * 2,
}


def _setitem(c, v):
    c[0] = v
    return c


def _view_mul(c):
    c[:, 1].mul_(2)
    return c


def _view_after_inplace(c):
    v = c[0]
    c.mul_(2)
    return v


def _describe(fn, a, b) -> str:
    """A node's name and its edges: each a node name with output number, `None`, or the
    leaf its AccumulateGrad holds."""
    if fn is None:
        return "None"
    edges = []
    for node, nr in fn.next_functions:
        if node is None:
            edges.append(f"None:{nr}")
        elif node.name() == "torch::autograd::AccumulateGrad":
            edges.append("a" if node.variable is a else "b" if node.variable is b else "?")
        else:
            edges.append(f"{node.name()}:{nr}")
    return f"{fn.name()}[{', '.join(edges)}]"


def _run(m, name):
    a, b = leaf(m, 0), leaf(m, 1)
    return f_out(m, name, a, b), a, b


def f_out(m, name, a, b):
    return OPS[name](m, a, b)


@pytest.mark.parametrize("name", list(OPS))
def test_node_name_and_edges(name):
    got = []
    for m in (ember, torch):
        out, a, b = _run(m, name)
        got.append(_describe(out.grad_fn, a, b))
    assert got[0] == got[1]


def _value(v):
    if isinstance(v, ember.Tensor | torch.Tensor):
        return ("tensor", tuple(v.shape), str(v.dtype).split(".")[-1],
                np.asarray(v.detach().tolist()).tolist())
    if isinstance(v, tuple):
        return tuple(_value(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return int(v)  # (PyTorch shows a Scalar given as 1.0 as it was given; ember as float)
    return v


def _saved_names(fn) -> list:
    # (`*_sym_strides`, an input's layout, is one ember's nodes do not keep)
    return sorted(n for n in dir(fn) if n.startswith(("_saved_", "_raw_saved_"))
                  and not n.endswith("_sym_strides"))


SAVED_CASES = [n for n in OPS if n not in ("setitem", "view_mul_", "view_after_inplace",
                                           "aminmax", "aminmax_dim", "cross_entropy", "mse",
                                           "addcmul", "clone", "ceil", "neg", "where",
                                           "batch_norm", "batch_norm_w")]


@pytest.mark.parametrize("name", SAVED_CASES)
def test_saved_attributes_match_torch(name):
    (oe, *_), (ot, *_) = _run(ember, name), _run(torch, name)
    fe, ft = oe.grad_fn, ot.grad_fn
    assert _saved_names(fe) == _saved_names(ft)
    for attr in _saved_names(ft):
        if attr.startswith("_raw_saved_"):
            continue
        te, tt = getattr(fe, attr), getattr(ft, attr)
        if isinstance(tt, torch.Tensor):
            # (a saved result of exp, tanh ...: a few ulps apart where the two libraries'
            # vectorised kernels differ; saved inputs are the inputs themselves)
            assert_same(te, tt, rtol=1e-14, atol=0)
            continue
        assert _value(te) == _value(tt), attr


def test_saved_tensor_identity_as_in_the_tutorial():
    # a saved input is the input itself; a saved output is another tensor of equal values
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.pow(2)
        assert y.grad_fn._saved_self is x and y.grad_fn._saved_exponent == 2
        z = x.exp()
        assert z.grad_fn._saved_result is not z and z.grad_fn._saved_result.equal(z)


def test_saved_tensors_are_freed_by_backward_numbers_stay():
    def after_backward(m, attr):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.sum(0, keepdim=True) * x
        s = y.sum(0)
        s.backward()
        return getattr(y.grad_fn if attr != "_saved_dim" else s.grad_fn, attr)

    msg = same_message(lambda m: after_backward(m, "_saved_self"))
    assert msg.startswith("Trying to backward through the graph a second time")
    same_message(lambda m: after_backward(m, "_saved_other"))
    assert after_backward(ember, "_saved_dim") == after_backward(torch, "_saved_dim") == (0,)


def test_unknown_saved_attribute_is_an_attribute_error():
    for m in (ember, torch):
        y = leaf(m).exp()
        with pytest.raises(AttributeError, match="_saved_self"):
            getattr(y.grad_fn, "_saved_self")  # noqa: B009 (the attribute lookup is the test)
        assert not hasattr(y.grad_fn, "_saved_other")
        assert "_saved_result" in dir(y.grad_fn) and "_raw_saved_result" in dir(y.grad_fn)


def test_raw_saved_tensor_hooks():
    logs = {}
    for m in (ember, torch):
        log = logs[m.__name__] = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.pow(2)
        raw = y.grad_fn._raw_saved_self
        raw.register_hooks(lambda t, log=log: (log.append(("pack", t.tolist())), t * 10)[1],
                           lambda t, log=log: (log.append(("unpack", t.tolist())), t)[1])
        y.sum().backward()
        log.append(x.grad.tolist())
    assert logs["ember"] == logs["torch"]
    # NOTE: each output is kept alive while its SavedTensor is used: PyTorch's SavedTensor
    # does not own its node, and using it after the node is gone crashes the process
    kept = []

    def twice(m):
        kept.append(m.ones(2, requires_grad=True).exp())
        raw = kept[-1].grad_fn._raw_saved_result
        raw.register_hooks(lambda t: t, lambda t: t)
        raw.register_hooks(lambda t: t, lambda t: t)

    def undefined(m):
        kept.append(m.ones(2, requires_grad=True) * 2)
        kept[-1].grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    same_message(twice)
    same_message(undefined)


def test_node_types_print_as_torchs():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        c = x.clone()
        c[0] = 5
        names = [str(type(y.grad_fn)), str(type(y.grad_fn.next_functions[0][0])),
                 str(type(c.grad_fn)), str(type(x.sum(0).grad_fn))]
        assert names == ["<class 'MulBackward0'>", "<class 'AccumulateGrad'>",
                         "<class 'CopySlices'>", "<class 'SumBackward1'>"]


# --- node hooks ----------------------------------------------------------------------------

HOOK_CASES = {
    "max_dim": lambda m, x: x.max(1)[0],
    "sort": lambda m, x: x.sort(1)[0][:, 0],
    "topk": lambda m, x: x.topk(2, 1).values,
    "kthvalue": lambda m, x: x.kthvalue(2, 1)[0],
    "cummax": lambda m, x: x.cummax(1)[0],
    "var_mean": lambda m, x: m.var_mean(x, 1)[0],
    "mul": lambda m, x: x * 3,
}


@pytest.mark.parametrize("name", list(HOOK_CASES))
def test_node_hooks_see_differentiable_outputs_only(name):
    logs = []
    for m in (ember, torch):
        log = []
        x = m.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], requires_grad=True)
        out = HOOK_CASES[name](m, x)
        node = out.grad_fn
        while node.name() in ("SelectBackward0",):
            node = node.next_functions[0][0]
        node.register_prehook(lambda go, log=log: log.append(
            ["none" if g is None else g.tolist() for g in go]))
        node.register_hook(lambda gi, go, log=log: log.append(
            (["none" if g is None else g.tolist() for g in gi], len(go))))
        out.sum().backward()
        log.append(x.grad.tolist())
        logs.append(log)
    assert logs[0] == logs[1]


def test_node_hooks_replace_gradients():
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        v, _ = m.stack([x, x * 2]).max(0)
        v.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        y = x * 3
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))
        (v.sum() + y.sum()).backward()
        assert x.grad.tolist() == [24.0, 24.0]


# --- torch.autograd.graph helpers -----------------------------------------------------------

def test_gradient_edge_in_autograd_grad():
    res = []
    for m in (ember, torch):
        g = m.autograd.graph
        x = m.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        y = (h ** 2).sum()
        e = g.get_gradient_edge(h)
        assert isinstance(e, g.GradientEdge) and e.node is h.grad_fn and e.output_nr == 0
        assert g.get_gradient_edge(x).node.variable is x
        res.append(m.autograd.grad(y, e, retain_graph=True))
        res.append(m.autograd.grad(y, [e, x]))
    for e_res, t_res in zip(res[:2], res[2:]):
        for ge, gt in zip(e_res, t_res):
            assert_same(ge, gt)
    same_message(lambda m: m.autograd.graph.get_gradient_edge(m.ones(2)))


def test_allow_mutation_on_saved_tensors():
    out = []
    for m in (ember, torch):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            a = m.ones(2, 3, requires_grad=True)
            b = a.clone()
            s = (b ** 2).sum()
            b.sin_()
            s.backward()
            out.append(a.grad)
    assert_same(*out)

    def nested(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            with m.autograd.graph.allow_mutation_on_saved_tensors():
                pass

    same_message(nested)
    for m in (ember, torch):  # a graph recorded inside, backward outside
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            s = (m.ones(2, requires_grad=True) ** 2).sum()
        with pytest.raises(AssertionError, match="outside of the 'allow_mutation"):
            s.backward()


def test_graph_module_names():
    names = ["GradientEdge", "Node", "allow_mutation_on_saved_tensors",
             "disable_saved_tensors_hooks", "get_gradient_edge", "increment_version",
             "register_multi_grad_hook", "save_on_cpu", "saved_tensors_hooks"]
    assert all(hasattr(ember.autograd.graph, n) for n in names)
    y = leaf(ember) * 2
    assert isinstance(y.grad_fn, ember.autograd.graph.Node)
    assert isinstance(y.grad_fn.next_functions[0][0], ember.autograd.graph.Node)


def test_tensor_h_refuses_other_ranks_as_torch():
    for nd in (1, 3):
        same_message(lambda m, nd=nd: m.ones((2,) * nd).H)
