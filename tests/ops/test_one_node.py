"""ops/one_node.py: composites recorded as PyTorch's one node keep the composite's numbers.

Each op runs twice: as one node (plain eager) and as its composite graph (under a
saved-tensor hooks pair, where `one_node` stands aside); the results and first-order
gradients must agree bit for bit (the same kernels in the same order), and the one node's
gradient and second-order gradient must match PyTorch's.
"""

import numpy as np
import pytest
import torch

import ember

# (name, input shapes, fn(m, *xs)); fn reads `m` as ember or torch
CASES = [
    ("pixel_shuffle", [(2, 8, 2, 3)], lambda m, x: m.nn.functional.pixel_shuffle(x, 2)),
    ("pixel_unshuffle", [(2, 2, 4, 6)], lambda m, x: m.nn.functional.pixel_unshuffle(x, 2)),
    ("avg_pool2d", [(2, 3, 5, 5)], lambda m, x: m.nn.functional.avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool1d", [(2, 3, 7)], lambda m, x: m.nn.functional.avg_pool1d(x, 2)),
    ("avg_pool3d", [(1, 2, 4, 4, 4)], lambda m, x: m.nn.functional.avg_pool3d(x, 2)),
    ("adaptive_avg_pool2d", [(2, 3, 5, 7)],
     lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (2, 3))),
    ("adaptive_avg_pool1d", [(2, 3, 6)], lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 3)),
    ("rot90", [(3, 4)], lambda m, x: m.rot90(x)),
    ("unfold", [(1, 2, 4, 4)], lambda m, x: m.nn.functional.unfold(x, 2, padding=1)),
    ("fold", [(1, 8, 9)], lambda m, x: m.nn.functional.fold(x, (4, 4), 2)),
]


def _inputs(m, shapes, dtype):
    return [m.tensor(np.random.RandomState(i).uniform(-1.5, 1.5, s), dtype=dtype,
                     requires_grad=True) for i, s in enumerate(shapes)]


def _run(fn, xs):
    out = fn(ember, *xs)
    w = ember.linspace(-1, 2, out.numel(), dtype=out.dtype).reshape(out.shape)
    grads = ember.autograd.grad((out * w).sum(), xs)
    return [np.asarray(t.detach()) for t in (out, *grads)], type(out.grad_fn).__name__


def test_one_node_gives_the_composites_numbers_and_torchs_node():
    for name, shapes, fn in CASES:
        for dtype in ("float64", "float32"):
            one, node = _run(fn, _inputs(ember, shapes, getattr(ember, dtype)))
            with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                composite, _ = _run(fn, _inputs(ember, shapes, getattr(ember, dtype)))
            for a, b in zip(one, composite):
                assert a.tobytes() == b.tobytes(), (name, dtype)
            xs = _inputs(torch, shapes, getattr(torch, dtype))
            want = fn(torch, *xs)
            assert node == type(want.grad_fn).__name__, name
            # (one node's graph: its next functions are the inputs' AccumulateGrad nodes)
            got_next = fn(ember, *_inputs(ember, shapes, getattr(ember, dtype))).grad_fn
            assert len(got_next.next_functions) == len(want.grad_fn.next_functions), name


@pytest.mark.parametrize("name", ["avg_pool2d", "unfold", "pixel_shuffle"])
def test_second_order_gradients_as_torchs(name):
    # (the node's VJP runs the composite again: under create_graph its gradient is
    # differentiable; second-order sums may round in another order than PyTorch's kernels)
    _, shapes, fn = next(c for c in CASES if c[0] == name)
    got = []
    for m in (ember, torch):
        xs = _inputs(m, shapes, m.float64)
        gs = m.autograd.grad((fn(m, *xs) ** 2).sum(), xs, create_graph=True)
        gg = m.autograd.grad(sum((g ** 3).sum() for g in gs), xs, allow_unused=True)
        got.append([np.asarray(t.detach()) if t is not None else None for t in (*gs, *gg)])
    for a, b in zip(*got):
        assert (a is None) == (b is None) or not np.any(a if a is not None else b), name
        if a is not None and b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


def test_saved_inputs_guarded_and_freed_as_torchs():
    for m in (ember, torch):
        # group_norm keeps its input: an in-place change before backward refuses it
        x = m.ones(2, 4, 3, dtype=m.float64).requires_grad_()
        y = x * 1
        out = m.nn.functional.group_norm(y, 2)
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
        # pixel_shuffle keeps nothing: the same change is fine
        y = x * 1
        out = m.nn.functional.pixel_shuffle(y.reshape(1, 4, 2, 3), 2)
        y.add_(1)
        out.sum().backward()
        # a second backward without retain_graph: PyTorch's error; with it, the same grads
        x = m.linspace(-1, 1, 12, dtype=m.float64).reshape(3, 4).requires_grad_()
        out = m.nn.functional.glu(x, 1).sum()
        out.backward(retain_graph=True)
        first = x.grad.clone()
        out.backward()
        assert m.equal(x.grad, 2 * first)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            out.backward()


def test_result_is_not_a_view_and_takes_inplace_ops():
    # rot90's composite ends in a transpose of its flip: PyTorch's result is no view
    for m in (ember, torch):
        x = m.arange(12.0).reshape(3, 4).requires_grad_()
        r = m.rot90(x)
        assert r._base is None and r.stride() == (1, 4)
        r.mul_(2)
        r.sum().backward()
        assert x.grad.eq(2).all()
        # pixel_shuffle by 1: a copy, not the input's storage under another name
        x = m.arange(16.0).reshape(1, 4, 2, 2).requires_grad_()
        y = m.nn.functional.pixel_shuffle(x, 1)
        assert y._base is None and y.data_ptr() != x.data_ptr()
        y.mul_(3)
        y.sum().backward()
        assert x.grad.eq(3).all() and x[0, 1, 0, 0].item() == 4.0
