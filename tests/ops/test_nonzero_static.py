"""nonzero_static: nonzero's index rows cut or padded to a fixed count, with PyTorch's
argument checks and words (as a function and as a Tensor method)."""

import pytest

from helpers import same_message, same_result

CALLS = {
    "padded": lambda L: L.nonzero_static(L.tensor([[1, 0], [0, 1]]), size=3),
    "cut": lambda L: L.nonzero_static(L.tensor([[1, 0], [1, 1]]), size=2),
    "fill value": lambda L: L.nonzero_static(L.tensor([1, 0, 1, 1]), size=5, fill_value=7),
    "size 0": lambda L: L.nonzero_static(L.tensor([1, 0, 1]), size=0),
    "0-d input": lambda L: L.nonzero_static(L.tensor(3), size=2),
    "bool input": lambda L: L.nonzero_static(L.tensor([True, False, True]), size=1),
    "float input": lambda L: L.nonzero_static(L.tensor([0.5, 0.0, -1.0]), size=4),
    "size as 0-d tensor": lambda L: L.nonzero_static(L.tensor([1, 0]), size=L.tensor(2)),
    "method": lambda L: L.tensor([1.0, 0, 2]).nonzero_static(size=4),
    "out": lambda L: L.nonzero_static(L.tensor([1, 1]), size=1,
                                      out=L.empty(1, 1, dtype=L.long)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_shape_dtype(name):
    out = same_result(CALLS[name])
    assert out.is_contiguous()


REFUSED = {
    "negative size": (RuntimeError, lambda L: L.nonzero_static(L.tensor([1, 0]), size=-1)),
    "float size": (TypeError, lambda L: L.nonzero_static(L.tensor([1, 0]), size=2.0)),
    "bool fill": (TypeError, lambda L: L.nonzero_static(L.tensor([1, 0]), size=2,
                                                        fill_value=True)),
    "float fill": (TypeError, lambda L: L.nonzero_static(L.tensor([1, 0]), size=2,
                                                         fill_value=2.5)),
    "no size": (TypeError, lambda L: L.nonzero_static(L.tensor([1, 0]))),
    "positional size": (TypeError, lambda L: L.nonzero_static(L.tensor([1, 0]), 2)),
    "method positional size": (TypeError, lambda L: L.tensor([1, 0]).nonzero_static(3)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_torch_words(name):
    kind, call = REFUSED[name]
    same_message(call, kind)
