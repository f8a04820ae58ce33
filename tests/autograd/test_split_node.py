"""split / chunk / unbind record ONE node with an output per piece, as PyTorch's
SplitBackward0 / SplitWithSizesBackward0 / UnbindBackward0 ...: node identity, names,
output_nr, next_functions, hooks' grad_outputs, saved attributes, gradients (unused pieces
included), double backward, retain_grad and the in-place refusals, each against torch."""

import numpy as np
import pytest
import torch

import ember

# (lib -> pieces) for every form; tensor_split / hsplit / vsplit are PyTorch's slices
FORMS = {
    "split": lambda m, y: y.split(2),
    "split_list": lambda m, y: m.split(y, [1, 5]),
    "split_dim1": lambda m, y: y.split(1, dim=1),
    "chunk": lambda m, y: y.chunk(4),
    "chunk_empty_dim": lambda m, y: y[:0].chunk(3),
    "unbind": lambda m, y: y.unbind(0),
    "unbind1": lambda m, y: y.unbind(-1),
    "split_with_sizes": lambda m, y: y.split_with_sizes([2, 4]),
    "unsafe_split": lambda m, y: y.unsafe_split(4),
    "unsafe_chunk": lambda m, y: y.unsafe_chunk(3),
    "unsafe_split_with_sizes": lambda m, y: y.unsafe_split_with_sizes([5, 1]),
    "one_piece": lambda m, y: y.split(10),
    "tensor_split": lambda m, y: y.tensor_split(3),
    "hsplit": lambda m, y: m.hsplit(y, 2),
}


def _pieces(m, form, leaf=False):
    x = m.tensor(np.arange(12.0).reshape(6, 2), requires_grad=True)
    return x, FORMS[form](m, x if leaf else x * 1)


def _graph(pieces):
    fns = [p.grad_fn for p in pieces]
    return ([type(f).__name__ for f in fns], [p.output_nr for p in pieces],
            [a is b for a, b in zip(fns, fns[1:])],
            [(type(n).__name__, i) for n, i in fns[0].next_functions])


@pytest.mark.parametrize("leaf", [False, True])
@pytest.mark.parametrize("form", FORMS)
def test_one_node_per_call(form, leaf):
    _, e = _pieces(ember, form, leaf)
    _, t = _pieces(torch, form, leaf)
    assert _graph(e) == _graph(t)
    assert [p._base is not None for p in e] == [p._base is not None for p in t]


SAVED = ("_saved_dim", "_saved_self_sym_sizes", "_saved_split_size", "_saved_split_sizes")


# (non-negative dims only: PyTorch shows a negative dim as given, read as an unsigned 64-bit
# number, `_saved_dim` 18446744073709551615 for -1; ember shows every node's dim wrapped)
@pytest.mark.parametrize("form", ["split", "split_list", "split_dim1", "chunk",
                                  "chunk_empty_dim", "unbind", "unsafe_split",
                                  "unsafe_split_with_sizes"])
def test_saved_attributes(form):
    def attrs(m):
        n = _pieces(m, form)[1][0].grad_fn
        return {a: getattr(n, a) for a in SAVED if hasattr(n, a)}

    assert attrs(ember) == attrs(torch)


def _hooked_backward(m, form, used, create_graph=False):
    """Backward through only the pieces in `used`; what the node's hooks saw, the grads."""
    x, ps = _pieces(m, form)
    seen = []
    node = ps[0].grad_fn
    show = lambda gs: [None if g is None else g.tolist() for g in gs]  # noqa: E731
    node.register_prehook(lambda go: seen.append(("pre", show(go))))
    node.register_hook(lambda gi, go: seen.append(("post", show(gi), show(go))))
    ps[used[0]].retain_grad()
    loss = sum((ps[i] * (i + 2)).sum() for i in used)
    loss.backward()
    return seen, x.grad.tolist(), ps[used[0]].grad.tolist()


@pytest.mark.parametrize("used", [[0], [1], [0, 2], [2, 1, 0]])
@pytest.mark.parametrize("form", ["split", "chunk", "unbind", "unsafe_split"])
def test_hooks_see_one_gradient_per_piece(form, used):
    # (integers and their sums in float32: exact on both sides)
    n = len(_pieces(torch, form)[1])
    used = [i for i in used if i < n]
    assert _hooked_backward(ember, form, used) == _hooked_backward(torch, form, used)


@pytest.mark.parametrize("form", ["split", "split_list", "unbind1", "chunk_empty_dim"])
def test_double_backward(form):
    def run(m):
        x = m.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 2.0], [1.5, 1.0], [2.0, 3.0], [1.0, 1.0]],
                     dtype=m.float64, requires_grad=True)
        ps = FORMS[form](m, x * x)
        zero = m.zeros((), dtype=m.float64)
        loss = sum(((p * p).sum() * (i + 1) for i, p in enumerate(ps)), zero)
        if not loss.requires_grad:
            return None
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return g.tolist(), gg.tolist()

    e, t = run(ember), run(torch)
    # (float64 products of a few terms: a relative tolerance for the order of the sums)
    if t is None:
        assert e is None
    else:
        np.testing.assert_allclose(np.array(e[0]), np.array(t[0]), rtol=1e-12)
        np.testing.assert_allclose(np.array(e[1]), np.array(t[1]), rtol=1e-12)


