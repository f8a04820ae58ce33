"""In-place view ops (t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_,
as_strided_) and type_as against torch: shapes, strides, values, storage sharing, version
counters, gradients through them and the exceptions they raise."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, same_error

A = np.arange(24, dtype=np.float64).reshape(2, 3, 4)

CASES = [
    ("t_", np.arange(6.0).reshape(2, 3), ()),
    ("t_", np.arange(3.0), ()),
    ("transpose_", A, (0, 2)),
    ("transpose_", A, (-1, 1)),
    ("swapaxes_", A, (0, 1)),
    ("swapdims_", A, (2, 0)),
    ("squeeze_", A[:, :1], ()),
    ("squeeze_", A[:, :1], (1,)),
    ("squeeze_", A[:, :1], (0,)),
    ("squeeze_", A[:1, :1], ((0, 1),)),
    ("unsqueeze_", A, (0,)),
    ("unsqueeze_", A, (-1,)),
    ("as_strided_", A, ((3, 2), (1, 3))),
    ("as_strided_", A, ((2, 2), (4, 1), 5)),
]


@pytest.mark.parametrize("name,arr,args", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_inplace_view_matches_torch(name, arr, args):
    out = {}
    for L in (torch, ember):
        x = L.tensor(np.ascontiguousarray(arr))
        ptr, v0 = x.data_ptr(), x._version
        r = getattr(x, name)(*args)
        assert r is x
        assert x.data_ptr() - ptr == x.storage_offset() * x.element_size()  # same memory
        out[L] = (x, x.stride(), x._version - v0)
    assert_same(out[ember][0], out[torch][0], check_stride=True)
    assert out[ember][2] == out[torch][2]


@pytest.mark.parametrize("name,arr,args", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_gradient_through_inplace_view(name, arr, args):
    grads, nodes = {}, {}
    for L in (torch, ember):
        leaf = L.tensor(np.ascontiguousarray(arr), requires_grad=True)
        y = leaf * 2
        getattr(y, name)(*args)
        nodes[L] = y.grad_fn.name()  # the in-place overload's node (TBackward1 ...)
        (y * L.arange(float(y.numel()), dtype=L.float64).reshape(y.shape)).sum().backward()
        grads[L] = leaf.grad
    assert nodes[ember] == nodes[torch]
    assert_same(grads[ember], grads[torch])


def test_inplace_view_leaves_the_out_of_place_node_name_alone():
    y = ember.ones(2, 3, requires_grad=True) * 2
    assert y.t().grad_fn.name() == "TBackward0"
    y.t_()
    assert y.grad_fn.name() == "TBackward1"
    assert y.t().grad_fn.name() == "TBackward0"


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, 3, requires_grad=True).t_(),            # a leaf that requires grad
    lambda L: L.ones(2, 3, 4).t_(),                             # t_ wants <= 2 dims
    lambda L: L.ones(2, 3).transpose_(0, 5),
    lambda L: L.ones(2, 3).unsqueeze_(4),
    lambda L: L.ones(2, 3).squeeze_(3),
    lambda L: L.ones(2).type_as(3),
])
def test_errors_match(call):
    same_error(call)


def test_view_of_a_tensor_stays_a_view():
    for L in (torch, ember):
        base = L.zeros(2, 3)
        row = base[1:2]
        row.squeeze_(0)
        row.fill_(5.0)
        assert row._base is base and tuple(row.shape) == (3,)
        assert base[1].tolist() == [5.0, 5.0, 5.0]


def test_inplace_view_under_no_grad_on_a_leaf():
    for L in (torch, ember):
        x = L.ones(2, 3, requires_grad=True)
        with L.no_grad():
            x.t_()
        assert tuple(x.shape) == (3, 2) and x.is_leaf and x.requires_grad


@pytest.mark.parametrize("src,dst", [(ember.float32, ember.int32), (ember.int64, ember.float64),
                                     (ember.bool, ember.float16), (ember.float64, ember.float64)])
def test_type_as_matches_torch(src, dst):
    from helpers import E2T

    e = ember.tensor([1.5, 0.0, -2.0]).to(src)
    t = torch.tensor([1.5, 0.0, -2.0]).to(E2T[src])
    assert_same(e.type_as(ember.ones(1, dtype=dst)), t.type_as(torch.ones(1, dtype=E2T[dst])))
    if src == dst:
        assert e.type_as(ember.ones(1, dtype=dst)) is e


def test_type_as_gradient():
    for L in (torch, ember):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.type_as(L.ones(1, dtype=L.float64))
        (y * y).sum().backward()
        assert x.grad.dtype == L.float32 and x.grad.tolist() == [2.0, 4.0]
