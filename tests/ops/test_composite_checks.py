"""Argument checks of the composites in ops/composite.py against torch."""

from __future__ import annotations

from helpers import same_message, same_result


def test_tri_indices_refuse_negative_sizes_and_non_integer_dtypes():
    for call in (lambda L: L.tril_indices(-1, 3), lambda L: L.triu_indices(2, -2)):
        same_message(call)
    for name in ("tril_indices", "triu_indices"):
        for dtype in ("float32", "bool", "complex64"):
            same_message(lambda L, n=name, d=dtype: getattr(L, n)(2, 2, dtype=getattr(L, d)),
                         NotImplementedError)
    same_result(lambda L: L.tril_indices(3, 2, -1, dtype=L.int32))


def test_isin_takes_a_number_on_one_side_only():
    same_result(lambda L: L.isin(3, L.tensor([1, 3])))
    same_result(lambda L: L.isin(L.tensor([1, 3]), 3, invert=True))
    for call in (lambda L: L.isin(3, 3), lambda L: L.isin(3, 3, invert=True),
                 lambda L: L.isin([1, 2], L.tensor([1]))):
        same_message(call, TypeError)


def test_histogram_as_a_method():
    x = [1.0, 2.0, 1.0, 4.0]
    same_result(lambda L: L.tensor(x).histogram(3))
    same_result(lambda L: L.tensor(x).histogram(bins=2, range=(0.0, 4.0), density=True))
    same_result(lambda L: L.tensor(x).histogram(L.tensor([0.0, 2.0, 5.0]), density=True))
