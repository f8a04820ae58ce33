"""MLX's transforms on ember (grad, value_and_grad, vjp, jvp, vmap, compile, stop_gradient)
against MLX 0.32.4 and against derivatives worked by hand."""

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")


def _both(fn_src: str, args_src: str):
    """(ember's result, MLX's result) of `fn_src` applied to `args_src`, as reprs."""
    out = []
    for m in (mx, mlx):
        scope = {"mx": m}
        fn = eval(fn_src, scope)
        args = eval(args_src, scope)
        try:
            out.append(repr(fn(*args)))
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            out.append(f"{type(e).__name__}: {e}")
    return out


CASES = [
    ("mx.grad(lambda x: (x * x).sum())", "[mx.array([1.0, 2.0])]"),
    ("mx.value_and_grad(lambda a, b: (a * b).sum(), argnums=[0, 1])",
     "[mx.array([1.0]), mx.array([2.0])]"),
    ("mx.value_and_grad(lambda p, x: ((p['w'] * x).sum(), x), argnums=0)",
     "[{'w': mx.array([1.0])}, mx.array([3.0])]"),
    ("mx.grad(lambda x: (x.sum(), x))", "[mx.array([1.0])]"),
    ("mx.grad(lambda l: (l[0] * l[1]).sum())", "[[mx.array([2.0]), mx.array([3.0])]]"),
    ("mx.grad(lambda x: mx.sin(x).sum())", "[mx.array([0.5, 1.0])]"),
    ("mx.grad(lambda x: (mx.stop_gradient(x) * x).sum())", "[mx.array([3.0])]"),
    ("lambda *a: mx.vjp(lambda x: x * 2, [a[0]], [mx.array([1.0])])", "[mx.array([1.0])]"),
    ("lambda *a: mx.jvp(lambda x: x * x, [a[0]], [mx.array([1.0])])", "[mx.array([3.0])]"),
    ("lambda *a: mx.vmap(lambda x, y: x + y, in_axes=(0, None))(*a).shape",
     "[mx.ones((2, 3)), mx.ones(3)]"),
    ("lambda *a: mx.vmap(lambda x: x * 2, out_axes=1)(*a)", "[mx.arange(6.0).reshape(2, 3)]"),
    ("lambda *a: mx.vmap(lambda x, y: (x * y).sum())(*a)",
     "[mx.arange(6.0).reshape(2, 3), mx.ones((2, 3))]"),
    # a gradient of a gradient, and through value_and_grad's loss (its aux gets none)
    ("mx.grad(lambda a: mx.grad(lambda b: (b * b * b).sum())(a).sum())",
     "[mx.array([-1.0, 0.5, 2.0])]"),
    ("mx.grad(lambda a: mx.value_and_grad(lambda b: (b * b * b).sum())(a)[0])",
     "[mx.array([-1.0, 0.5, 2.0])]"),
    ("mx.grad(lambda a: mx.value_and_grad(lambda b: (b * b * b).sum())(a)[1].sum())",
     "[mx.array([-1.0, 0.5, 2.0])]"),
    ("mx.grad(lambda a: mx.value_and_grad(lambda b: ((b * b).sum(), b * 3))(a)[0][1].sum())",
     "[mx.array([-1.0, 0.5, 2.0])]"),
    ("mx.grad(lambda a: (mx.stop_gradient(a) * 2).sum())", "[mx.array([1.0, 2.0])]"),
    ("lambda *a: mx.jvp(mx.grad(lambda b: (b * b * b).sum()), [a[0]], [mx.ones(3)])",
     "[mx.array([-1.0, 0.5, 2.0])]"),
    ("mx.vmap(mx.grad(lambda b: (b * b * b).sum()))", "[mx.array([[-1.0], [0.5], [2.0]])]"),
    # maximum / minimum: MLX's masks (`a > b` to the first, `a <= b` to the second), so a
    # NaN on either side gives neither a gradient, and a tie goes to the second
    ("mx.grad(lambda a, b: (mx.maximum(a, b) * 3 + mx.minimum(b, a)).sum(), argnums=(0, 1))",
     "[mx.array([float('nan'), -1.0, 0.0, 2.0, float('inf'), 0.5]),"
     " mx.array([1.0, -2.0, 0.0, float('nan'), 5.0, 0.5])]"),
    ("mx.grad(lambda a: mx.clip(a, -1, 1).sum())",
     "[mx.array([float('nan'), -3.0, -1.0, 0.0, 1.0, 2.0])]"),
    ("mx.grad(lambda a: mx.grad(lambda b: (mx.maximum(b, 0) * b * b).sum())(a).sum())",
     "[mx.array([float('nan'), -1.0, 0.0, 2.0])]"),
    ("lambda *a: mx.jvp(mx.maximum, list(a), [mx.ones(4), 2 * mx.ones(4)])",
     "[mx.array([float('nan'), 1.0, 0.0, 3.0]), mx.array([0.0, 1.0, float('nan'), 2.0])]"),
    ("lambda *a: (mx.maximum(*a), mx.minimum(*a), mx.maximum(0, a[0]), mx.minimum(a[0], 2.5))",
     "[mx.array([float('nan'), -0.0, 0.0, 3.0]), mx.array([1.0, 0.0, -0.0, float('nan')])]"),
    ("mx.grad(lambda a: mx.maximum(a.astype(mx.float16), 0.0).astype(mx.float32).sum())",
     "[mx.array([float('nan'), -1.0, 0.0, 2.0])]"),
]


