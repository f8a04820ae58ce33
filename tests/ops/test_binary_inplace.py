"""In-place binary ops (binary_inplace.py) against PyTorch: the order of their refusals on
integer and bool tensors."""

import pytest

from helpers import same_message, same_result


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([True, False]).pow_(-1),
    lambda L: L.tensor([3, 2], dtype=L.int8).pow_(-1),
    lambda L: L.tensor([3, 2], dtype=L.uint8).pow_(-2),
    lambda L: L.tensor([True]).pow_(L.tensor([-1])),
    lambda L: L.tensor([True]).pow_(2),
    lambda L: L.tensor([True]).pow_(2.0),
    lambda L: L.tensor([3], dtype=L.int16).pow_(1.5),
])
def test_pow_refusals_in_torch_order(call):
    # NOTE: PyTorch refuses a negative integer exponent before it checks that the result
    # (int64 for a bool tensor) can be written back into the tensor.
    same_message(call)


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([3, 2], dtype=L.int8).pow_(L.tensor(-1)),
    lambda L: L.tensor([3, 2, 7], dtype=L.int8).pow_(3),
    lambda L: L.tensor([3, 2, 7], dtype=L.uint8).pow_(L.tensor([1, 2, 3], dtype=L.uint8)),
])
def test_integer_pow_in_place_like_torch(call):
    # (an exponent tensor of -1 is no Python number: PyTorch's kernel gives 3 ** -1 == 0)
    same_result(call)


def _grad_self(L, shape):
    """A non-leaf tensor in the graph (in-place ops on it are recorded)."""
    return L.ones(shape, requires_grad=True).clone()


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "in_graph"])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_", "__iadd__", "__imul__"])
@pytest.mark.parametrize("shapes", [((2,), (3,)), ((2, 3), (3, 2)), ((2, 1), (3,)),
                                    ((2,), (4, 2)), ((1, 3), (2, 3))],
                         ids=["mismatch", "mismatch_2d", "larger", "more_dims", "wider"])
def test_shapes_refused_as_torch_words_them(op, shapes, grad):
    # Operands that do not broadcast: the out-of-place op's "The size of tensor a ...";
    # a broadcast result larger than self: the in-place op's "output with shape ...".
    # (Before, the first read as the second, and in the graph NumPy's ValueError escaped.)
    sa, sb = shapes
    same_message(lambda L: getattr(_grad_self(L, sa) if grad else L.ones(sa), op)(L.ones(sb)))


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_"])
def test_shape_is_checked_before_the_cast_into_self(op):
    # PyTorch's iterator settles the shape before the result dtype: an int64 self and a float
    # operand of a shape that does not broadcast fail on the shape, not on the cast.
    same_message(lambda L: getattr(L.zeros(4, dtype=L.int64), op)(L.ones(3)))
    same_message(lambda L: getattr(L.zeros(4, 1, dtype=L.int64), op)(L.ones(4, 3)))
    # equal shapes still refuse the cast
    same_message(lambda L: getattr(L.zeros(3, dtype=L.int64), op)(L.ones(3)))


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_"])
def test_broadcast_into_self_still_works_in_the_graph(op):
    # (the shape check added no refusal: a smaller operand broadcasts into self, with grads)
    def call(L):
        x = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = getattr(x.clone(), op)(L.tensor([0.5, -1.0, 2.0]))
        y.sum().backward()
        return y.detach(), x.grad
    same_result(call)
