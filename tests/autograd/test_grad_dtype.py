"""A leaf's `grad_dtype` (torch 2.13): the dtype its gradients are cast to on arrival, or None
for any. Each case runs the same code under torch and ember and compares what it prints."""
import copy

import pytest
import torch

import ember

from ..helpers import raised


def _leaf(lib, dtype=None):
    lib.manual_seed(0)
    return lib.randn(3, requires_grad=True, dtype=dtype)


def _cast_on_backward(lib):
    x = _leaf(lib)
    x.grad_dtype = lib.float64
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x.grad_dtype, x.grad.dtype, x.grad.tolist()


def _default_and_any(lib):
    x = _leaf(lib)
    first = x.grad_dtype
    x.grad_dtype = None
    x.grad = lib.ones(3, dtype=lib.float64)  # None allows any dtype
    (x * 2).sum().backward()  # float32 gradient added into the float64 one
    return first, x.grad_dtype, x.grad.dtype, x.grad.tolist()


def _hooks_and_grad(lib):
    x = _leaf(lib)
    x.grad_dtype = lib.float16
    seen = []
    x.register_hook(lambda g: seen.append(g.dtype))
    (g,) = lib.autograd.grad((x * 2).sum(), x)
    return seen, g.dtype, g.tolist()


def _not_copied(lib):
    x = _leaf(lib)
    x.grad_dtype = lib.float64
    p = lib.nn.Parameter(lib.ones(2))
    p.grad_dtype = lib.bfloat16
    (p * 3).sum().backward()
    return x.detach().grad_dtype, copy.deepcopy(x).grad_dtype, p.grad.dtype, p.grad.tolist()


@pytest.mark.parametrize("case", [_cast_on_backward, _default_and_any, _hooks_and_grad,
                                  _not_copied])
def test_grad_dtype_behaves_as_torch(case):
    assert str(case(ember)) == str(case(torch)).replace("torch.", "ember.")


def _refusals(lib):
    x = _leaf(lib)
    out = [raised(lambda: (x * 2).grad_dtype),
           raised(lambda: setattr(x * 2, "grad_dtype", lib.float64)),
           raised(lambda: setattr(x, "grad_dtype", 3))]
    x.grad_dtype = lib.float16
    out.append(raised(lambda: setattr(x, "grad", lib.ones(3))))
    x.grad_dtype = None
    x.grad = lib.ones(3)
    out.append(raised(lambda: setattr(x, "grad_dtype", lib.int64)))
    return out


def test_grad_dtype_refusals_as_torch():
    assert _refusals(ember) == _refusals(torch)


def test_integer_grad_dtype_refused_at_backward():
    # torch fails an internal assert here; ember says what is wrong
    x = _leaf(ember)
    x.grad_dtype = ember.int64
    with pytest.raises(RuntimeError, match="floating point or complex"):
        (x * 2).sum().backward()
