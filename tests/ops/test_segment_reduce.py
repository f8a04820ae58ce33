"""torch.segment_reduce against torch 2.13: values, gradients, node name, errors."""

import numpy as np
import pytest
import torch

import ember

REDUCES = ["sum", "mean", "max", "min", "prod", "amax", "amin"]


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


def _compare(data, reduce, grad=True, **kw):
    d = data.clone().requires_grad_(grad)
    de = E(d, grad)
    ekw = {k: E(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    t = torch.segment_reduce(d, reduce, **kw)
    e = ember.segment_reduce(de, reduce, **ekw)
    assert tuple(e.shape) == tuple(t.shape)
    # NOTE: float64 data; sums of a few terms in order: exact up to 1e-12
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    if grad:
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
        w = torch.randn(t.shape, dtype=t.dtype, generator=torch.Generator().manual_seed(1))
        (t.nan_to_num(0, 0, 0) * w).sum().backward()
        (e.nan_to_num(0, 0, 0) * E(w)).sum().backward()
        np.testing.assert_allclose(de.grad.numpy(), d.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("initial", [None, 10.0, -2.5])
def test_lengths_1d(reduce, initial):
    data = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=torch.float64)
    _compare(data, reduce, lengths=torch.tensor([2, 0, 3, 1]), initial=initial)


@pytest.mark.parametrize("reduce", REDUCES)
def test_offsets_and_trailing_dims(reduce):
    g = torch.Generator().manual_seed(0)
    data = torch.randn(6, 3, dtype=torch.float64, generator=g)
    _compare(data, reduce, offsets=torch.tensor([0, 2, 2, 5, 6]))
    _compare(data, reduce, offsets=torch.tensor([1, 4]))  # (a start past 0: rows skipped)
    _compare(data, reduce, lengths=torch.tensor([4, 2]), offsets=torch.tensor([0, 6]))


@pytest.mark.parametrize("reduce", REDUCES)
def test_lengths_along_an_inner_axis(reduce):
    g = torch.Generator().manual_seed(2)
    data = torch.randn(2, 3, 2, dtype=torch.float64, generator=g)
    _compare(data, reduce, lengths=torch.tensor([[2, 1], [3, 0]]), axis=1)


def test_max_ties_share_the_gradient():
    _compare(torch.tensor([1.0, 3.0, 3.0, 2.0], dtype=torch.float64), "max",
             lengths=torch.tensor([3, 1]))
    _compare(torch.tensor([1.0, 0.0, 3.0, 2.0], dtype=torch.float64), "prod",
             lengths=torch.tensor([3, 1]))


@pytest.mark.parametrize("kw", [dict(lengths=torch.tensor([2, 2])), dict(),
                                dict(lengths=torch.tensor([7, -1])),
                                dict(lengths=torch.tensor([2.0, 4.0])),
                                dict(lengths=torch.tensor([2, 4]), axis=1),
                                dict(indices=torch.tensor([0, 0, 1, 1, 1, 1]))])
def test_errors(kw):
    d = torch.arange(6.0)
    with pytest.raises(Exception) as want:
        torch.segment_reduce(d, "sum", **kw)
    ekw = {k: E(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    with pytest.raises(type(want.value)) as got:
        ember.segment_reduce(E(d), "sum", **ekw)
    assert str(got.value) == str(want.value)


def test_bad_reduce_and_dtype():
    for args, exc in (((torch.arange(6.0), "foo"), RuntimeError),
                      ((torch.arange(6), "sum"), NotImplementedError)):
        with pytest.raises(exc) as want:
            torch.segment_reduce(*args, lengths=torch.tensor([6]))
        with pytest.raises(exc) as got:
            ember.segment_reduce(E(args[0]), args[1], lengths=ember.tensor([6]))
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "prod"])
@pytest.mark.parametrize("initial", [None, 0.3, -2.5])
def test_rounding_follows_the_kernel_order(dtype, reduce, initial):
    # PyTorch's kernel starts at `initial` and rounds every step to the dtype: with long
    # segments any other order or a wider accumulator moves the last bits
    g = torch.Generator().manual_seed(3)
    x = torch.randn(200, generator=g) * 100
    x = (1 + x / 1000) if reduce == "prod" else x
    lens = torch.tensor([50, 0, 70, 80])
    t = torch.segment_reduce(x.to(getattr(torch, dtype)), reduce, lengths=lens, initial=initial)
    e = ember.segment_reduce(E(x).to(getattr(ember, dtype)), reduce, lengths=E(lens),
                             initial=initial)
    # NOTE: same additions in the same order, each correctly rounded: bit-equal (an empty
    # segment's mean is NaN in both)
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("initial", [2.0, 0.0, -1.0])
def test_a_tie_with_initial_leaves_the_gradient_to_the_elements(reduce, initial):
    _compare(torch.tensor([1.0, 2.0, 2.0, 0.0, 3.0, -1.0], dtype=torch.float64), reduce,
             lengths=torch.tensor([3, 0, 1, 2]), initial=initial)


def test_initial_that_overflows_the_dtype():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="cannot be converted to type c10::Half"):
            lib.segment_reduce(lib.ones(4, dtype=lib.float16), "sum",
                               lengths=lib.tensor([2, 2]), initial=1e5)
