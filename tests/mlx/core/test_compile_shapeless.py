"""`mx.compile(..., shapeless=True)` called at shapes other than the traced ones, against
MLX 0.32.4: what MLX's ops derive from shapes (a mean's 1/n, `reshape(-1)`'s size, a
normalization's count) follows the new shapes, what Python read from `a.shape` stays as
traced (MLX's constants), the errors MLX raises where those constants no longer fit, and
that the Python of `fun` still shows its effects once."""

import contextlib
import io
import math
from functools import partial

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as enn
import ember.mlx.optimizers as eoptim

mlx = pytest.importorskip("mlx.core")
mnn = pytest.importorskip("mlx.nn")

_warm = mlx.compile(lambda x: x + 1)  # (MLX traces a process's first compiled fn twice)
_warm(mlx.array(1.0))
_warm(mlx.array(1.0))

S2 = [(2, 3), (4, 5), (3, 3), (4, 5)]
S3 = [(2, 3, 4), (3, 5, 4), (1, 2, 4)]


def _inputs(m, shape):
    """Two arrays of `shape` with distinct, well-scaled values."""
    a = (m.arange(1, 1 + math.prod(shape), dtype=m.float32).reshape(shape) / 7) ** 1.3
    return a, m.cos(a) + 1.5


def _calls(m, make, shapes, n_in):
    """`make(m)` compiled shapeless, called at each shape: values as NumPy arrays, or
    (exception type, message)."""
    f = m.compile(make(m), shapeless=True)
    out = []
    for s in shapes:
        a, b = _inputs(m, s)
        try:
            r = f(a, b) if n_in == 2 else f(a)
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            out.append((type(e).__name__, str(e)))
            continue
        rs = r if isinstance(r, list | tuple) else [r]
        out.append([np.array(x.astype(m.float32)) for x in rs])
    return out


def _nn(m):
    return enn if m is mx else mnn


CASES = {
    # (MLX's ops derive these from the shapes at each call)
    "mean": (lambda m: lambda a: a.mean(axis=-1, keepdims=True), S2, 1),
    "mean all": (lambda m: lambda a: m.mean(a), S2, 1),
    "mean axes": (lambda m: lambda a: a.mean(axis=(0, 1)), S2, 1),
    "mean int": (lambda m: lambda a: m.mean(a.astype(m.int32), axis=0), S2, 1),
    "mean f16": (lambda m: lambda a: m.mean(a.astype(m.float16), axis=1), S2, 1),
    "var": (lambda m: lambda a: m.var(a, axis=0), S2, 1),
    "var ddof": (lambda m: lambda a: m.var(a, ddof=1), S2, 1),
    "std": (lambda m: lambda a: m.std(a, axis=1, keepdims=True), S2, 1),
    "logsumexp": (lambda m: lambda a: m.logsumexp(a, axis=1), S2, 1),
    "softmax": (lambda m: lambda a: m.softmax(a, axis=0), S2, 1),
    "reshape -1": (lambda m: lambda a: a.reshape(-1) * 2, S2, 1),
    "reshape 2,-1": (lambda m: lambda a: a.reshape(2, -1), [(2, 3), (4, 5)], 1),
    "flatten": (lambda m: lambda a: m.flatten(a, 1, 2).mean(), S3, 1),
    "moveaxis": (lambda m: lambda a: m.moveaxis(a, 0, 1).reshape(-1), S2, 1),
    "einsum": (lambda m: lambda a: m.einsum("ij->j", a), S2, 1),
    "stack": (lambda m: lambda a, b: m.stack([a, b], axis=1).mean(axis=(1, 2)), S2, 2),
    "concatenate": (lambda m: lambda a, b: m.concatenate([a, b], axis=0), S2, 2),
    "take_along_axis": (lambda m: lambda a, b: m.take_along_axis(
        a, m.argsort(b, axis=0), axis=0), S2, 2),
    "zeros_like": (lambda m: lambda a: m.zeros_like(a.sum(0)) + a.sum(0), S2, 1),
    "full_like": (lambda m: lambda a: m.full_like(a, 3) * a, S2, 1),
    "conv1d": (lambda m: lambda a: m.conv1d(a[..., None], m.ones((2, 3, 1)), padding=1),
               S2, 1),
    "conv2d": (lambda m: lambda a: m.conv2d(a[None, ..., None], m.ones((2, 3, 3, 1))),
               [(4, 5), (6, 7)], 1),
    "fast.layer_norm": (lambda m: lambda a: m.fast.layer_norm(a, None, None, 1e-5), S2, 1),
    "fast.rms_norm": (lambda m: lambda a: m.fast.rms_norm(a, None, 1e-5), S2, 1),
    "LayerNorm": (lambda m: _nn(m).LayerNorm(4, affine=False), [(2, 4), (5, 4)], 1),
    "RMSNorm": (lambda m: _nn(m).RMSNorm(4), [(2, 4), (5, 4)], 1),
    "sdpa": (lambda m: lambda a: m.fast.scaled_dot_product_attention(
        a[None, None], a[None, None], a[None, None], scale=1.0), S2, 1),
    # (numbers Python computed from `a.shape` are constants of the trace, as in MLX)
    "python divisor": (lambda m: lambda a: a.sum(0) / a.shape[0], S2, 1),
    "python size": (lambda m: lambda a: a.sum() / a.size, S2, 1),
    "python scale": (lambda m: lambda a: a * a.shape[1], S2, 1),
    "python len": (lambda m: lambda a: a * len(a), S2, 1),
    "python reshape": (lambda m: lambda a: a.reshape(a.shape[0], -1).sum(axis=1), S3, 1),
    "python sdpa scale": (lambda m: lambda a: m.fast.scaled_dot_product_attention(
        a[None, None], a[None, None], a[None, None], scale=a.shape[-1] ** -0.5), S2, 1),
    "python softmax": (lambda m: lambda a: m.softmax(a, axis=-1).sum(axis=0) / a.shape[0],
                       [(2, 3), (4, 3)], 1),
    # (and where they no longer fit, MLX's error)
    "explicit reshape": (lambda m: lambda a: a.reshape(a.shape[0] * a.shape[1]), S2, 1),
    "GroupNorm": (lambda m: _nn(m).GroupNorm(2, 4, affine=False), S3, 1),
}