@pytest.mark.parametrize("fn_src,args_src", CASES)
def test_transform_matches_mlx(fn_src, args_src):
    ours, theirs = _both(fn_src, args_src)
    assert ours == theirs


# what MLX checks when a transform is made or called, each with its exception and message
# (TypeErrors as its binding words them):
# a loss that is not 0-d (MLX pulls a 0-d cotangent back through it; a one-element loss gets
# a hint), argnums negative, repeated (MLX names the smallest index) or empty, cotangents
# and tangents that do not fit (extra cotangents MLX leaves unread)
CHECKS = [
    ("mx.grad(lambda u: u * 2)", "[mx.ones((2, 3))]"),
    ("mx.grad(lambda u: u.sum(keepdims=True))", "[mx.ones(3)]"),
    ("mx.value_and_grad(lambda u: (u * 2, u.sum()))", "[mx.ones(3)]"),
    ("mx.value_and_grad(lambda u: (u.sum(keepdims=True), 3))", "[mx.ones(3)]"),
    ("lambda *a: mx.grad(lambda u, v: u.sum(), argnums=(1, -2))", "[]"),
    ("lambda *a: mx.value_and_grad(lambda u, v: u.sum(), argnums=[2, 1, 2])", "[]"),
    ("lambda *a: mx.grad(lambda u, v: u.sum(), argnums=(0, 0, -1))", "[]"),
    ("lambda *a: mx.grad(lambda u: u.sum(), argnums=())", "[]"),
    ("lambda *a: mx.vjp(lambda u: u * 2, list(a), [mx.ones(3)])", "[mx.ones(2)]"),
    ("lambda *a: mx.vjp(lambda u: u.sum(keepdims=True), list(a), [mx.array(1.0)])",
     "[mx.ones(2)]"),
    ("lambda *a: mx.vjp(lambda u: (u.sum(keepdims=True), u), list(a), [mx.array(1.0), a[0]])",
     "[mx.ones(2)]"),
    ("lambda *a: mx.vjp(lambda u: (u, u * 2), list(a), [a[0] * 3])", "[mx.ones(2)]"),
    ("lambda *a: mx.vjp(lambda u: u * 2, list(a), [a[0], a[0]])", "[mx.ones(2)]"),
    ("lambda *a: mx.jvp(lambda u, v: u * v, list(a), [a[0], mx.ones(3)])",
     "[mx.ones(2), mx.ones(2)]"),
    ("lambda *a: mx.jvp(lambda u, v: u * v, list(a), [a[0]])", "[mx.ones(2), mx.ones(2)]"),
    ("lambda *a: mx.jvp(lambda u: u * u, list(a), [mx.ones((1, 2))])", "[mx.ones(2)]"),
    # what a differentiated function may return: an array, or for value_and_grad a
    # non-empty tuple (not a list) led by one; and it may take only trees of arrays
    ("mx.grad(lambda u: [u.sum()])", "[mx.ones(2)]"),
    ("mx.grad(lambda u: None)", "[mx.ones(2)]"),
    ("mx.value_and_grad(lambda u: [u.sum(), 1])", "[mx.ones(2)]"),
    ("mx.value_and_grad(lambda u: ())", "[mx.ones(2)]"),
    ("mx.value_and_grad(lambda u: (None, u))", "[mx.ones(2)]"),
    ("mx.value_and_grad(lambda u: 3.0)", "[mx.ones(2)]"),
    ("mx.grad(lambda p: p['w'].sum())", "[{'w': mx.ones(2), 'n': 3}]"),
    ("mx.grad(lambda u, n: u.sum(), argnums=1)", "[mx.ones(2), [3]]"),
    ("mx.grad(lambda u, k=None: u.sum(), argnames='k')", "[mx.ones(2)]"),
    ("lambda *a: mx.grad(lambda u, k=None: u.sum(), argnames='k')(a[0], j=a[0], i=2)",
     "[mx.ones(2)]"),
    ("lambda *a: mx.vjp(lambda u, n: u * 2, [a[0], 3.0], [a[0]])", "[mx.ones(2)]"),
    ("lambda *a: mx.jvp(lambda u: u * u, list(a), [[1.0, 1.0]])", "[mx.ones(2)]"),
    ("lambda *a: mx.vjp(lambda u: {'a': u}, list(a), list(a))", "[mx.ones(2)]"),
    ("lambda *a: mx.jvp(lambda u: 3.0, list(a), list(a))", "[mx.ones(2)]"),
    ("lambda *a: mx.vjp(lambda u: [u, u * 2], tuple(a), (a[0], a[0]))", "[mx.ones(2)]"),
]


