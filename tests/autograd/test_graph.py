"""The recorded graph: grad_fn names and edges, leaves, detach / clone / .data, grad modes."""

import threading
import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def leaf(m, shape=(3,), seed=0, dtype=np.float32):
    return m.tensor(rand_array(shape, dtype, seed=seed), requires_grad=True)


# --- names and edges -------------------------------------------------------------------------

GRAD_FN_CASES = {
    "mul": lambda m, a, b: a * b,
    "mul_scalar": lambda m, a, b: a * 2,
    "add": lambda m, a, b: a + b,
    "add_scalar": lambda m, a, b: a + 1,
    "sub": lambda m, a, b: a - b,
    "div": lambda m, a, b: a / b,
    "neg": lambda m, a, b: -a,
    "pow": lambda m, a, b: a ** 2,
    "exp": lambda m, a, b: a.exp(),
    "log": lambda m, a, b: a.abs().log(),
    "sin": lambda m, a, b: a.sin(),
    "cos": lambda m, a, b: a.cos(),
    "tanh": lambda m, a, b: a.tanh(),
    "sigmoid": lambda m, a, b: a.sigmoid(),
    "relu": lambda m, a, b: a.relu(),
    "sum": lambda m, a, b: a.sum(),
    "sum_dim": lambda m, a, b: a.sum(0),
    "mean": lambda m, a, b: a.mean(),
    "amax": lambda m, a, b: a.amax(),
    "max": lambda m, a, b: a.max(),
    "max_dim": lambda m, a, b: a.max(0)[0],
    "mm": lambda m, a, b: a.reshape(3, 1).mm(b.reshape(1, 3)),
    "matmul_2d": lambda m, a, b: a.reshape(3, 1) @ b.reshape(1, 3),
    "view": lambda m, a, b: a.view(3, 1),
    "reshape": lambda m, a, b: a.reshape(1, 3),
    "t": lambda m, a, b: a.reshape(3, 1).t(),
    "transpose": lambda m, a, b: a.reshape(3, 1).transpose(0, 1),
    "permute": lambda m, a, b: a.reshape(3, 1).permute(1, 0),
    "expand": lambda m, a, b: a.expand(2, 3),
    "unsqueeze": lambda m, a, b: a.unsqueeze(0),
    "squeeze": lambda m, a, b: a.reshape(1, 3).squeeze(0),
    "select": lambda m, a, b: a[0],
    "slice": lambda m, a, b: a[1:],
    "index": lambda m, a, b: a[[0, 2]],
    "clone": lambda m, a, b: a.clone(),
    "to_double": lambda m, a, b: a.double(),
    "where": lambda m, a, b: m.where(b > 0, a, 0.0),
}


@pytest.mark.parametrize("name", GRAD_FN_CASES)
def test_grad_fn_names_and_edges_match_torch(name):
    fn = GRAD_FN_CASES[name]
    out_e = fn(ember, leaf(ember), leaf(ember, seed=1))
    out_t = fn(torch, leaf(torch), leaf(torch, seed=1))
    assert type(out_e.grad_fn).__name__ == type(out_t.grad_fn).__name__
    assert out_e.grad_fn.name() == out_t.grad_fn.name()
    assert out_e.requires_grad and not out_e.is_leaf
    # One edge per differentiable input; (None, 0) where nothing flows back.
    kinds_e = [None if f is None else type(f).__name__ for f, _ in out_e.grad_fn.next_functions]
    kinds_t = [None if f is None else type(f).__name__ for f, _ in out_t.grad_fn.next_functions]
    assert kinds_e == kinds_t


def test_next_functions_walk_the_graph_to_the_leaves():
    a, b = leaf(ember), leaf(ember, seed=1)
    loss = ((a * b) + a.exp()).sum()
    add = loss.grad_fn.next_functions[0][0]
    assert add.name() == "AddBackward0"
    mul, exp = (f for f, _ in add.next_functions)
    assert (mul.name(), exp.name()) == ("MulBackward0", "ExpBackward0")
    acc_a, acc_b = (f for f, _ in mul.next_functions)
    assert type(acc_a).__name__ == "AccumulateGrad"
    assert acc_a.variable is a and acc_b.variable is b
    # a's AccumulateGrad is shared by every use of a.
    assert exp.next_functions[0][0] is acc_a


