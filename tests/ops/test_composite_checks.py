"""Argument checks of the composites in ops/composite.py against torch."""

from __future__ import annotations

import torch

import ember

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


def test_diff_checks_prepend_and_append_shapes_dim_by_dim():
    for pre_shape, dim in [((4, 2), 0), ((2, 6), 1), ((3, 5), 0), ((3, 5), 1)]:
        for side in ("prepend", "append"):
            same_message(lambda L, s=pre_shape, d=dim, k=side: L.diff(
                L.arange(24.0).reshape(4, 6), dim=d, **{k: L.zeros(s)}))
    # shapes that differ only along the differencing dim are joined
    same_result(lambda L: L.diff(L.arange(24.0).reshape(4, 6), dim=1, prepend=L.zeros(4, 2),
                                 append=L.ones(4, 1)))
    assert ember.diff(ember.arange(3.0), n=2).tolist() == torch.diff(
        torch.arange(3.0), n=2).tolist()


def test_diff_argument_types():
    for kw in ({"n": 1.0}, {"dim": 0.0}, {"n": True}, {"prepend": [1.0]}, {"append": 1.0}):
        same_message(lambda L, kw=kw: L.diff(L.arange(6.0), **kw), TypeError)
