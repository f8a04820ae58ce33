"""`mx.custom_function` (its `.vjp`, `.jvp`, `.vmap` rules) and `mx.checkpoint` against
MLX 0.32.4: which rule runs under which transform, with what arguments, and the values."""

import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")


def _custom(m, calls: list):
    """sin(x) * y with rules that differ from its true derivatives (so using them shows)."""

    @m.custom_function
    def f(x, y):
        return m.sin(x) * y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        x, y = primals
        calls.append(("vjp", type(primals).__name__, output.shape))
        return cotangent * 2 * m.cos(x) * y, cotangent * m.sin(x)

    @f.jvp
    def f_jvp(primals, tangents):
        x, y = primals
        dx, dy = tangents
        calls.append("jvp")
        return 3 * dx * m.cos(x) * y + dy * m.sin(x)

    @f.vmap
    def f_vmap(inputs, axes):
        x, y = inputs
        calls.append(("vmap", axes))
        return m.sin(x) * y + 100, axes[0]

    return f


def _round(x) -> list:
    return [round(v, 4) for v in x.tolist()] if x.ndim == 1 else \
        [[round(v, 4) for v in row] for row in x.tolist()]


def _run(m):
    calls: list = []
    f = _custom(m, calls)
    x, y = m.array([0.5, 1.0]), m.array([2.0, 3.0])
    out = [f(x, y)]
    out.append(m.grad(lambda x, y: f(x, y).sum())(x, y))
    out.append(m.grad(lambda x, y: f(x, y).sum(), argnums=1)(x, y))
    out += m.jvp(f, [x, y], [m.ones(2), m.zeros(2)])[1]
    out.append(m.vmap(f, in_axes=(0, None))(m.array([[0.5, 1.0], [1.0, 2.0]]), y))
    out += m.vjp(f, [x, y], [m.ones(2)])[1]
    return [_round(o) for o in out], calls


def test_each_rule_runs_under_its_transform_as_in_mlx():
    ours, theirs = _run(mx), _run(mlx)
    assert ours == theirs
    values, calls = ours
    assert values[1] == pytest.approx([3.5103, 3.2418], abs=1e-4)  # (the rule's 2x)
    assert values[3] == pytest.approx([5.2655, 4.8627], abs=1e-4)  # (the rule's 3x)
    assert values[4][0][0] > 100  # (the vmap rule's +100)
    assert calls[0] == ("vjp", "tuple", (2,))


def test_no_rule_attached_is_the_plain_function():
    def run(m):
        f = m.custom_function(lambda x: m.exp(x) * 2)
        x = m.array([0.0, 1.0])
        return _round(f(x)), _round(m.grad(lambda x: f(x).sum())(x))

    assert run(mx) == run(mlx)


def test_a_missing_rule_uses_the_function_itself():
    def run(m):
        h = m.custom_function(lambda x: m.exp(x))

        @h.jvp
        def h_jvp(x, t):
            return t * 7

        x = m.array([0.0, 1.0])
        return (_round(m.grad(lambda x: h(x).sum())(x)),
                _round(m.jvp(h, [x], [m.ones(2)])[1][0]),
                _round(m.vmap(h)(m.array([[0.0, 1.0]]))))

    ours, theirs = run(mx), run(mlx)
    assert ours == theirs
    assert ours[1] == [7.0, 7.0]


def test_vjp_sees_trees_of_outputs():
    def run(m):
        seen = []

        @m.custom_function
        def g(x):
            return [x * 2, {"a": x ** 2}]

        @g.vjp
        def g_vjp(x, cot, out):
            seen.append((type(x).__name__, type(cot).__name__, sorted(cot[1])))
            return cot[0] + cot[1]["a"] * 10

        x = m.array([0.5, 1.0])
        return _round(m.grad(lambda x: (g(x)[0] + g(x)[1]["a"]).sum())(x)), seen

    ours, theirs = run(mx), run(mlx)
    assert ours == theirs
    assert ours[0] == [11.0, 11.0]


def test_checkpoint_gives_the_plain_values_and_gradients_and_recomputes():
    def run(m):
        calls = [0]

        def body(x, w):
            calls[0] += 1
            return m.tanh(x @ w).sum() * 2

        x = m.array([0.5, 1.0])
        w = m.array([[1.0, 2.0], [0.5, -1.0]])
        ck = m.checkpoint(body)
        value = round(ck(x, w).item(), 4)
        n_forward = calls[0]
        calls[0] = 0
        grads = m.grad(ck, argnums=[0, 1])(x, w)
        n_grad = calls[0]
        plain = m.grad(body, argnums=[0, 1])(x, w)
        return value, [_round(g) for g in grads], [_round(g) for g in plain], \
            (n_forward, n_grad)

    ours, theirs = run(mx), run(mlx)
    assert ours[:3] == theirs[:3]
    assert ours[1] == ours[2]
    assert ours[3][1] >= 2  # the backward pass ran the function again
    assert ours[3] == theirs[3]


def test_checkpoint_in_value_and_grad():
    def run(m):
        f = m.checkpoint(lambda a: m.sin(a) * a)
        v, g = m.value_and_grad(lambda w: f(w).sum())(m.array([0.5, 1.0]))
        return round(v.item(), 4), _round(g)

    assert run(mx) == run(mlx)


def _structured(m, calls: list):
    """Functions whose vmap rules return their arrays in other containers than the
    functions do (a list for one array, a list for a tuple with a dict inside)."""

    @m.custom_function
    def one(u):
        calls.append(("fun", u.shape))
        return u * 2

    @one.vmap
    def one_vmap(inputs, axes):
        calls.append(("rule", inputs.shape, axes))
        return [inputs * 3], [axes]

    @m.custom_function
    def two(u, v):
        return u * v, {"s": u + v}

    @two.vmap
    def two_vmap(inputs, axes):
        u, v = (m.moveaxis(x, a, 0) if a is not None else x for x, a in zip(inputs, axes))
        return {"p": u * v, "s": [u + v]}, {"p": 0, "s": [0]}

    return one, two


def _show(tree):
    if isinstance(tree, dict):
        return {k: _show(v) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return type(tree).__name__, [_show(v) for v in tree]
    return tree.shape, tree.tolist()


@pytest.mark.parametrize("case", ["one", "two", "two_none", "empty"])
def test_vmap_rule_outputs_take_the_function_s_structure_as_in_mlx(case):
    """MLX runs the function on one example first and gives the batched result its
    output's structure, whatever containers the rule put the arrays in."""
    results = []
    for m in (mx, mlx):
        calls: list = []
        one, two = _structured(m, calls)
        x = m.arange(6.0).reshape(2, 3)
        if case == "one":
            out = m.vmap(one, in_axes=1)(x)
        elif case == "two":
            out = m.vmap(two, in_axes=(0, 1))(x, x.T)
        elif case == "two_none":
            out = m.vmap(two, in_axes=(0, None))(x, m.array([1.0, -1.0, 2.0]))
        else:  # (no example to run the function on)
            out = m.vmap(one)(m.ones((0, 3)))
        results.append((_show(out), calls))
    assert results[0] == results[1]
