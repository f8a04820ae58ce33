"""searchsorted / bucketize refuse what PyTorch's argument parser refuses, in its words: a
bool flag given as an int, None, a NumPy bool or a tensor; a non-string side; a list for a
tensor; a third positional argument; bucketize's Number overload with `out`. A bool value
looked up in an integer sequence runs in the promoted dtype, as PyTorch's kernel does."""

import numpy as np
import pytest

from helpers import same_message, same_result

T = [0.3, 0.6]
B = [0.25, 0.5, 0.75]

REFUSED = {
    "bucketize right=1": lambda L: L.bucketize(L.tensor(T), L.tensor(B), right=1),
    "bucketize out_int32=1": lambda L: L.bucketize(L.tensor(T), L.tensor(B), out_int32=1),
    "bucketize both": lambda L: L.bucketize(L.tensor(T), L.tensor(B), out_int32=0, right=1),
    "bucketize scalar": lambda L: L.bucketize(0.5, L.tensor(B), right=1),
    "bucketize int scalar": lambda L: L.bucketize(2, L.tensor(B), right=1),
    "bucketize None": lambda L: L.bucketize(L.tensor(T), L.tensor(B), right=None),
    "bucketize np.bool_": lambda L: L.bucketize(L.tensor(T), L.tensor(B), right=np.bool_(True)),
    "bucketize str": lambda L: L.bucketize(L.tensor(T), L.tensor(B), right="x"),
    "bucketize float": lambda L: L.bucketize(L.tensor(T), L.tensor(B), right=1.0),
    "bucketize tensor flag": lambda L: L.bucketize(L.tensor(T), L.tensor(B),
                                                   right=L.tensor(True)),
    "bucketize positional flag": lambda L: L.bucketize(L.tensor(T), L.tensor(B), True),
    "bucketize list": lambda L: L.bucketize(L.tensor(T), [0.1, 0.2]),
    "bucketize ndarray": lambda L: L.bucketize(np.array(0.3), L.tensor(B)),
    "bucketize out and flag": lambda L: L.bucketize(L.tensor(T), L.tensor(B), right=1,
                                                    out=L.empty(2, dtype=L.long)),
    "bucketize number with out": lambda L: L.bucketize(0.5, L.tensor(B), right=True, out=None),
    "bucketize unknown keyword": lambda L: L.bucketize(L.tensor(T), L.tensor(B), foo=1),
    # five arguments: one overload fits the count, and its parser names the misfit
    "bucketize 5 args flag": lambda L: L.bucketize(L.tensor(T), L.tensor(B), right=1,
                                                   out_int32=True, out=L.empty(2, dtype=L.long)),
    "bucketize 5 args input": lambda L: L.bucketize([0.1], L.tensor(B), out_int32=True,
                                                    right=True, out=L.empty(2, dtype=L.long)),
    "bucketize 5 args out": lambda L: L.bucketize(L.tensor(T), L.tensor(B), out_int32=True,
                                                  right=True, out=[1]),
    "searchsorted right=1": lambda L: L.searchsorted(L.tensor(B), L.tensor(T), right=1),
    "searchsorted out_int32=1": lambda L: L.searchsorted(L.tensor(B), L.tensor(T), out_int32=1),
    "searchsorted scalar": lambda L: L.searchsorted(L.tensor(B), 0.5, right=1),
    "searchsorted side=1": lambda L: L.searchsorted(L.tensor(B), L.tensor(T), side=1),
    "searchsorted None": lambda L: L.searchsorted(L.tensor(B), L.tensor(T), right=None),
    "searchsorted sorter list": lambda L: L.searchsorted(L.tensor(B), L.tensor(T),
                                                         sorter=[0, 1, 2]),
    "searchsorted keywords reversed": lambda L: L.searchsorted(
        L.tensor(B), L.tensor(T), right=1, out=L.empty(2, dtype=L.long),
        sorter=L.tensor([0, 1, 2]), out_int32=1),
    "searchsorted positional flag": lambda L: L.searchsorted(L.tensor(B), L.tensor(T), True),
    "searchsorted list": lambda L: L.searchsorted(L.tensor(B), [0.1]),
    "searchsorted list sequence": lambda L: L.searchsorted([0.1], L.tensor(T)),
}


@pytest.mark.parametrize("name", REFUSED)
def test_invalid_arguments_are_torchs_type_error(name):
    same_message(REFUSED[name], TypeError)


ACCEPTED = {
    "bools": lambda L: L.bucketize(L.tensor(T), L.tensor(B), out_int32=True, right=False),
    "number": lambda L: L.bucketize(0.5, L.tensor(B), right=True),
    "numpy scalar": lambda L: L.bucketize(np.float32(0.5), L.tensor(B)),
    "bool number": lambda L: L.bucketize(True, L.tensor(B)),
    "side and right agree": lambda L: L.searchsorted(L.tensor(B), L.tensor(T), side=None,
                                                     right=False),
    "side": lambda L: L.searchsorted(L.tensor(B), L.tensor(T), side="right"),
    "sorter": lambda L: L.searchsorted(L.tensor([4.0, 1.0, 3.0]), L.tensor([2.5]),
                                       sorter=L.tensor([1, 2, 0])),
    "bool in int sequence": lambda L: L.searchsorted(L.tensor([1, 2, 3]), True),
    "bool tensor in int sequence": lambda L: L.searchsorted(L.tensor([1, 2, 3]),
                                                            L.tensor(True)),
    "keywords by name": lambda L: L.bucketize(input=L.tensor(T), boundaries=L.tensor(B),
                                              right=True),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_valid_arguments_give_torchs_result(name):
    same_result(ACCEPTED[name])


def test_bool_sequence_is_still_refused():
    same_message(lambda L: L.searchsorted(L.tensor([True, False]), True), NotImplementedError)


def test_side_words_are_torchs():
    same_message(lambda L: L.searchsorted(L.tensor(B), L.tensor(T), side="middle"))
    same_message(lambda L: L.searchsorted(L.tensor(B), L.tensor(T), side="left", right=True))