def test_multi_output_nodes_number_their_outputs():
    x = leaf(ember, (2, 3))
    values, indices = x.max(1)
    assert values.grad_fn.name() == "MaxBackward0"
    assert values.output_nr == 0
    assert not indices.requires_grad and indices.grad_fn is None


def test_leaves_and_requires_grad():
    x = ember.ones(3)
    assert x.is_leaf and not x.requires_grad and x.grad_fn is None
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    y = x * 2
    assert not y.is_leaf and y.requires_grad
    y.requires_grad_(True)  # allowed: it already requires grad
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        torch.ones(3, requires_grad=True).mul(2).requires_grad_(False)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_only_float_and_complex_tensors_can_require_grad(dtype):
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
            m.ones(3, dtype=getattr(m, dtype)).requires_grad_()
    for d in ("float16", "bfloat16", "float64", "complex64"):
        assert ember.ones(2, dtype=getattr(ember, d)).requires_grad_().requires_grad


def test_integer_results_do_not_require_grad():
    x = leaf(ember)
    assert not (x > 0).requires_grad
    assert not x.argmax().requires_grad


# --- no node when nothing needs one ---------------------------------------------------------

def test_no_node_when_no_input_requires_grad():
    y = ember.ones(3) * ember.ones(3)
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("mode", ["no_grad", "set_grad_enabled", "inference_mode"])
def test_no_node_under_disabled_grad(mode):
    x = leaf(ember)
    make = {"no_grad": ember.no_grad, "set_grad_enabled": lambda: ember.set_grad_enabled(False),
            "inference_mode": ember.inference_mode}[mode]
    with make():
        y = x * 2
        z = x[0]
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is None and not z.requires_grad
    assert ember.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf(ember)
    with ember.no_grad():
        with ember.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad


