"""gradcheck / gradgradcheck: PyTorch's signature, return value and raising behaviour."""

import inspect

import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import GradcheckError

from helpers import rand_array


def inputs(*shapes, dtype=np.float64):
    return tuple(ember.tensor(rand_array(s, dtype, seed=i), requires_grad=True)
                 for i, s in enumerate(shapes))


class WrongBackward(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class WrongSecondDerivative(ember.autograd.Function):
    """Right first derivative (of x**2); its backward uses a detached x, so the second is 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x.detach()


def test_signatures_match_torch():
    for name in ("gradcheck", "gradgradcheck"):
        ours = inspect.signature(getattr(ember.autograd, name))
        theirs = inspect.signature(getattr(torch.autograd, name))
        assert list(ours.parameters) == list(theirs.parameters)
        for p in theirs.parameters.values():
            assert ours.parameters[p.name].default == p.default
            assert ours.parameters[p.name].kind == p.kind


def test_correct_gradients_pass():
    a, b = inputs((3, 4), (4, 2))
    assert ember.autograd.gradcheck(lambda x, w: (x @ w).sigmoid(), (a, b)) is True
    assert ember.autograd.gradcheck(lambda x, w: (x @ w).sigmoid(), (a, b), fast_mode=True)
    assert ember.autograd.gradgradcheck(lambda x, w: (x @ w).sigmoid(), (a, b)) is True


def test_several_outputs_and_non_tensor_arguments():
    (a,) = inputs((4,))
    assert ember.autograd.gradcheck(lambda x, k: (x * k, (x ** 2).sum(), x.argmax()), (a, 3.0))


def test_wrong_backward_raises_gradcheck_error():
    (x,) = inputs((3,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0") as e:
        ember.autograd.gradcheck(WrongBackward.apply, (x,))
    assert isinstance(e.value, RuntimeError)
    assert "numerical:" in str(e.value) and "analytical:" in str(e.value)
    assert ember.autograd.gradcheck(WrongBackward.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError):
        ember.autograd.gradcheck(WrongBackward.apply, (x,), fast_mode=True)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    (x,) = inputs((3,))
    assert ember.autograd.gradcheck(WrongSecondDerivative.apply, (x,))
    with pytest.raises(GradcheckError):
        ember.autograd.gradgradcheck(WrongSecondDerivative.apply, (x,))
    assert not ember.autograd.gradgradcheck(WrongSecondDerivative.apply, (x,),
                                            raise_exception=False)


def test_float32_inputs_warn():
    (x,) = inputs((3,), dtype=np.float32)
    with pytest.warns(UserWarning, match="is not a double precision floating point"):
        ember.autograd.gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_no_input_requires_grad():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
            m.autograd.gradcheck(lambda t: t * 2, (m.ones(2, dtype=m.float64),))


def test_gradcheck_leaves_inputs_unchanged():
    (x,) = inputs((2, 3))
    before = x.detach().numpy().copy()
    ember.autograd.gradcheck(lambda t: t.exp(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == 0 and x.grad is None
