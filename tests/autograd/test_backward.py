"""backward() and autograd.grad(): arguments, accumulation, errors, hooks, higher order."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def pair(shape=(3,), seed=0, dtype=np.float64):
    """The same leaf in ember and in torch."""
    a = rand_array(shape, dtype, seed=seed)
    return ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def both(fn, *arrays):
    """Run fn(module, *leaves) in both frameworks; return (ember leaves, torch leaves, outs)."""
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    return es, ts, fn(ember, *es), fn(torch, *ts)


# --- backward's arguments ---------------------------------------------------------------------

def test_backward_with_explicit_gradient():
    es, ts, oe, ot = both(lambda m, x: x.exp() * 2, rand_array((2, 3), np.float64))
    g = rand_array((2, 3), np.float64, seed=5)
    oe.backward(ember.tensor(g))
    ot.backward(torch.tensor(g))
    assert_same(es[0].grad, ts[0].grad)


def test_gradient_is_cast_to_the_output_dtype():
    x = ember.ones(3, requires_grad=True)
    (x * 2).backward(ember.ones(3, dtype=ember.float64))
    assert x.grad.dtype is ember.float32


def test_grads_accumulate_across_calls_and_zeroing():
    xe, xt = pair()
    for x in (xe, xt):
        (x * x).sum().backward()
        (x * 3).sum().backward()
    assert_same(xe.grad, xt.grad)
    grad_obj = xe.grad
    (xe * 1).sum().backward()
    assert xe.grad is grad_obj  # accumulated in place, as PyTorch does
    xe.grad = None
    xe.sum().backward()
    assert_same(xe.grad, torch.ones(3, dtype=torch.float64))


def test_backward_inputs_restricts_accumulation():
    es, ts, oe, ot = both(lambda m, a, b: (a * b).sum(), rand_array((3,), np.float64),
                          rand_array((3,), np.float64, seed=1))
    oe.backward(inputs=[es[0]])
    ot.backward(inputs=[ts[0]])
    assert_same(es[0].grad, ts[0].grad)
    assert es[1].grad is None and ts[1].grad is None


def test_backward_inputs_on_a_non_leaf():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        (y * y).sum().backward(inputs=[y])
        assert y.retains_grad and y.grad.tolist() == [4.0] * 3
        assert x.grad is None


def test_retain_graph_allows_a_second_backward():
    xe, xt = pair()
    for x in (xe, xt):
        y = (x.sin() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
    assert_same(xe.grad, xt.grad)


def test_ops_that_save_nothing_can_backward_twice():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = (x + 1).view(3, 1)[1:].sum()
        y.backward()
        y.backward()
        assert x.grad.tolist() == [2.0 * (i > 0) for i in range(3)]


def test_module_level_backward():
    xe, xt = pair()
    ember.autograd.backward([(xe * 2).sum(), xe.exp().sum()])
    torch.autograd.backward([(xt * 2).sum(), xt.exp().sum()])
    assert_same(xe.grad, xt.grad)
    ember.autograd.backward(xe * 3, grad_tensors=ember.ones(3, dtype=ember.float64))
    torch.autograd.backward(xt * 3, grad_tensors=torch.ones(3, dtype=torch.float64))
    assert_same(xe.grad, xt.grad)


def test_backward_from_a_leaf():
    x = ember.ones(3, requires_grad=True)
    x.backward(ember.full((3,), 2.0))
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


# --- autograd.grad ----------------------------------------------------------------------------

def test_grad_returns_without_accumulating():
    xe, xt = pair()
    (ge,) = ember.autograd.grad((xe ** 3).sum(), xe)
    (gt,) = torch.autograd.grad((xt ** 3).sum(), xt)
    assert_same(ge, gt)
    assert xe.grad is None and not ge.requires_grad


def test_grad_with_several_outputs_and_inputs():
    es, ts, oe, ot = both(lambda m, a, b: ((a * b).sum(), (a.exp() + b).sum()),
                          rand_array((3,), np.float64), rand_array((3,), np.float64, seed=1))
    assert_same(ember.autograd.grad(oe, es), torch.autograd.grad(ot, ts))


@pytest.mark.parametrize("how", ["grad", "backward"])
def test_two_outputs_of_one_node_as_roots(how):
    """Both outputs of one node (a QR's q and r) as roots: the node runs once, with both
    gradients, and its inputs are reached."""
    def run(m):
        a = m.tensor(rand_array((4, 3), np.float64), requires_grad=True)
        q, r = m.linalg.qr(a)
        gq, gr = m.ones_like(q), m.full_like(r, 0.5)
        if how == "grad":
            return m.autograd.grad([q, r], [a], [gq, gr])[0]
        m.autograd.backward([q, r], [gq, gr])
        return a.grad
    assert_same(run(ember), run(torch))


def test_grad_with_respect_to_a_non_leaf():
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        (g,) = m.autograd.grad((y * y).sum(), y)
        assert g.tolist() == [6.0, 12.0]


def test_grad_allow_unused_and_materialize():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="index 1 appears to not have been used"):
            m.autograd.grad((x * 2).sum(), [x, y])
        gx, gy = m.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
        assert gy is None and gx.tolist() == [2.0] * 3
        gx, gy = m.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
        assert gy.tolist() == [0.0] * 3
        with pytest.raises(ValueError):
            m.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True, allow_unused=False)


def test_grad_is_grads_batched():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    xt = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    eye_e, eye_t = ember.eye(3), torch.eye(3)
    (je,) = ember.autograd.grad(x.exp() * x, x, eye_e, is_grads_batched=True)
    (jt,) = torch.autograd.grad(xt.exp() * xt, xt, eye_t, is_grads_batched=True)
    assert_same(je, jt)


# --- errors -----------------------------------------------------------------------------------

def test_non_scalar_output_needs_a_gradient():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            (m.ones(3, requires_grad=True) * 2).backward()
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            x = m.ones(3, requires_grad=True)
            m.autograd.grad(x * 2, [x])


def test_backward_twice_through_freed_buffers():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
            y.backward()
        z = x.exp().sum()
        m.autograd.grad(z, x)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            m.autograd.grad(z, x)


def test_saved_tensors_of_a_freed_node():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = x * x
        y.sum().backward()
        with pytest.raises(RuntimeError, match="after they have already been freed"):
            getattr(y.grad_fn, "_saved_tensors" if m is ember else "_saved_self")


def test_output_that_does_not_require_grad():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
            m.ones(3).sum().backward()
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
            m.autograd.grad([x.sum(), m.ones(())], [x])
        with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not"):
            m.autograd.grad(x.sum(), [x, m.ones(3)])


def test_gradient_shape_mismatch():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output\\[0\\]"):
            (x * 2).backward(m.ones(2))


def test_empty_inputs_to_backward():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot be empty"):
            (x * 2).sum().backward(inputs=[])


def test_backward_with_create_graph_warns_about_the_cycle():
    x = ember.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match="create a reference cycle"):
        (x * x).sum().backward(create_graph=True)
    # (PyTorch's C++ name, as its name() gives it)
    assert x.grad.requires_grad and x.grad.grad_fn.name() == "torch::autograd::CopyBackwards"


# --- hooks ------------------------------------------------------------------------------------

def test_tensor_hook_sees_and_replaces_the_gradient():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        seen = []
        y.register_hook(lambda g: seen.append(g.tolist()))
        y.register_hook(lambda g: g * 10)
        (y * y).sum().backward()
        return seen, x.grad.tolist()

    assert run(ember) == run(torch) == ([[4.0, 8.0, 12.0]], [80.0, 160.0, 240.0])


def test_hook_on_a_leaf_changes_what_accumulates():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        (x * 2).sum().backward()
        assert x.grad.tolist() == [6.0] * 3
        (g,) = m.autograd.grad((x * 2).sum(), x)
        assert g.tolist() == [6.0] * 3


def test_hook_order_tensor_then_retain_then_node_prehook():
    def run(m):
        log = []
        x = m.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: log.append(("t1", g.tolist())) or g * 10)
        y.retain_grad()
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
        y.register_hook(lambda g: log.append(("t2", g.tolist())))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].tolist())))
        y.sum().backward()
        log.append(("retained", y.grad.tolist()))
        return log

    assert run(ember) == run(torch)


def test_post_accumulate_grad_hook():
    def run(m):
        x = m.ones(3, requires_grad=True)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        with pytest.raises(RuntimeError, match="cannot be registered on non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        return seen

    assert run(ember) == run(torch) == [[2.0] * 3, [4.0] * 3]


def test_hooks_need_requires_grad():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            m.ones(3).register_hook(lambda g: g)


def test_node_hooks_can_replace_gradients():
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        y = x * 3
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, gi[1]))
        y.sum().backward()
        assert x.grad.tolist() == [4.0, 4.0]
        x.grad = None
        z = x * 3
        z.grad_fn.register_prehook(lambda go: (go[0] * 0,))
        z.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]


def test_execution_order_matches_torch():
    def run(m):
        log = []
        x = m.ones(3, requires_grad=True)
        w = m.ones(3, requires_grad=True)
        y = x * 2
        z = (y * w).sin()
        x.register_post_accumulate_grad_hook(lambda t: log.append("acc x"))
        w.register_post_accumulate_grad_hook(lambda t: log.append("acc w"))
        y.grad_fn.register_hook(lambda gi, go: log.append("mul x"))
        z.grad_fn.register_prehook(lambda go: log.append("sin"))
        z.grad_fn.next_functions[0][0].register_hook(lambda gi, go: log.append("mul yw"))
        z.sum().backward()
        return log

    assert run(ember) == run(torch)


def test_removed_hooks_do_not_run():
    x = ember.ones(2, requires_grad=True)
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    with x.register_hook(lambda g: g * 2):
        (x * 1).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


# --- the engine ---------------------------------------------------------------------------

def test_deep_graph_does_not_recurse():
    x = ember.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.0001 ** 5000, rtol=1e-4)


def test_diamond_sums_where_paths_meet():
    es, ts, oe, ot = both(lambda m, x: (lambda y: (y * y.exp() + y.sin()).sum())(x * 2),
                          rand_array((4,), np.float64))
    oe.backward()
    ot.backward()
    assert_same(es[0].grad, ts[0].grad)


def test_grad_fn_call_runs_the_vjp():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    (gx, gx2) = y.grad_fn(ember.ones(2))
    assert gx.tolist() == [1.0, 2.0] and gx2.tolist() == [1.0, 2.0]


def test_no_warning_on_plain_backward():
    x = ember.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * x).sum().backward()


def test_leaf_grad_never_aliases_a_gradient_someone_else_holds():
    # A fresh gradient only the engine holds becomes .grad without a copy; one that is
    # shared (add hands the same tensor to both inputs), passed in by the caller, or kept
    # by a hook is copied, so later in-place accumulation touches nothing else.
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(10)
    assert b.grad.tolist() == [1.0, 1.0]
    user = ember.tensor([1.0, 1.0])
    (a + 0).backward(user)
    b.backward(user)
    assert user.tolist() == [1.0, 1.0]
    kept = []
    b.grad = None
    b.register_hook(lambda g: kept.append(g))
    (b * 2).sum().backward()
    b.grad.mul_(0)
    assert kept[0].tolist() == [2.0, 2.0]
    c = ember.tensor([1.0, 2.0], requires_grad=True)
    (c * 3).sum().backward()  # the common case: taken over, and right
    assert c.grad.tolist() == [3.0, 3.0] and c.grad.is_contiguous()


# --- the gradient layout contract: a leaf's .grad takes the leaf's strides ---------------

LAYOUT_LEAVES = {
    "transposed": lambda lib: lib.tensor([[0.5, -1.0, 2.0], [2.0, 0.1, 3.0]]).t(),
    "permuted": lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
    "strided slice": lambda lib: lib.ones(2, 6)[:, ::2],  # (not dense: contiguous .grad)
    "expanded": lambda lib: lib.tensor([1.0, 2.0]).expand(3, 2),  # (overlapping: contiguous)
}
LAYOUT_LOSSES = {
    "sum": lambda q: q.sum(),  # an expanded gradient, laid out like nothing
    "square": lambda q: (q * q).sum(),  # a gradient laid out like q
    "transposed back": lambda q: (q.transpose(0, 1) * 2).sum(),  # laid out otherwise
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("loss", list(LAYOUT_LOSSES))
@pytest.mark.parametrize("leaf", list(LAYOUT_LEAVES))
def test_grad_of_a_strided_leaf_takes_its_layout(leaf, loss, create_graph):
    strides = {}
    for lib in (ember, torch):
        q = LAYOUT_LEAVES[leaf](lib).detach().requires_grad_()
        LAYOUT_LOSSES[loss](q).backward(create_graph=create_graph)
        first = q.grad.stride()
        q.grad = None
        (q * 2).sum().backward()  # an expanded gradient first, then one more accumulated
        LAYOUT_LOSSES[loss](q).backward()
        strides[lib] = (first, q.grad.stride())
    assert strides[ember] == strides[torch]
