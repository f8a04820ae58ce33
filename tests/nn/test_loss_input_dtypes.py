"""Pointwise losses on integer, bool and mixed-dtype operands against torch: which refuse
(and with which exception and words), which promote, and the result's dtype."""

import pytest
import torch

import ember

DTYPES = ["int32", "int64", "uint8", "bool", "float16", "float32", "float64"]


def _outcome(lib, name, d1, d2, **kw):
    """The loss's dtype and value, or the type and message of what it raised."""
    a = lib.tensor([1, 0, 1]).to(getattr(lib, d1))
    b = lib.tensor([1, -1, 1]).to(getattr(lib, d2))
    F = lib.nn.functional
    try:
        if name == "margin_ranking_loss":
            out = F.margin_ranking_loss(a, a.flip(0), b, **kw)
        else:
            out = getattr(F, name)(a, b, **kw)
    except Exception as e:  # the comparison is of the exception itself
        return type(e).__name__, str(e)
    # (values to 5 digits: log1p / exp of float16 round in the last bit on some paths)
    return str(out.dtype).split(".")[1], round(out.item(), 5)


@pytest.mark.parametrize("d1", DTYPES)
@pytest.mark.parametrize("d2", DTYPES)
@pytest.mark.parametrize("name,kw", [("huber_loss", {}), ("soft_margin_loss", {}),
                                     ("margin_ranking_loss", {}),
                                     ("margin_ranking_loss", {"margin": 1})])
def test_dtypes_refuse_and_promote_as_torch(name, kw, d1, d2):
    # huber: no integer kernel (NotImplementedError); soft margin: written into a tensor like
    # the input (an integer one cannot hold the float result, a bool one cannot be negated,
    # a float one keeps its dtype); margin ranking: the float margin makes integers float
    assert _outcome(ember, name, d1, d2, **kw) == _outcome(torch, name, d1, d2, **kw)


def test_soft_margin_with_a_byte_target_multiplies_the_negated_input():
    # -x * t with t = 255 (a uint8 -1): the target is never negated in its own dtype
    x = [0.5, -0.25, 2.0]
    out = [lib.nn.functional.soft_margin_loss(lib.tensor(x), lib.tensor([1, 255, 1]).to(
        lib.uint8), reduction="none").tolist() for lib in (ember, torch)]
    assert out[0] == out[1]