@pytest.mark.parametrize("fn_src,args_src", CHECKS)
def test_transform_checks_match_mlx(fn_src, args_src):
    ours, theirs = _both(fn_src, args_src)
    assert ours == theirs and ("Error" in ours or "array" in ours)


def test_grad_by_argnames_returns_positional_none_and_a_dict():
    for m in (mx, mlx):
        g = m.grad(lambda x, y: (x * y).sum(), argnames=["y"])(m.array([2.0]), y=m.array([3.0]))
        assert g[0] is None and list(g[1]) == ["y"] and g[1]["y"].item() == 2.0


def test_grad_of_mse_matches_the_hand_derivative():
    mx_ = mx
    w = mx_.array([[1.0, -2.0], [0.5, 3.0]])
    x = mx_.array([1.0, 2.0])
    t = mx_.array([0.0, 1.0])

    def loss(params):
        return mx_.mean((params["W"] @ x - t) ** 2)

    g = mx_.grad(loss)({"W": w})["W"]
    r = np.array(w) @ np.array(x) - np.array(t)
    np.testing.assert_allclose(np.array(g), np.outer(2 * r / 2, np.array(x)), rtol=1e-6)


def test_compile_gives_the_function_values_and_runs_its_python_only_to_trace():
    calls = []

    def f(x):
        calls.append(1)
        return mx.sin(x) * x

    cf = mx.compile(f)
    x = mx.array([0.5, 1.0, 2.0])
    assert np.array_equal(np.array(cf(x)), np.array(f(x)))
    cf(x)  # replayed: MLX's compile runs the Python once per signature
    assert len(calls) == 2


def test_disable_compile_runs_the_function_as_written():
    mx.disable_compile()
    try:
        cf = mx.compile(lambda x: x + 1)
        assert cf(mx.array([1])).tolist() == [2]
    finally:
        mx.enable_compile()


def test_eval_walks_trees_and_ignores_other_leaves():
    a, b = mx.array([1.0]) * 2, mx.array([2.0]) + 1
    assert mx.eval({"a": [a, 3, "x"], "b": (b, None)}) is None
    assert a.item() == 2.0 and b.item() == 3.0


def test_a_training_step_leaves_no_autograd_graph_behind():
    # (the model once kept the arrays the transform traced: each step's update then tied
    # the parameters to the last step's graph, and eager steps grew slower every step)
    import ember.mlx.nn as nn
    import ember.mlx.optimizers as optim
    from ember.mlx.utils import tree_flatten

    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = optim.SGD(learning_rate=0.1)
    x, y = mx.ones((3, 4)), mx.array([0, 1, 1])
    step = nn.value_and_grad(model, lambda m: nn.losses.cross_entropy(m(x), y).mean())
    for _ in range(3):
        loss, grads = step(model)
        opt.update(model, grads)
        mx.eval(model.parameters())
    held = [v._t for _, v in tree_flatten(model.parameters())]
    held += [loss._t] + [g._t for _, g in tree_flatten(grads)]
    assert all(not t.requires_grad and t.grad_fn is None for t in held)