_LOSSES = {
    "mse_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "l1_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "smooth_l1_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "huber_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "log_cosh_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "kl_div_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "hinge_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "cosine_similarity_loss": lambda L, m, a, b: L(a, b, reduction="mean"),
    "gaussian_nll_loss": lambda L, m, a, b: L(a, b, b, reduction="mean"),
    "binary_cross_entropy": lambda L, m, a, b: L(m.sigmoid(a), m.sigmoid(b),
                                                 with_logits=False, reduction="mean"),
    "nll_loss": lambda L, m, a, b: L(a, m.argmax(b, axis=-1), reduction="mean"),
    "cross_entropy": lambda L, m, a, b: L(a, m.argmax(b, axis=-1), label_smoothing=0.1,
                                          reduction="mean"),
    "margin_ranking_loss": lambda L, m, a, b: L(a, b, m.sign(a - b), reduction="mean"),
    "triplet_loss": lambda L, m, a, b: L(a, b, a * 2, reduction="mean"),
}
for _name, _call in _LOSSES.items():
    CASES[_name] = ((lambda name, call: lambda m: lambda a, b: call(
        getattr(_nn(m).losses, name), m, a, b))(_name, _call), S2, 2)


@pytest.mark.parametrize("name", list(CASES))
def test_other_shapes_compute_what_mlx_computes(name):
    make, shapes, n_in = CASES[name]
    ours, theirs = _calls(mx, make, shapes, n_in), _calls(mlx, make, shapes, n_in)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, tuple):
            assert o == t
            continue
        assert not isinstance(o, tuple), o
        assert [x.shape for x in o] == [x.shape for x in t]
        for x, y in zip(o, t):
            # (float32 sums, exps and products: ember's NumPy/C kernels and MLX's add and
            # round in other orders, so a few ulps apart; a normalised value near zero comes
            # from x - mean of O(1) terms, so its error is absolute: atol 1e-5)
            np.testing.assert_allclose(x, y, rtol=2e-5, atol=1e-5)


def test_the_python_runs_once_and_prints_once():
    def run(m):
        n = [0]

        def f(a):
            n[0] += 1
            print("tracing", a.shape)
            return a.mean(axis=0)

        cf = m.compile(f, shapeless=True)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            outs = [cf(m.ones((2, 3))).tolist(), cf(m.ones((4, 5)) * 2).tolist(),
                    cf(m.ones((4, 5)) * 3).tolist()]
        return outs, buf.getvalue()

    ours, theirs = run(mx), run(mlx)
    assert ours == theirs
    assert ours[1] == "tracing (2, 3)\n"


def test_a_graph_free_of_shapes_is_traced_once():
    cf = mx.compile(lambda a: mx.exp(a) * 2 + a.sum(axis=-1, keepdims=True), shapeless=True)
    for s in S2:
        a = mx.arange(math.prod(s), dtype=mx.float32).reshape(s) / 10
        np.testing.assert_array_equal(np.array(cf(a)), np.array(
            mx.exp(a) * 2 + a.sum(axis=-1, keepdims=True)))
    assert cf.traces == 1


