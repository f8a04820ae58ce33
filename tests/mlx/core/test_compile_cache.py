"""`mx.compile`'s cache against MLX 0.32.4: keyed by the Python function, so compiling it
again reuses its traces until a compiled function of it is collected; `shapeless=` and
the number of `inputs=` arrays keep traces apart. Also what compile and checkpoint refuse
(`async_eval` inside a trace, a non-callable)."""

import gc

import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")

# NOTE: MLX traces the very first compiled function of a process twice (see test_compile)
_warm = mlx.compile(lambda x: x + 1)
_warm(mlx.array(1.0))
_warm(mlx.array(1.0))


def _sharing(m) -> list:
    """Traces counted after each step of compiling one function several times."""
    calls = []

    def traced(x):
        calls.append(1)
        return x * 2

    counts = []
    f = m.compile(traced)
    f(m.ones(2))
    counts.append(len(calls))
    g = m.compile(traced)
    g(m.ones(2))
    counts.append(len(calls))  # g reuses f's trace
    g(m.ones(3))
    f(m.ones(3))
    counts.append(len(calls))  # a new shape: traced once, for both
    m.compile(traced, shapeless=True)(m.ones(2))
    counts.append(len(calls))  # shapeless: its own trace
    gc.collect()  # (the shapeless function just made is gone: the cache with it)
    g(m.ones(2))
    counts.append(len(calls))
    h = m.compile(traced)
    h(m.ones(2))
    counts.append(len(calls))
    del f, g
    gc.collect()
    h(m.ones(2))
    counts.append(len(calls))
    return counts


def test_compiling_a_function_again_shares_its_traces():
    assert _sharing(mx) == _sharing(mlx) == [1, 1, 2, 3, 4, 4, 5]


def _inputs(m) -> list:
    calls = []
    state = [m.ones(2)]

    def uses_state(x):
        calls.append(1)
        return x * state[0]

    counts = []
    a = m.compile(uses_state, inputs=state)
    a(m.ones(2))
    counts.append(len(calls))
    b = m.compile(uses_state)  # one input fewer: another trace
    b(m.ones(2))
    counts.append(len(calls))
    c = m.compile(uses_state, inputs=state)
    out = c(m.ones(2))
    counts.append(len(calls))
    return counts + [out.tolist(), a, b, c][:4]


def test_inputs_count_in_the_key():
    assert _inputs(mx)[:4] == _inputs(mlx)[:4] == [1, 2, 2, [1.0, 1.0]]


def test_disabled_compile_does_not_trace_and_the_cache_survives():
    def run(m):
        calls = []

        def traced(x):
            calls.append(1)
            return m.tanh(x)

        f = m.compile(traced)
        f(m.ones(4))
        m.disable_compile()
        try:
            g = m.compile(traced)
            g(m.ones(4)), g(m.ones(4))
        finally:
            m.enable_compile()
        m.compile(traced)(m.ones(4))
        return len(calls), f
    assert run(mx)[0] == run(mlx)[0] == 3


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("body", [
    "lambda t: (m.async_eval(t * 2), t)[1]",
    "lambda t: (m.async_eval([t, {'k': t + 1}]), t)[1]",
    "lambda t: (m.eval(t * 2), t)[1]",
])
def test_async_eval_inside_compile_is_refused_in_its_own_words(body):
    def run(m):
        return _outcome(lambda: m.compile(eval(body, {"m": m}))(m.ones(2)).tolist())
    assert run(mx) == run(mlx)


@pytest.mark.parametrize("arg", ["3", "None", "'f'", "[len]"])
def test_checkpoint_refuses_what_is_not_callable(arg):
    assert _outcome(lambda: mx.checkpoint(eval(arg))) == _outcome(
        lambda: mlx.checkpoint(eval(arg)))
