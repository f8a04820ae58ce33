"""nll_loss / cross_entropy on (N, C, d1, ...) input refuse a bad target with torch's exception
and words, checked in torch's order: shapes before dtype, Long-or-Byte before Byte's refusal."""

import math

import pytest
import torch

import ember

from helpers import same_messages

SHAPES = [((2, 5, 4), (2, 4)), ((2, 5, 4), (2, 3)), ((2, 5, 4, 3), (2, 4, 3)),
          ((2, 5, 4, 3), (2, 4)), ((2, 5, 4, 3), (2, 4, 2)), ((2, 5, 4, 3, 2), (2, 4, 3, 2)),
          ((2, 5, 4, 3, 2), (2, 4, 3)), ((2, 5), (2,)), ((5,), ())]
DTYPES = ["float32", "uint8", "int16", "int32", "int64"]


def _outcome(lib, fn, ishape, tshape, dtype):
    """The loss's value, or the type and message of what it raised."""
    lib.manual_seed(0)
    x = lib.randn(ishape)
    target = lib.zeros(tshape, dtype=getattr(lib, dtype))
    try:
        return round(getattr(lib.nn.functional, fn)(x, target).item(), 5)
    except Exception as e:  # the comparison is of the exception itself
        return type(e).__name__, str(e)


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ishape,tshape", SHAPES)
def test_target_checks_match_torch(fn, ishape, tshape, dtype):
    # values are rounded: a log_softmax reduction may differ in its last float32 bit
    assert _outcome(ember, fn, ishape, tshape, dtype) == _outcome(torch, fn, ishape, tshape, dtype)


def test_float_target_on_sequence_logits_names_long_or_byte():
    # the (N, C, T) logits of a sequence model with float targets: the words a user sees
    with pytest.raises(RuntimeError, match="target dtype to be Long or Byte, but got Float"):
        ember.nn.functional.cross_entropy(ember.randn(2, 5, 4), ember.randn(2, 4))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Byte"):
        ember.nn.NLLLoss()(ember.randn(2, 5, 4), ember.zeros(2, 4, dtype=ember.uint8))


@pytest.mark.parametrize("ls", [-0.1, -2.0, float("nan"), float("-inf"), 0.0, 0.3, 1.0, 1.5,
                                2.0, 1.0000001, float("inf")])
@pytest.mark.parametrize("kind", ["index", "probs", "index_1d"])
def test_label_smoothing_range_matches_torch(ls, kind):
    # torch refuses only a label_smoothing above 1 (printed as C++ prints a double); a
    # negative or NaN one means no smoothing
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(2, 5, 4)
        target = {"index": lib.randint(0, 5, (2, 4)), "probs": lib.softmax(lib.randn(2, 5, 4), 1),
                  "index_1d": lib.tensor([1, 4])}[kind]
        if kind == "index_1d":
            x = x[:, :, 0]
        try:  # values rounded: log_softmax sums may differ in their last float32 bit
            return round(lib.nn.functional.cross_entropy(x, target, label_smoothing=ls).item(), 5)
        except Exception as e:  # the comparison is of the exception itself
            return type(e).__name__, str(e)
    assert run(ember) == run(torch)


def _result(lib, call):
    """A loss's value and shape, or the type and message of what it raised."""
    try:
        out = call(lib)
        return [round(v, 5) for v in out.reshape(-1).tolist()], tuple(out.shape)
    except Exception as e:  # the comparison is of the exception itself
        return type(e).__name__, str(e)


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("target", [[1], [2], [1, 0], [], [[1]], [5]])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_unbatched_input_reads_a_one_element_target_as_its_class(fn, target, reduction):
    # torch takes a (1,) target of (C,) input as the 0-d class index; another size is a
    # ValueError naming it; the result is 0-d whatever the reduction
    def call(lib):
        lib.manual_seed(0)
        x = lib.randn(3)
        t = lib.tensor(target, dtype=lib.int64)
        return getattr(lib.nn.functional, fn)(x, t, reduction=reduction)

    assert _result(ember, call) == _result(torch, call)


@pytest.mark.parametrize("wshape", [(3,), (1, 3), (3, 1), (), (4,), (1, 4)])
@pytest.mark.parametrize("kind", ["nll", "ce index", "ce probs", "nll 3d", "nll 4d", "ce 5d"])
def test_class_weights_must_be_one_dim_with_one_per_class(wshape, kind):
    # (N, C) input wants a 1-d weight of C; spatial input only counts its elements
    def call(lib):
        lib.manual_seed(0)
        F = lib.nn.functional
        w = lib.arange(1.0, 1.0 + math.prod(wshape)).reshape(wshape)
        if kind in ("nll 3d", "nll 4d", "ce 5d"):
            spatial = {"nll 3d": (3,), "nll 4d": (2, 2), "ce 5d": (2, 2, 1)}[kind]
            x = lib.randn((2, 3) + spatial)
            t = lib.tensor([0, 2, 1, 1, 0, 1, 2, 2][:2 * math.prod(spatial)])
            t = t.reshape((2,) + spatial)
            if kind.startswith("nll"):
                return F.nll_loss(x, t, weight=w)
            return F.cross_entropy(x, t, weight=w)
        x, t = lib.randn(4, 3), lib.tensor([0, 2, 1, 1])
        if kind == "nll":
            return F.nll_loss(x, t, weight=w)
        if kind == "ce index":
            return F.cross_entropy(x, t, weight=w)
        return F.cross_entropy(x, lib.softmax(lib.randn(4, 3), 1), weight=w)

    assert _result(ember, call) == _result(torch, call)


def test_an_operand_on_another_device_is_refused_before_the_values_are_read():
    # The kernels check devices before they read the targets' or inputs' values: a
    # RuntimeError in torch's words (binary_cross_entropy and multilabel_margin_loss name the
    # target's device as the expected one, multi_margin_loss the input's), not a failed read
    # of a meta tensor's values. A meta operand beside CPU ones stands for a second device.
    def calls(L):
        F_ = L.nn.functional
        m = lambda *s: L.empty(*s, device="meta")  # noqa: E731
        o = L.ones
        yield "bce target", lambda: F_.binary_cross_entropy(o(2, 3) * 0.5, m(2, 3))
        yield "bce input", lambda: F_.binary_cross_entropy(m(2, 3), o(2, 3))
        yield "bce weight", lambda: F_.binary_cross_entropy(o(2, 3) * 0.5, o(2, 3), m(3))
        yield "multilabel target", lambda: F_.multilabel_margin_loss(o(2, 3), m(2, 3).long())
        yield "multilabel input", lambda: F_.multilabel_margin_loss(
            m(2, 3), L.zeros(2, 3).long())
        yield "multi_margin target", lambda: F_.multi_margin_loss(o(2, 3), m(2).long())
        yield "multi_margin input", lambda: F_.multi_margin_loss(m(2, 3), L.zeros(2).long())
        yield "multi_margin weight", lambda: F_.multi_margin_loss(
            o(2, 3), L.zeros(2).long(), weight=m(3))

    same_messages(calls)
