"""`mx.compile` of functions whose results are their arguments or aliases of them
(`stop_gradient`, `a[...]`, the argument itself, in a tuple, a dict, a keyword argument, an
`outputs=` tree): each call's results follow that call's arguments, shapeless or not, as
in MLX 0.32.4 (a trace must not freeze an alias of its input as a constant)."""

import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")

# the functions compared, as source with `mx` bound (each returns aliases of its inputs)
FUNS = {
    "stop_gradient": "lambda a: mx.stop_gradient(a)",
    "stop_gradient twice": "lambda a: mx.stop_gradient(mx.stop_gradient(a))",
    "the argument": "lambda a: a",
    "ellipsis": "lambda a: a[...]",
    "array of it": "lambda a: mx.array(a)",
    "astype same": "lambda a: a.astype(a.dtype)",
    "plus zero": "lambda a: a + 0",
    "tuple": "lambda a: (a, mx.stop_gradient(a))",
    "list": "lambda a: [mx.stop_gradient(a)]",
    "dict": "lambda a: {'x': mx.stop_gradient(a), 'y': a}",
    "beside an op": "lambda a: (mx.stop_gradient(a), a * 2)",
    "same alias twice": "lambda a: (mx.stop_gradient(a), mx.stop_gradient(a))",
    "keyword": "lambda a, *, b: (mx.stop_gradient(b), b, a)",
    "swapped": "lambda a, *, b: (mx.stop_gradient(b), mx.stop_gradient(a))",
}

# (the third call has another shape: traced again, or, shapeless, replayed)
CALLS = ([1.0, 2.0], [5.0, 6.0], [7.0, 8.0, 9.0])


def _tree(r):
    """A result as lists and dtype names (tuples, lists and dicts kept apart)."""
    if isinstance(r, tuple | list):
        return type(r).__name__, [_tree(x) for x in r]
    if isinstance(r, dict):
        return {k: _tree(v) for k, v in r.items()}
    return r.tolist(), str(r.dtype).split(".")[-1]


def _calls(m, src: str, shapeless: bool) -> list:
    c = m.compile(eval(src, {"mx": m}), shapeless=shapeless)
    out = []
    for v in CALLS:
        x = m.array(v)
        out.append(_tree(c(x, b=x * 10) if "b:" in src else c(x)))
    return out


@pytest.mark.parametrize("shapeless", [False, True], ids=["shaped", "shapeless"])
@pytest.mark.parametrize("name", list(FUNS))
def test_aliases_of_the_arguments_follow_each_call(name, shapeless):
    got = _calls(mx, FUNS[name], shapeless)
    assert got == _calls(mlx, FUNS[name], shapeless)
    assert got[1] != got[0]  # (the second call's arguments, not the first's)


def test_hand_worked_stop_gradient():
    for shapeless in (False, True):
        c = mx.compile(lambda a: mx.stop_gradient(a), shapeless=shapeless)
        assert c(mx.array([1.0, 2.0])).tolist() == [1.0, 2.0]
        assert c(mx.array([5.0, 6.0])).tolist() == [5.0, 6.0]
        assert c(mx.array([7.0, 8.0, 9.0])).tolist() == [7.0, 8.0, 9.0]


def _state_runs(m) -> list:
    """An alias of the argument written into `outputs=`, and aliases of an `inputs=` array
    returned, over calls that change both."""
    st = [m.array([1.0, 2.0])]
    box = [m.array([0.0, 0.0])]

    def f(x):
        box[0] = m.stop_gradient(x)
        return m.stop_gradient(st[0]), st[0] + x

    c = m.compile(f, inputs=st, outputs=[st, box])
    out = []
    for v in ([1.0, 2.0], [5.0, 6.0], [7.0, 8.0]):
        a, b = c(m.array(v))
        out.append((a.tolist(), b.tolist(), box[0].tolist()))
        st[0] = st[0] * 3
    return out


