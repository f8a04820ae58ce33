"""nll_loss / cross_entropy on (N, C, d1, ...) input refuse a bad target with torch's exception
and words, checked in torch's order: shapes before dtype, Long-or-Byte before Byte's refusal."""

import pytest
import torch

import ember

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
