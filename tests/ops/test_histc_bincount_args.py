"""histc / bincount check their arguments as PyTorch's parser does, in its words: `bins`
and `minlength` are ints (an integer, a NumPy integer or a 0-d integer tensor; no float,
bool, float tensor, string or None), histc's `min` / `max` Numbers, bincount's `weights` a
Tensor. A positional argument is named with its position (a method counts from the first
argument after self), a keyword one without."""

import numpy as np
import pytest

from helpers import same_message, same_result

X = [0.1, 0.5, 0.7, 0.2]
I = [0, 2, 2, 5]
BAD_INTS = {"float": 4.0, "bool": True, "float tensor": "T3.0", "str": "4", "None": None,
            "numpy float": np.float64(3.0)}


def _v(L, v):
    return L.tensor(3.0) if v == "T3.0" else v


FORMS = {
    "histc bins=": lambda L, v: L.histc(L.tensor(X), bins=v),
    "histc positional": lambda L, v: L.histc(L.tensor(X), v),
    "Tensor.histc bins=": lambda L, v: L.tensor(X).histc(bins=v),
    "Tensor.histc positional": lambda L, v: L.tensor(X).histc(v),
    "bincount minlength=": lambda L, v: L.bincount(L.tensor(I), minlength=v),
    "bincount positional": lambda L, v: L.bincount(L.tensor(I), None, v),
    "Tensor.bincount minlength=": lambda L, v: L.tensor(I).bincount(minlength=v),
    "Tensor.bincount positional": lambda L, v: L.tensor(I).bincount(None, v),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("bad", sorted(BAD_INTS))
def test_int_parameters_refuse_non_ints(form, bad):
    msg = same_message(lambda L: FORMS[form](L, _v(L, BAD_INTS[bad])), TypeError)
    assert "must be int, not" in msg


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("good", [3, np.int64(3), "tensor"])
def test_int_parameters_take_integers(form, good):
    # (counts of a few values: exact)
    same_result(lambda L: FORMS[form](L, L.tensor(3) if good == "tensor" else good))


@pytest.mark.parametrize("call", [
    lambda L: L.histc(L.tensor(X), bins=3, min="0"),
    lambda L: L.histc(L.tensor(X), 3, None),
    lambda L: L.tensor(X).histc(3, 0, "1"),
    lambda L: L.bincount(L.tensor(I), weights=[1.0, 2.0, 3.0, 4.0]),
    lambda L: L.bincount(L.tensor(I), [1.0, 2.0, 3.0, 4.0]),
])
def test_number_and_tensor_parameters(call):
    same_message(call, TypeError)


def test_tensor_bounds_still_bin():
    same_result(lambda L: L.histc(L.tensor(X), 4, L.tensor(0.0), 1))  # (exact counts)
