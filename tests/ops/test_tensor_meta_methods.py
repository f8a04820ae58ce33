"""Tensor.resize / resize_as / dim_order / const_data_ptr / as_subclass against torch."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _pair(shape, make=None):
    t = torch.arange(float(np.prod(shape))).reshape(shape)
    return t, ember.tensor(t.numpy())


def test_resize_values_alias_warning_and_grad():
    t, e = _pair((2, 3))
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        rt = t.resize(3, 2)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        re_ = e.resize(3, 2)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert got[0].category is want[0].category and got[0].filename == __file__
    np.testing.assert_array_equal(re_.numpy(), rt.numpy())
    assert (re_.data_ptr() == e.data_ptr()) == (rt.data_ptr() == t.data_ptr())
    xt = torch.randn(2, 3, requires_grad=True)
    xe = ember.tensor(xt.detach().numpy(), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt, ye = xt.t().resize(3, 2), xe.t().resize(3, 2)
        zt = xt.resize_as(torch.zeros(6))
        ze = xe.resize_as(ember.zeros(6))
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(ze.detach().numpy(), zt.detach().numpy())
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__ == "ResizeBackward"
    w = torch.randn(3, 2)
    (yt * w).sum().backward()
    (ye * ember.tensor(w.numpy())).sum().backward()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


def test_resize_refuses_another_count():
    t, e = _pair((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as want:
            t.resize(4, 2)
        with pytest.raises(RuntimeError) as got:
            e.resize(4, 2)
    assert str(got.value) == str(want.value)


LAYOUTS = [
    ((2, 3), lambda x: x), ((2, 3), lambda x: x.t()),
    ((2, 3, 4, 5), lambda x: x.permute(0, 2, 3, 1)),
    ((2, 3, 4, 5), lambda x: x.permute(0, 3, 1, 2)), ((2, 1, 3), lambda x: x),
    ((1, 2, 3, 4), lambda x: x), ((2, 3), lambda x: x[:, ::2]), ((), lambda x: x),
    ((4,), lambda x: x), ((3, 3), lambda x: x.expand(2, 3, 3)),
    ((2, 2, 2), lambda x: x.transpose(0, 2)), ((1, 3, 1, 2), lambda x: x.permute(0, 2, 3, 1)),
    ((2, 3, 4, 5), lambda x: x.contiguous(memory_format=torch.channels_last)
     if isinstance(x, torch.Tensor) else x.contiguous(memory_format=ember.channels_last)),
]


@pytest.mark.parametrize("shape,fn", LAYOUTS)
@pytest.mark.parametrize("check", [False, True, "cl"])
def test_dim_order(shape, fn, check):
    t, e = _pair(shape)
    t, e = fn(t), fn(e)
    assert e.stride() == t.stride()
    kw_t = {"ambiguity_check": [torch.contiguous_format, torch.channels_last]
            if check == "cl" else check}
    kw_e = {"ambiguity_check": [ember.contiguous_format, ember.channels_last]
            if check == "cl" else check}
    try:
        want = t.dim_order(**kw_t)
    except RuntimeError as err:
        with pytest.raises(RuntimeError) as got:
            e.dim_order(**kw_e)
        assert str(got.value) == str(err)
        return
    assert e.dim_order(**kw_e) == want


def test_dim_order_bad_check():
    for bad in ("ILLEGAL", [1]):
        with pytest.raises(TypeError) as want:
            torch.zeros(2).dim_order(ambiguity_check=bad)
        with pytest.raises(TypeError) as got:
            ember.zeros(2).dim_order(ambiguity_check=bad)
        assert str(got.value) == str(want.value)


def test_const_data_ptr():
    e = ember.arange(6.0)[2:]
    assert e.const_data_ptr() == e.data_ptr()


def test_as_subclass_is_an_alias_in_the_graph():
    class T(torch.Tensor):
        pass

    class S(ember.Tensor):
        pass

    xt = torch.randn(2, 3, requires_grad=True)
    xe = ember.tensor(xt.detach().numpy(), requires_grad=True)
    st, se = xt.as_subclass(T), xe.as_subclass(S)
    assert type(se) is S and se._base is xe and st._base is xt
    assert type(se.grad_fn).__name__ == type(st.grad_fn).__name__ == "AliasBackward0"
    (st * 2).sum().backward()
    (se * 2).sum().backward()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())
    p = ember.zeros(2)
    q = p.as_subclass(S)
    p.add_(1)
    assert q._version == 1 and q.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError) as want:
        torch.zeros(1).as_subclass(int)
    with pytest.raises(TypeError) as got:
        ember.zeros(1).as_subclass(int)
    assert str(got.value) == str(want.value)
