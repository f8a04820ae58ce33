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


# --- set_ and is_set_to -------------------------------------------------------------------

@pytest.mark.parametrize("how", [
    lambda L, a: L.empty(0).set_(a),
    lambda L, a: L.empty(0).set_(a[2:]),
    lambda L, a: L.empty(0).set_(a.t()),
    lambda L, a: L.empty(0).set_(a.untyped_storage()),
    lambda L, a: L.empty(0).set_(a.untyped_storage(), 1, (2, 2)),
    lambda L, a: L.empty(0).set_(a.untyped_storage(), 1, (2, 2), (1, 2)),
    lambda L, a: L.empty(0).set_(a.untyped_storage(), storage_offset=2, size=(2,)),
    lambda L, a: L.empty(0).set_(a, 1, (3,), (2,)),
    lambda L, a: L.ones(3).set_(),
    lambda L, a: L.empty(0, dtype=L.int32).set_(a.untyped_storage(), 0, (2,)),  # reinterpret
])
def test_set_shares_storage_as_torch(how):
    results = []
    for L in (torch, ember):
        a = L.arange(6.0).reshape(2, 3)
        t = how(L, a)
        results.append((t.tolist(), tuple(t.shape), t.stride(), t.storage_offset(), t._version))
        if t.numel():
            t.fill_(100)  # (writes through `t` reach `a`)
            results.append(a.tolist())
        same_storage = t.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
        results.append(same_storage or t.numel() == 0)
    n = len(results) // 2
    assert results[:n] == results[n:]


def test_set_from_typed_storage():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (TypedStorage's deprecation)
        for L in (torch, ember):
            a = L.arange(4.0)
            assert L.empty(0).set_(a.storage()).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_set_grows_the_storage():
    for L in (torch, ember):
        a = L.arange(6.0)
        t = L.empty(0).set_(a.untyped_storage(), 0, (10,))
        assert t.tolist()[:6] == a.tolist() and a.untyped_storage().nbytes() == 40


def test_is_set_to():
    for L in (torch, ember):
        a = L.arange(6.0)
        t = L.empty(0).set_(a)
        assert t.is_set_to(a) and a.is_set_to(t)
        assert not a[2:].is_set_to(a) and a[2:].is_set_to(a[2:])
        assert not a.view(2, 3).is_set_to(a)  # (same elements, another shape)
        assert not L.empty(0).is_set_to(L.empty(0))
        e = L.empty(0)
        assert e.is_set_to(e)


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.empty(0, dtype=L.float64).set_(L.arange(6.0)), RuntimeError),
    (lambda L: L.zeros(2, requires_grad=True).set_(L.arange(6.0)), RuntimeError),
    (lambda L: L.empty(0).set_(3), TypeError),
    (lambda L: L.empty(0).set_(L.arange(6.0), 0), TypeError),
    (lambda L: L.empty(0).set_(L.arange(6.0).untyped_storage(), -1, (2,)), RuntimeError),
])
def test_set_refusals(call, kind):
    msgs = []
    for L in (torch, ember):
        with pytest.raises(kind) as exc:
            call(L)
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1]


def test_set_refuses_a_typed_storage_of_another_dtype():
    import warnings

    msgs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for L in (torch, ember):
            with pytest.raises(RuntimeError) as exc:
                L.empty(0, dtype=L.int64).set_(L.arange(6.0).storage())
            msgs.append(str(exc.value))
    assert msgs[0] == msgs[1]
