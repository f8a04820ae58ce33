"""Sliding-window views (Tensor.unfold, as_strided) refuse bad sizes in torch's words and
order of checks: the size against the dim first, then its sign, then the step."""

import pytest
import torch

import ember

from helpers import assert_same, same_message


@pytest.mark.parametrize("shape,dim,size,step", [
    ((10, 3), 0, -1, 1), ((10, 3), 0, -2, 0), ((10, 3), 1, 4, 0), ((10, 3), 0, 11, 0),
    ((), 0, -1, 1), ((), 0, 2, 1), ((10, 3), -1, 2, -3)])
def test_unfold_checks_size_then_sign_then_step(shape, dim, size, step):
    same_message(lambda L: L.zeros(shape).unfold(dim, size, step))


@pytest.mark.parametrize("shape,dim,size,step", [
    ((10, 3), 0, 0, 2), ((10, 3), 1, 0, 1), ((10, 3), 0, 10, 1), ((), 0, 1, 1),
    ((10, 3), 0, 3, 4)])
def test_unfold_edge_sizes_match_torch(shape, dim, size, step):
    # (a copy of arange: exact)
    def run(L):
        x = L.arange(int(torch.Size(shape).numel()), dtype=L.float32).reshape(shape)
        w = x.unfold(dim, size, step)
        return w, w.stride()

    (e, e_stride), (t, t_stride) = run(ember), run(torch)
    assert_same(e, t)
    assert e_stride == t_stride


@pytest.mark.parametrize("size,stride", [((4, 3), (3,)), ((2,), (1, 1)), ((), (1,))])
def test_as_strided_rank_mismatch_message(size, stride):
    msg = same_message(lambda L: L.zeros(10, 3).as_strided(size, stride))
    assert msg == "mismatch in length of strides and shape"
    same_message(lambda L: L.as_strided(L.zeros(10, 3), size, stride, 1))
