"""Huber's loss is written into a tensor like its input (computed in the promoted dtype,
rounded per element, then reduced), unlike mse/l1/smooth L1 which promote; and the
deprecated size_average/reduce flags warn in torch's words from loss modules too."""

import warnings

import pytest
import torch

import ember

from helpers import assert_same, same_message

X, Y = [0.5, -1.5, 3.0, 0.1], [1, 2, 0, 0]
PAIRS = [("float32", "float64"), ("float32", "int64"), ("float16", "float32"),
         ("bfloat16", "float64"), ("float64", "float32"), ("float32", "float16")]


@pytest.mark.parametrize("dtypes", PAIRS, ids=["-".join(p) for p in PAIRS])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_huber_loss_keeps_the_input_dtype(dtypes, reduction):
    def run(L):
        x = L.tensor(X, dtype=getattr(L, dtypes[0]))
        y = L.tensor(Y, dtype=getattr(L, dtypes[1]))
        return L.nn.functional.huber_loss(x, y, reduction=reduction, delta=1.5)

    # (one subtraction, square and scale per element, correctly rounded; the mean of four
    # values is exact in every dtype here)
    assert_same(run(ember), run(torch), rtol=0, atol=0)


def test_huber_loss_names_its_node_and_refuses_an_integer_input():
    def run(L):
        x = L.tensor(X, requires_grad=True)
        return L.nn.HuberLoss()(x, L.tensor(Y, dtype=L.float64)).grad_fn.name()

    assert run(ember) == run(torch) == "HuberLossBackward0"
    msg = same_message(lambda L: L.nn.functional.huber_loss(L.tensor(Y), L.tensor(X)))
    assert msg == "result type Float can't be cast to the desired output type Long"


@pytest.mark.parametrize("kwargs", [{"size_average": False}, {"reduce": False},
                                    {"size_average": True, "reduce": True}])
@pytest.mark.parametrize("name", ["L1Loss", "MSELoss", "HuberLoss", "NLLLoss", "KLDivLoss",
                                  "BCEWithLogitsLoss", "PoissonNLLLoss"])
def test_legacy_flags_warn_at_construction(name, kwargs):
    if name == "HuberLoss":
        kwargs = {}  # (no legacy flags: nothing to warn)
    got = []
    for L in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = getattr(L.nn, name)(**kwargs)
        got.append((loss.reduction, [str(w.message) for w in caught]))
    assert got[0] == got[1]
