"""nn.losses against MLX's: every loss, every reduction (and each loss's default one),
values and gradients with respect to the predictions."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

RNG = np.random.default_rng(1)
LOGITS = RNG.standard_normal((4, 5)).astype(np.float32)
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
LOGP = np.log(PROBS).astype(np.float32)
LOGQ = np.log(np.roll(PROBS, 1, axis=-1)).astype(np.float32)
LABELS = np.array([0, 3, 4, 1], np.int32)
A = RNG.standard_normal((4, 5)).astype(np.float32)
B = np.where(RNG.random((4, 5)) < 0.3, A, RNG.standard_normal((4, 5))).astype(np.float32)
BITS = (RNG.random((4, 5)) < 0.5).astype(np.float32)
SIGNS = np.where(RNG.random((4, 5)) < 0.5, -1.0, 1.0).astype(np.float32)
VARS = RNG.random((4, 5)).astype(np.float32) + 0.1
W = RNG.random((4,)).astype(np.float32)

# (loss, differentiated argument, other arguments, keyword arguments)
CASES = [
    ("cross_entropy", LOGITS, [LABELS], {}),
    ("cross_entropy", LOGITS, [PROBS.astype(np.float32)], {}),
    ("cross_entropy", LOGITS, [LABELS], {"label_smoothing": 0.1}),
    ("cross_entropy", LOGITS, [LABELS], {"weights": W}),
    ("cross_entropy", LOGITS.T.copy(), [LABELS], {"axis": 0}),
    ("binary_cross_entropy", A, [BITS], {}),
    ("binary_cross_entropy", PROBS.astype(np.float32), [BITS], {"with_logits": False}),
    ("l1_loss", A, [B], {}),
    ("mse_loss", A, [B], {}),
    ("nll_loss", LOGP, [LABELS], {}),
    ("gaussian_nll_loss", A, [B, VARS], {}),
    ("gaussian_nll_loss", A, [B, VARS], {"full": True}),
    ("kl_div_loss", LOGP, [LOGQ], {}),
    ("smooth_l1_loss", A, [B], {"beta": 0.5}),
    ("triplet_loss", A, [B, LOGITS], {}),
    ("hinge_loss", A, [SIGNS], {}),
    ("huber_loss", A, [B], {"delta": 0.7}),
    ("log_cosh_loss", A, [B], {}),
    ("cosine_similarity_loss", A, [B], {}),
    ("margin_ranking_loss", A, [B, SIGNS], {"margin": 0.1}),
]


def _run(mx_, losses, name, x, rest, kwargs, reduction):
    kw = {k: mx_.array(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    if reduction is not None:
        kw["reduction"] = reduction
    others = [mx_.array(r) for r in rest]

    def f(x):
        out = getattr(losses, name)(x, *others, **kw)
        return mx_.sum(out * mx_.arange(1, out.size + 1).reshape(out.shape)), out

    (_, out), g = mx_.value_and_grad(f)(mx_.array(x))
    return out, g


@pytest.mark.parametrize("reduction", [None, "none", "mean", "sum"])
@pytest.mark.parametrize("name,x,rest,kwargs", CASES, ids=[c[0] for c in CASES])
def test_loss_matches_mlx(mlx, mlx_nn, close, name, x, rest, kwargs, reduction):
    out, g = _run(mx, nn.losses, name, x, rest, kwargs, reduction)
    out_mlx, g_mlx = _run(mlx, mlx_nn.losses, name, x, rest, kwargs, reduction)
    # NOTE: logsumexp / log / exp / pow differ from MLX's by an ulp or two: atol 1e-5
    close(out, out_mlx, rtol=1e-5, atol=1e-5)
    close(g, g_mlx, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,default", [
    ("cross_entropy", "none"), ("nll_loss", "none"), ("kl_div_loss", "none"),
    ("mse_loss", "mean"), ("l1_loss", "mean"), ("smooth_l1_loss", "mean"),
    ("binary_cross_entropy", "mean"), ("huber_loss", "none")])
def test_default_reductions(name, default):
    case = next(c for c in CASES if c[0] == name)
    out, _ = _run(mx, nn.losses, *case[:4], None)
    assert (out.ndim == 0) == (default == "mean")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)
    return None


def test_errors_match_mlx(mlx, mlx_nn):
    calls = [
        lambda m, nn_: nn_.losses.mse_loss(m.zeros((2,)), m.zeros((3,))),
        lambda m, nn_: nn_.losses.mse_loss(m.zeros((2,)), m.zeros((2,)), reduction="avg"),
        lambda m, nn_: nn_.losses.cross_entropy(m.zeros((2, 3)), m.zeros((3,), m.int32)),
        lambda m, nn_: nn_.losses.cross_entropy(m.zeros((2, 3)), m.zeros((2,), m.int32),
                                                label_smoothing=1.0),
        lambda m, nn_: nn_.losses.cross_entropy(m.zeros((2, 3)), m.zeros((2,), m.int32),
                                                weights=m.ones((3,))),
        lambda m, nn_: nn_.losses.binary_cross_entropy(m.zeros((2,)), m.zeros((3,))),
        lambda m, nn_: nn_.losses.margin_ranking_loss(m.zeros((2,)), m.zeros((3,)),
                                                      m.zeros((2,))),
        # float or boolean class indices: refused by the gather, when evaluated
        lambda m, nn_: nn_.losses.cross_entropy(m.zeros((2, 3)), m.zeros((2,))).tolist(),
        lambda m, nn_: nn_.losses.cross_entropy(m.zeros((2, 3)), m.zeros((2,), m.bool_),
                                                reduction="mean").item(),
    ]
    for call in calls:
        ours = _error(lambda c=call: c(mx, nn))
        assert ours is not None and ours == _error(lambda c=call: c(mlx, mlx_nn))


def test_negative_class_indices_count_from_the_end(mlx, mlx_nn):
    logits = [[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]]
    for fn in ("cross_entropy", "nll_loss"):
        ours = getattr(nn.losses, fn)(mx.array(logits), mx.array([-1, 0]))
        theirs = getattr(mlx_nn.losses, fn)(mlx.array(logits), mlx.array([-1, 0]))
        np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.1}, {"reduction": "sum"}],
                         ids=["plain", "smoothed", "sum"])
def test_half_precision_cross_entropy_rounds_each_step_as_mlx(mlx, mlx_nn, dtype, kwargs):
    """MLX's CPU cross-entropy of half-precision logits rounds the max-shifted logits,
    their logsumexp and the difference to the logits' dtype, step by step (its fused
    float32 kernel is GPU-only): bit-equal, as each step is correctly rounded on both
    sides and the half logsumexp matches MLX's bit for bit."""
    rng = np.random.default_rng(4)
    for scale in (1.0, 30.0):
        logits = (rng.standard_normal((40, 7)) * scale).astype(np.float32)
        labels = rng.integers(0, 7, (40,)).astype(np.int32)

        def run(m, nn_, logits=logits, labels=labels):
            x = m.array(logits).astype(getattr(m, dtype))
            out = nn_.losses.cross_entropy(x, m.array(labels), **kwargs)
            return np.array(out.astype(m.float32)), out.dtype.size

        ours, theirs = run(mx, nn), run(mlx, mlx_nn)
        assert ours[1] == theirs[1] == 2
        np.testing.assert_array_equal(ours[0], theirs[0])