def test_state_aliases_follow_each_call():
    got = _state_runs(mx)
    assert got == _state_runs(mlx)
    assert got[1][2] == [5.0, 6.0] and got[2][0] == [9.0, 18.0]


def _dtype_runs(m) -> list:
    out = []
    for src, dst in (("int64", "uint64"), ("int32", "uint32"), ("int8", "uint8"),
                     ("float16", "float16"), ("bool_", "bool_")):
        dt_in, dt = getattr(m, src), getattr(m, dst)
        for shapeless in (False, True):
            c = m.compile(lambda a, dt=dt: (a.astype(dt), m.stop_gradient(a).astype(dt)),
                          shapeless=shapeless)
            for v in ([1, 2], [3, 0]):
                out.append(_tree(c(m.array(v, dtype=dt_in))))
    return out


def test_aliases_keep_their_own_dtype():
    # (an astype between dtypes ember carries alike must not hand back the argument's dtype)
    assert _dtype_runs(mx) == _dtype_runs(mlx)


def _writes(m) -> list:
    out = []
    for f in (lambda a: a, lambda a: m.stop_gradient(a), lambda a: (a, a)):
        c = m.compile(f)
        for _ in range(2):  # (the trace, then a replay)
            x = m.array([1.0, 2.0])
            y = c(x)
            y = y[0] if isinstance(y, tuple) else y
            y[0] = 7
            out.append((x.tolist(), y.tolist(), y is x))
    return out


def test_returned_argument_is_a_new_array():
    # MLX returns another array object: writing into it leaves the argument as it was
    got = _writes(mx)
    assert got == _writes(mlx)
    assert got[1] == ([1.0, 2.0], [7.0, 2.0], False)


def test_closure_array_stays_frozen():
    # (an array the function reads from its closure is a constant of the trace, as in MLX)
    def run(m):
        scope = {"c0": m.array([9.0, 9.0])}
        c = m.compile(lambda a: (m.stop_gradient(scope["c0"]), scope["c0"] + a))
        first = [r.tolist() for r in c(m.array([1.0, 2.0]))]
        scope["c0"] = m.array([3.0, 3.0])
        return first, [r.tolist() for r in c(m.array([5.0, 6.0]))]

    got = run(mx)
    assert got == run(mlx)
    assert got[1] == [[9.0, 9.0], [14.0, 15.0]]


# ops MLX makes no node for when their result is the array as it is (the same shape
# given, a slice of all of it), so a shapeless trace replays them at any shape
WHOLE = ["lambda a: a.reshape(a.shape)", "lambda a: a.reshape(2, 2) * 2",
         "lambda a: mx.reshape(a * 2, (2, 2))", "lambda a: mx.broadcast_to(a, (2, 2))",
         "lambda a: a[0:2]", "lambda a: a[:, 0:5]", "lambda a: a[-2:, ...]",
         "lambda a: a[..., ::1]", "lambda a: a[0:2, :, None]",
         # (and the ops that infer from the call's shapes: `-1`, a slice that is a part)
         "lambda a: a.reshape(-1)", "lambda a: a[:, None]"]


@pytest.mark.parametrize("src", WHOLE)
def test_shapeless_whole_array_ops_replay_at_other_shapes(src):
    def run(m):
        c = m.compile(eval(src, {"mx": m}), shapeless=True)
        return [c(m.arange(float(n * n)).reshape(n, n)).tolist() for n in (2, 3)]

    got = run(mx)
    assert got == run(mlx)
    assert "8.0" in str(got[1])  # (the 3x3 call read all of its array, 8 its last)


def test_same_shape_reshape_reads_as_the_array():
    # (eager: the values and dtype are the array's; writing into one leaves the other)
    x = mx.array([[1, 2], [3, 4]], dtype=mx.int16)
    for y in (x.reshape(2, 2), mx.broadcast_to(x, (2, 2)), x[0:2], x[..., :]):
        assert y.tolist() == [[1, 2], [3, 4]] and y.dtype == mx.int16
        y[0, 0] = 9
        assert x.tolist() == [[1, 2], [3, 4]]