def test_grad_modes_as_decorators():
    x = leaf(ember)

    @ember.no_grad()
    def f(t):
        return t * 2

    @ember.no_grad
    def g(t):
        return t * 2

    @ember.inference_mode()
    def h(t):
        return t * 2

    @ember.enable_grad()
    def k(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad
    assert not h(x).requires_grad and h(x).is_inference()
    with ember.no_grad():
        assert k(x).requires_grad
    assert f.__name__ == "f"


def test_grad_mode_decorates_generators():
    x = leaf(ember)

    @ember.no_grad()
    def gen():
        yield x * 2
        yield x * 3

    assert [t.requires_grad for t in gen()] == [False, False]
    assert ember.is_grad_enabled()


def test_set_grad_enabled_acts_at_construction_and_restores():
    ember.set_grad_enabled(False)
    assert not ember.is_grad_enabled()
    ember.set_grad_enabled(True)
    with ember.set_grad_enabled(False):
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()


def test_inference_mode_flags():
    assert not ember.is_inference_mode_enabled()
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not ember.is_grad_enabled()
        t = ember.ones(2)
        with ember.inference_mode(False):
            assert not ember.is_inference_mode_enabled()
    assert t.is_inference() and not ember.ones(2).is_inference()


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["enabled"] = ember.is_grad_enabled()
        seen["records"] = (leaf(ember) * 2).requires_grad
        with ember.no_grad():
            seen["inner"] = ember.is_grad_enabled()
            barrier.wait()
            barrier.wait()

    barrier = threading.Barrier(2)
    with ember.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        barrier.wait()
        # Both threads are inside no_grad; leaving ours must not change theirs.
    assert ember.is_grad_enabled()
    assert (leaf(ember) * 2).requires_grad
    barrier.wait()
    th.join()
    assert seen == {"enabled": True, "records": True, "inner": False}


def test_inference_tensors_cannot_be_saved_for_backward():
    for m in (ember, torch):
        with m.inference_mode():
            x = m.ones(3)
        w = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            w * x
        # add saves nothing, so it is allowed and backward works.
        (w + x).sum().backward()
        assert_same(w.grad, torch.ones(3)) if m is ember else None


def test_inplace_on_inference_tensor_outside_inference_mode():
    for m in (ember, torch):
        with m.inference_mode():
            x = m.ones(3)
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
            x.add_(1)


# --- detach, detach_, clone, data, retain_grad ------------------------------------------------

def test_detach_shares_storage_and_version():
    x = leaf(ember)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.data_ptr() == x.data_ptr()
    d.add_(1)
    assert x._version == d._version == 1
    assert_same(x.detach(), to_t(d))


def to_t(e):
    return torch.from_numpy(np.array(e.detach().numpy()))


def test_detach_in_place():
    x = leaf(ember)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    for m in (ember, torch):
        v = (leaf(m) * 1)[:2]
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            v.detach_()


def test_clone_keeps_the_graph():
    x = leaf(ember)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0" and c.data_ptr() != x.data_ptr()
    (c * 3).sum().backward()
    assert_same(x.grad, torch.full((3,), 3.0))


def test_data_is_a_detached_alias_with_its_own_version():
    for m in (ember, torch):
        x = leaf(m)
        d = x.data
        assert not d.requires_grad and d.data_ptr() == x.data_ptr()
        d.add_(1)
        assert (x._version, d._version) == (0, 1)
        assert x.requires_grad


def test_data_setter_swaps_values_and_keeps_requires_grad():
    x = leaf(ember)
    x.data = ember.zeros(3)
    assert x.requires_grad and x.is_leaf
    assert_same(x.detach(), torch.zeros(3))


def test_retain_grad_on_a_non_leaf():
    res = {}
    for m in (ember, torch):
        x = leaf(m)
        y = x.exp()
        y.retain_grad()
        assert y.retains_grad and not x.retains_grad
        (y * y).sum().backward()
        res[m] = (y.grad, x.grad)
    assert_same(res[ember][0], res[torch][0])
    assert_same(res[ember][1], res[torch][1])


def test_retain_grad_errors_and_leaf_no_op():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has"):
            m.ones(3).retain_grad()
    x = leaf(ember)
    x.retain_grad()
    assert not x.retains_grad  # a leaf keeps its grad anyway


def test_non_leaf_grad_warns_and_is_none():
    for m in (ember, torch):
        y = leaf(m) * 2
        y.sum().backward()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert y.grad is None
        assert len(w) == 1 and issubclass(w[0].category, UserWarning)
        assert "is not a leaf Tensor is being accessed" in str(w[0].message)


def test_integer_and_bool_results_never_require_grad():
    """Regression: `x.int()` of a tensor requiring grad kept a ToCopyBackward0 node, so a
    product with it sent gradient back through the cast (torch cuts the graph there)."""
    for L in (torch, ember):
        x = L.tensor([1.5, -2.0], requires_grad=True)
        for y in (x.int(), x.long(), x.to(L.bool), x.round().to(L.int16)):
            assert not y.requires_grad and y.grad_fn is None
        (x * x.int()).sum().backward()
        assert x.grad.tolist() == [1.0, -2.0]


# -- record_like: a repeated op's node from the statics of the first ------------------------

def _mul_node(a, b):
    from ember.autograd import graph as G

    out = a * b
    return out, G.statics(out.grad_fn)


def test_record_like_makes_the_node_record_makes():
    from ember.autograd import graph as G

    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3)
    first, like = _mul_node(a, b)
    x = ember.randn(3, requires_grad=True)
    y = ember.randn(3)
    ref = x * y
    out = ember.empty(3)  # (a result to attach the node to, as a recording's lazy one)
    assert G.record_like(like, (x, y), out)
    node, want = out.grad_fn, ref.grad_fn
    assert type(node) is type(want) and node._needs == want._needs
    assert [e[0] for e in node._edges] == [e[0] for e in want._edges]
    assert node._versions == want._versions
    assert [s is x or s is y for s in node._saved if s is not None] == \
        [s is x or s is y for s in want._saved if s is not None]
    out.backward(ember.ones(3))
    assert ember.equal(x.grad, y)  # (d(x*y)/dx through the new node)
    assert first.grad_fn is not node


def test_record_like_refuses_other_inputs_requiring_grad():
    from ember.autograd import graph as G

    _, like = _mul_node(ember.randn(3, requires_grad=True), ember.randn(3))
    out = ember.empty(3)
    both = (ember.randn(3, requires_grad=True), ember.randn(3, requires_grad=True))
    assert not G.record_like(like, both, out) and out.grad_fn is None
    neither = (ember.randn(3), ember.randn(3))
    assert not G.record_like(like, neither, out) and out.grad_fn is None
