"""shape_helpers.py against torch: hsplit / vsplit / dsplit, atleast_*, unravel_index."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, check_op


@pytest.mark.parametrize("name,arg", [("hsplit", 2), ("hsplit", [1, 3]), ("vsplit", [1]),
                                      ("vsplit", 2), ("dsplit", [1, 2])])
def test_splits(name, arg):
    a = np.arange(2 * 4 * 4, dtype=np.float64).reshape(2, 4, 4)
    check_op(lambda x: getattr(ember, name)(x, arg), lambda x: getattr(torch, name)(x, arg), a)
    check_op(lambda x: getattr(x, name)(arg), lambda x: getattr(x, name)(arg), a)
    check_op(lambda x: ember.hsplit(x, 2), lambda x: torch.hsplit(x, 2), np.arange(4.0))


def test_atleast_many_and_sequence():
    a, b = np.array(1.0), np.arange(3.0)
    check_op(lambda x, y: ember.atleast_2d(x, y), lambda x, y: torch.atleast_2d(x, y), a, b)
    check_op(lambda x, y: ember.atleast_3d([x, y]), lambda x, y: torch.atleast_3d([x, y]), a, b)
    e = ember.ones(2, 3)
    assert ember.atleast_2d(e) is e


@pytest.mark.parametrize("idx,shape", [([5, 7, 0], (2, 4)), (3, (4,)), ([[1, 5], [6, 0]],
                                                                       (2, 1, 4)),
                                       ([-1, -8], (2, 4)), ([], (3, 3)),
                                       ([4, 9, -1, -5], (2, 2))])
def test_unravel_index(idx, shape):
    e = ember.unravel_index(ember.tensor(idx, dtype=ember.int64), shape)
    t = torch.unravel_index(torch.tensor(idx, dtype=torch.int64), shape)
    assert_same(e, t)


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("given", ["second", "in_list", "in_tuple", "nested", "alone", "none"])
def test_atleast_refuses_non_tensors_in_pytorch_words(name, given):
    """An element's position counts within the one list given; a lone non-Tensor matches
    neither overload."""
    msgs = []
    for L in (torch, ember):
        a = L.ones(2)
        args = {"second": (a, 3), "in_list": ([a, 3],), "in_tuple": ((3,),),
                "nested": ([[a]],), "alone": (3,), "none": (None,)}[given]
        with pytest.raises(TypeError) as info:
            getattr(L, name)(*args)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]