def test_a_bound_graph_is_traced_once_per_set_of_shapes():
    cf = mx.compile(lambda a: a.mean(axis=0), shapeless=True)
    for s in [(2, 3), (4, 5), (2, 3), (4, 5), (6, 5)]:
        a = mx.arange(math.prod(s), dtype=mx.float32).reshape(s)
        # (sums of small integers and a power of two's inverse or a correctly rounded
        # 1/n: the mean is exact but for 1/3, 1/5, which both sides round to float32 once)
        assert cf(a).tolist() == mx.mean(a, axis=0).tolist()
    assert cf.traces == 3


def test_a_draw_in_a_shapeless_trace_is_refused_as_mlx_refuses_it():
    """MLX's RandomBits cannot say its output shapes, so a shapeless trace holding a draw
    is refused once traced ("RandomBits cannot infer output shapes"), each call again;
    the global key still advances as MLX's does (the draw took its key)."""
    def run(m):
        m.random.seed(3)
        cf = m.compile(lambda a: a.mean(axis=0) + m.random.uniform(shape=(1,)),
                       shapeless=True)
        errors = []
        for shape in ((2, 3), (4, 3)):
            with pytest.raises(ValueError) as e:
                cf(m.ones(shape))
            errors.append(str(e.value))
        return errors, np.array(m.random.uniform(shape=(2,))).tolist()

    assert run(mx) == run(mlx)


def test_inputs_and_outputs_state_at_other_shapes():
    def run(m):
        state = [m.zeros((1,))]

        def f(a):
            state[0] = state[0] + a.mean()
            return a.reshape(-1)

        cf = m.compile(f, inputs=state, outputs=state, shapeless=True)
        outs = [cf(m.arange(6, dtype=m.float32).reshape(2, 3)).tolist(),
                cf(m.arange(20, dtype=m.float32).reshape(4, 5)).tolist()]
        return outs, state[0].tolist()

    assert run(mx) == run(mlx)


def test_a_training_step_at_several_batch_sizes():
    """A model, an optimizer and `nn.value_and_grad` in one shapeless step (MLX's state
    pattern), called at batch sizes 2, 5, 3, 5, against the same step run uncompiled.

    NOTE: not against MLX's compiled step: MLX 0.32.4 corrupts its heap on this program
    now and then ("free(): invalid next size", a crash a few runs in ten); its losses,
    when it survives, are these."""
    def run(compiled: bool):
        model = enn.Sequential(enn.Linear(3, 4), enn.ReLU(), enn.LayerNorm(4),
                               enn.Linear(4, 1))
        params = [p for _, p in _leaves(model.parameters())]
        model.update(_fill(model.parameters(), iter(
            [mx.full(p.shape, 0.1 * (i + 1) / len(params)) for i, p in enumerate(params)])))
        opt = eoptim.SGD(learning_rate=0.1)
        state = [model.state, opt.state]

        def loss_fn(mod, x, y):
            return enn.losses.mse_loss(mod(x), y, reduction="mean")

        def step(x, y):
            loss, grads = enn.value_and_grad(model, loss_fn)(model, x, y)
            opt.update(model, grads)
            return loss

        if compiled:
            step = partial(mx.compile, inputs=state, outputs=state, shapeless=True)(step)
        losses = []
        for n in [2, 5, 3, 5]:
            x, _ = _inputs(mx, (n, 3))
            losses.append(step(x, x.sum(axis=1, keepdims=True)).item())
        return losses, np.array(model.layers[0].weight)

    (ours, w_ours), (eager, w_eager) = run(True), run(False)
    # (the compiled program fuses the float32 steps into C loops: a few ulps, grown over
    # four steps)
    np.testing.assert_allclose(ours, eager, rtol=1e-5)
    np.testing.assert_allclose(w_ours, w_eager, rtol=1e-5, atol=1e-6)


def _leaves(tree, prefix=""):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, f"{prefix}{k}.")
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _leaves(v, f"{prefix}{i}.")
    else:
        yield prefix, tree


def _fill(tree, values):
    if isinstance(tree, dict):
        return {k: _fill(v, values) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_fill(v, values) for v in tree]
    return next(values)


def test_attention_at_several_sequence_lengths():
    """mlx.nn's MultiHeadAttention splits its heads with `unflatten` (no shape read in
    Python), so a shapeless compile of it follows a new sequence length."""
    def run(m, nn):
        mha = nn.MultiHeadAttention(8, 2)
        n = len(list(_leaves(mha.parameters())))
        mha.update(_fill(mha.parameters(), iter(
            [(m.arange(p.size, dtype=m.float32).reshape(p.shape) % 7 - 3) / (20 + i)
             for i, (_, p) in zip(range(n), _leaves(mha.parameters()))])))
        f = m.compile(lambda x: mha(x, x, x), shapeless=True)
        return [np.array(f(_inputs(m, (2, n_, 8))[0])) for n_ in (3, 5, 4)]

    for o, t in zip(run(mx, enn), run(mlx, mnn)):
        # (float32 products, softmax and sums in other orders: a few ulps)
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