def test_cross_entropy_edges_match_mlx(mlx, mlx_nn):
    """Equal 0-d logits and targets read as probabilities and refused by the max along
    the axis; empty logits refused by logsumexp; a loss of exactly 0 is +0.0 (MLX's
    `lse - score`), not the negated log-softmax's -0.0."""
    calls = [
        lambda m, nn_: nn_.losses.cross_entropy(m.array(1.0), m.array(0)),
        lambda m, nn_: nn_.losses.cross_entropy(m.array(1.0), m.array(0.5)),
        lambda m, nn_: nn_.losses.cross_entropy(m.zeros((0, 3)), m.zeros((0,), m.int32),
                                                reduction="mean").item(),
    ]
    for call in calls:
        ours = _error(lambda c=call: c(mx, nn))
        assert ours is not None and ours == _error(lambda c=call: c(mlx, mlx_nn))
    for kwargs in [{}, {"reduction": "sum"}, {"axis": 0}]:
        logits, labels = [[100.0, 0.0], [0.0, 30.0]], [0, 1]
        if kwargs.get("axis") == 0:
            logits = np.array(logits).T.tolist()
        ours = nn.losses.cross_entropy(mx.array(logits), mx.array(labels), **kwargs)
        theirs = mlx_nn.losses.cross_entropy(mlx.array(logits), mlx.array(labels), **kwargs)
        assert np.array_equal(np.signbit(np.array(ours)), np.signbit(np.array(theirs)))
        assert np.array_equal(np.array(ours), np.array(theirs))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("loss", ["cross_entropy", "binary_cross_entropy", "nll_loss"])
def test_half_precision_gradients_are_mlx_s(mlx, mlx_nn, dtype, loss):
    """The gradients of the half-precision losses built on logsumexp / logaddexp /
    log_softmax: MLX's VJPs run as half ops (`_cpu_math`), so bit for bit."""
    rng = np.random.default_rng(7)
    logits = (rng.standard_normal((24, 6)) * 3).astype(np.float32)
    labels = rng.integers(0, 6, (24,)).astype(np.int32)
    bits = (rng.random((24, 6)) < 0.5).astype(np.float32)

    def run(m, nn_):
        x = m.array(logits).astype(getattr(m, dtype))
        if loss == "binary_cross_entropy":
            f = lambda z: nn_.losses.binary_cross_entropy(z, m.array(bits))  # noqa: E731
        elif loss == "nll_loss":
            f = lambda z: nn_.losses.nll_loss(  # noqa: E731
                nn_.log_softmax(z), m.array(labels), reduction="sum")
        else:
            f = lambda z: nn_.losses.cross_entropy(z, m.array(labels), reduction="sum")  # noqa: E731
        return np.array(m.grad(f)(x).astype(m.float32))

    np.testing.assert_array_equal(run(mx, nn), run(mlx, mlx_nn))


def test_cosine_similarity_of_complex_and_integer_vectors(mlx, mlx_nn):
    """The norms are `linalg.norm`'s, as MLX's are: |x|, not the root of x^2, for complex
    entries; integer inputs come out in float32."""
    cases = [([[1 + 2j, 3j], [2.0 + 0j, -1j]], [[1 + 0j, 1j], [1j, 1 + 1j]]),
             ([[1, 2], [0, 3]], [[3, 4], [5, -1]])]
    for a, b in cases:
        ours = nn.losses.cosine_similarity_loss(mx.array(a), mx.array(b))
        theirs = mlx_nn.losses.cosine_similarity_loss(mlx.array(a), mlx.array(b))
        assert ours.dtype.size == theirs.dtype.size and str(ours.dtype) == str(theirs.dtype)
        # NOTE: the complex sums and square roots round otherwise by an ulp
        np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-6)