def test_calling_the_node_fills_missing_pieces_with_zeros():
    out = []
    for m in (ember, torch):
        ps = (m.arange(4.0, requires_grad=True) * 1).split(2)
        out.append(ps[0].grad_fn(None, m.ones(2)).tolist())
    assert out[0] == out[1] == [0.0, 0.0, 1.0, 1.0]


def _call(m, case):
    """`grad_fn(...)` called directly: a bare tensor for a node with one input edge, a tuple
    for more; a TypeError for the wrong number of gradients."""
    x = m.tensor([1.0, 3.0, 2.0], requires_grad=True)
    try:
        if case == "one_edge":
            r = x.exp().grad_fn(m.ones(3))
        elif case == "two_edges":
            r = (x * x).grad_fn(m.ones(3))
        elif case == "max_values_only":  # (its indices are not an output of the node)
            r = x.max(0)[0].grad_fn(m.tensor(1.0))
        elif case == "too_many":
            r = x.max(0)[0].grad_fn(m.tensor(1.0), None)
        elif case == "too_few":
            r = (x * 1).unbind()[0].grad_fn(m.ones(()))
        elif case == "none":
            r = (x * 1).split(1)[0].grad_fn(None, None, None)
    except TypeError as err:
        return str(err)
    if isinstance(r, tuple):
        return tuple(t.tolist() for t in r)
    return None if r is None else r.tolist()


@pytest.mark.parametrize("case", ["one_edge", "two_edges", "max_values_only", "too_many",
                                  "too_few", "none"])
def test_calling_a_node(case):
    # (exp of small integers: one correctly-rounded op on each side, compared with a tolerance
    # for the exp kernels' last bit)
    e, t = _call(ember, case), _call(torch, case)
    if case == "one_edge":
        np.testing.assert_allclose(e, t, rtol=1e-6)
    else:
        assert e == t


def _refusal(m, case):
    x = m.randn(6, 2, requires_grad=True)
    y = x * 1
    try:
        if case == "piece":
            y.split(2)[1].mul_(2)
        elif case == "unbind":
            y.unbind()[2].add_(1)
        elif case == "with_sizes":
            y.split([2, 4])[1].zero_()
        elif case == "leaf":
            x.chunk(3)[0].mul_(2)
        elif case == "leaf_view":  # a view made a leaf: its base does not require grad
            v = m.arange(12.0).reshape(6, 2).requires_grad_()
            v.split(3)[1].mul_(2)
        elif case == "no_grad_write_then_grad_fn":
            ps = y.split(2)
            with m.no_grad():
                ps[1].mul_(2)
            return type(ps[1].grad_fn).__name__
        elif case == "base_write_then_use":
            ps = y.split(2)
            y.add_(1)
            return type((ps[0] * 2).grad_fn).__name__
        elif case == "detached_write_then_grad_fn":
            ps = y.unbind()
            ps[0].detach().zero_()
            return type(ps[3].grad_fn).__name__
        elif case == "unsafe":  # not views: written freely, not seen by y's graph
            ps = y.unsafe_split(2)
            ps[0].mul_(2)
            return (type(ps[0].grad_fn).__name__, ps[0]._version, y._version)
        elif case == "tensor_split":  # plain slices: rebased as any view
            ps = y.tensor_split(3)
            ps[0].mul_(2)
            return type(ps[0].grad_fn).__name__
        elif case == "plain":
            z = m.zeros(4, 2)
            z.split(2)[0].add_(1)
            return z.sum().item()
        elif case == "made_under_no_grad":
            with m.no_grad():
                ps = y.split(2)
            ps[0].add_(1)
    except RuntimeError as err:
        return str(err)
    return "no error"


@pytest.mark.parametrize("case", ["piece", "unbind", "with_sizes", "leaf", "leaf_view",
                                  "no_grad_write_then_grad_fn", "base_write_then_use",
                                  "detached_write_then_grad_fn", "unsafe", "tensor_split",
                                  "plain", "made_under_no_grad"])
def test_inplace_rules(case):
    assert _refusal(ember, case) == _refusal(torch, case)


def test_old_graph_still_runs_after_the_base_is_written():
    out = []
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x * 1
        a, b = y.split(2)
        loss = (a * 3).sum() + (b * 5).sum()
        y.add_(1)
        loss.backward()
        out.append(x.grad.tolist())
    assert out[0] == out[1] == [3.0, 3.0, 5.0, 5.0]


def test_forward_mode_vmap_and_compile_still_see_views():
    x = ember.tensor(np.arange(12.0).reshape(3, 4))
    t = ember.ones(3, 4)
    import ember.autograd.forward_ad as fwAD
    import ember.func as F

    with fwAD.dual_level():
        ps = fwAD.make_dual(x, t).split(3, dim=1)
        assert [fwAD.unpack_dual(p).tangent.tolist() for p in ps] == \
            [[[1.0] * 3] * 3, [[1.0]] * 3]
    out = F.vmap(lambda r: r.unbind()[1] * 2)(x)
    assert out.tolist() == [2.0, 10.0, 18.0]
    grads = F.grad(lambda r: (r.chunk(2)[1] ** 2).sum())(x[0])
    assert grads.tolist() == [0.0, 0.0, 4.0, 6.0]
    f = ember.compile(lambda r: sum(p.sum() * (i + 1) for i, p in enumerate(r.split(2, 1))))
    w = ember.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    f(w).backward()
    assert w.grad.tolist() == [[1.0, 1.0, 2.0, 2.0]] * 3
