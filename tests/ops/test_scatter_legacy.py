"""scatter / scatter_ with the deprecated reduce='add' | 'multiply' against torch 2.13:
values over dtypes and forms, and PyTorch's missing derivative (NotImplemented node)."""

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")

G = torch.Generator().manual_seed(0)
IDX = torch.tensor([[0, 2, 1], [2, 2, 0], [0, 0, 0]])


def E(t):
    return ember.tensor(t.numpy())


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64,
                                   torch.int32])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_values(reduce, dtype, dim):
    x = (torch.rand(3, 4, generator=G) * 4 - 2).to(dtype)
    src = (torch.rand(3, 5, generator=G) * 4 - 2).to(dtype)  # larger than the index
    want = x.scatter(dim, IDX, src, reduce=reduce)
    got = E(x).scatter(dim, E(IDX), E(src), reduce=reduce)
    # NOTE: a product or sum of at most 4 terms per slot, accumulated in float32 for
    # float16 as PyTorch's kernel does: bit-equal in every dtype.
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    want_v = x.clone().scatter_(dim, IDX, 1.5, reduce=reduce)
    got_v = E(x).clone().scatter_(dim, E(IDX), 1.5, reduce=reduce)
    np.testing.assert_array_equal(got_v.numpy(), want_v.numpy())
    assert str(got_v.dtype).split(".")[-1] == str(want_v.dtype).split(".")[-1]


def _grad_case(lib, tensor, value: bool, inplace: bool):
    x = lib.zeros(3, requires_grad=True).clone()
    src = 2.0 if value else lib.ones(2, requires_grad=True)
    idx = tensor([0, 0])
    if inplace:
        out = x.scatter_(0, idx, src, reduce="multiply")
    else:
        out = x.scatter(0, idx, src, reduce="add")
    return out


@pytest.mark.parametrize("value", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_no_derivative(value, inplace):
    t = _grad_case(torch, torch.tensor, value, inplace)
    e = _grad_case(ember, ember.tensor, value, inplace)
    assert e.requires_grad and t.requires_grad
    assert e.grad_fn.name() == t.grad_fn.name() == "torch::autograd::NotImplemented"
    assert len(e.grad_fn.next_functions) == len(t.grad_fn.next_functions)
    with pytest.raises(RuntimeError) as want:
        t.sum().backward()
    with pytest.raises(RuntimeError) as got:
        e.sum().backward()
    aten = "scatter_" if inplace else "scatter"  # (the in-place overload names itself)
    assert str(got.value) == str(want.value) == f"derivative for aten::{aten} is not implemented"


def test_forward_mode_refuses():
    import torch.autograd.forward_ad as tfw

    import ember.autograd.forward_ad as efw

    msgs = []
    for lib, fw in ((torch, tfw), (ember, efw)):
        with fw.dual_level():
            x = fw.make_dual(lib.zeros(3), lib.ones(3))
            with pytest.raises(NotImplementedError) as err:
                x.scatter(0, lib.tensor([0]), lib.ones(1), reduce="add")
            msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_bad_reduce_name():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
            lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1), reduce="sum")
