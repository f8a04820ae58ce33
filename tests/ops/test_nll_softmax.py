"""nll_log_softmax_backward: log_softmax's backward of nll_loss's backward in one kernel.
It must give the pair's bits exactly (the NumPy kernel against the pair's NumPy kernels, the
C kernel against the pair's C kernels), for every reduction, class weights, ignored
targets, and the gradients and log-probabilities that are edge values."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember._core.primitive import kernels
from ember.ops.nll_softmax import nll_log_softmax_backward_p
from ember.ops.nn_ops import nll_loss_backward_p
from ember.ops.softmax import softmax_backward_p, softmax_p
from native._differential import threads

_cpu = kernels["cpu"]
needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")


def _case(rows, n, dtype, seed=0, kind="native"):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, n)) * 4).astype(dtype)
    fwd = _cpu[softmax_p]
    out = (fwd.numpy if kind == "numpy" else fwd)(x, dim=1, log=True)
    target = rng.integers(0, n, rows).astype(np.int64)
    return x, out, target


def _pair(kind, g, target, weight, out, reduction, ignore_index):
    """nll_loss_backward then log_softmax's backward, as eager runs them."""
    nll, sm = _cpu[nll_loss_backward_p], _cpu[softmax_backward_p]
    if kind == "numpy":
        sm = sm.numpy
    gin = nll(g, target, weight, reduction=reduction, ignore_index=ignore_index,
              in_shape=out.shape)
    return sm(gin, out, dim=1, log=True)


def _fused(kind, *args, **params):
    k = _cpu[nll_log_softmax_backward_p]
    if kind == "numpy":
        return k.numpy(*args, **params)
    got = k.native(native.library("nll_softmax"), *args, **params)
    assert got is not NotImplemented
    return got


KINDS = ["numpy", pytest.param("native", marks=needs_native)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 3])
@pytest.mark.parametrize("shape", [(1, 1), (1, 10), (64, 10), (7, 33), (300, 1000)], ids=str)
@pytest.mark.parametrize("logits", [False, True], ids=["from_out", "from_logits"])
def test_bits_are_the_pairs(kind, dtype, reduction, weighted, ignore_index, shape, logits):
    """The pair's bits; `logits`: given log_softmax's input, the bits of log_softmax's
    kernel then the pair."""
    x, out, target = _case(*shape, dtype, kind=kind)
    weight = np.linspace(0.5, 2, shape[1]).astype(dtype) if weighted else None
    g = (np.linspace(0.5, 1.5, shape[0]).astype(dtype) if reduction == "none"
         else np.asarray(0.7, dtype))
    want = _pair(kind, g, target, weight, out, reduction, ignore_index)
    for n in (1, 2):
        with threads(n):
            got = _fused(kind, g, target, weight, x if logits else out, reduction=reduction,
                         ignore_index=ignore_index, logits=logits)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("g", [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45])
@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_edge_gradients_and_log_probabilities(kind, g):
    """A zero (either sign), NaN or infinite gradient, and log-probabilities of -inf, NaN
    and +0.0 in the rows: the same bits as the pair, signs of zeros included."""
    _, out, target = _case(6, 20, np.float32, seed=3)
    out[1, 4], out[2, target[2]], out[3, 0], out[4, :] = -np.inf, np.nan, 0.0, -np.inf
    gg = np.asarray(g, np.float32)
    for reduction in ("mean", "sum"):
        want = _pair(kind, gg, target, None, out, reduction, -100)
        got = _fused(kind, gg, target, None, out, reduction=reduction, ignore_index=-100)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ignored", ["some", "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ignored_targets_outside_the_classes(kind, ignored, dtype):
    """Targets equal to a negative `ignore_index` (the usual -100): their rows get a zero
    coefficient and the mean divides by the rows left (0 / 0 when none is: every
    coefficient is then 0, as the pair gives)."""
    _, out, target = _case(9, 7, dtype, seed=5, kind=kind)
    target[[1, 4, 5] if ignored == "some" else slice(None)] = -100
    g = np.asarray(1.3, dtype)
    for reduction in ("mean", "sum"):
        want = _pair(kind, g, target, None, out, reduction, -100)
        got = _fused(kind, g, target, None, out, reduction=reduction, ignore_index=-100)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("kind", KINDS)
def test_a_target_out_of_range_raises_as_torch(kind):
    import torch

    _, out, target = _case(4, 5, np.float32)
    target[2] = 7
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.nll_loss(torch.tensor(out), torch.tensor(target))
    with pytest.raises(IndexError) as ours:
        _fused(kind, np.asarray(1.0, np.float32), target, None, out, reduction="mean",
               ignore_index=-100)
    assert str(ours.value) == str(theirs.value)


def test_not_differentiable_and_absent_from_eager():
    """Eager cross_entropy records the pair (torch's node names), never this primitive;
    the primitive itself declares no derivative (it only runs inside compiled programs)."""
    from ember._core.primitive import NOT_DIFFERENTIABLE, jvp_rules, vjp_rules

    assert vjp_rules[nll_log_softmax_backward_p] is NOT_DIFFERENTIABLE
    assert jvp_rules[nll_log_softmax_backward_p] is NOT_DIFFERENTIABLE
    x = ember.randn(4, 5, requires_grad=True)
    loss = ember.nn.functional.cross_entropy(x, ember.tensor([0, 1, 2, 3]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
