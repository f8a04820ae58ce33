"""narrow's and unflatten's argument checks, in PyTorch's order and words (the shapes a
user gets wrong when slicing windows or splitting a dim)."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, same_message, same_result


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.ones(3, 4).narrow(1, 0, -1), RuntimeError),
    (lambda L: L.ones(3, 4).narrow(5, 9, -1), RuntimeError),  # length before the dim
    (lambda L: L.tensor(1.0).narrow(0, 0, -1), RuntimeError),  # 0-d before the length
    (lambda L: L.ones(3, 4).narrow(1, L.tensor(1.0), -1), RuntimeError),  # tensor start first
    (lambda L: L.ones(3, 4).narrow(1, L.tensor([1]), 1), RuntimeError),
    (lambda L: L.ones(3, 4).narrow(1, 9, 1), IndexError),
    (lambda L: L.ones(3, 4).narrow(1, 2, 5), RuntimeError),
    (lambda L: L.ones(3, 4).narrow(1, 1.5, 1), TypeError),
    (lambda L: L.ones(3, 4).narrow(1, 1, 2.0), TypeError),  # was a tensor of float shape
    (lambda L: L.ones(3, 4).narrow(1, 1, True), TypeError),
    (lambda L: L.ones(3, 4).narrow(1.0, 1, 1), TypeError),
    (lambda L: L.narrow(L.ones(3, 4), 1, 1.5, 1), TypeError),  # the function lists `input`
])
def test_narrow_refusals_in_torchs_words(call, kind):
    same_message(call, kind)


@pytest.mark.parametrize("call", [
    lambda L: L.arange(12.0).reshape(3, 4).narrow(1, L.tensor(-1), 1),
    lambda L: L.arange(12.0).reshape(3, 4).narrow(1, L.tensor(1, dtype=L.int8), 2),
    lambda L: L.arange(12.0).reshape(3, 4).narrow(L.tensor(1), 1, 2),
    lambda L: L.arange(12.0).reshape(3, 4).narrow(-1, -4, 2),
    lambda L: L.arange(12.0).reshape(3, 4).narrow(1, 4, 0),
])
def test_narrow_takes_what_torch_takes(call):
    out = same_result(call)
    assert out.stride() == call(torch).stride()


@pytest.mark.parametrize("call", [
    lambda L: L.ones(3, 4).unflatten(1, (3, 2)),
    lambda L: L.ones(3, 4).unflatten(-1, (3, -1)),  # the dim is printed wrapped
    lambda L: L.unflatten(L.ones(3, 4), 1, (5, 1)),
    lambda L: L.ones(4).view(2, -3),
    lambda L: L.ones(4).reshape(-2, -2),
])
def test_shape_refusals_in_torchs_words(call):
    same_message(call)


@pytest.mark.parametrize("sizes, cause", [
    ((-1, -1), "only one dimension can be inferred"),
    ((-2, 2), "invalid shape dimension -2 at index 0 of shape [-2, 2]"),
])
def test_unflatten_passes_other_shape_errors_on_behind_torchs_first_line(sizes, cause):
    # (torch's message goes on with a C++ stack trace; its first two lines are the words)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as err:
            lib.ones(3, 4).unflatten(1, sizes)
        assert str(err.value).split("\n")[:2] == ["unflatten got an unexpected error:", cause]


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, 3).expand(3),
    lambda L: L.ones(2, 3, dtype=L.int64).expand_as(L.ones(3)),
    lambda L: L.broadcast_to(L.ones(2, 3), (3,)),
    lambda L: L.ones(2, 3).expand(-1, -1, 3),
    lambda L: L.ones(2, 3).expand(2, -1, -1, 3),  # the dim is counted in the target
    lambda L: L.ones(2, 3).expand(2, 4),
])
def test_expand_refusals_in_torchs_words(call):
    same_message(call)


# --- split and its variants --------------------------------------------------------------

def test_split_variants_give_torchs_pieces_and_nodes():
    base = np.arange(10, dtype=np.float32).reshape(5, 2)

    def call(L, name, *args):
        x = L.tensor(base, requires_grad=True)
        pieces = getattr(L, name)(x, *args)
        return pieces, [type(p.grad_fn).__name__ for p in pieces]
    for name, args in (("split_with_sizes", ([2, 3],)), ("unsafe_split", (2,)),
                       ("unsafe_chunk", (2,)), ("unsafe_split_with_sizes", ([1, 4],)),
                       ("split_with_sizes", ((1, 1), 1))):
        (pe, ne), (pt, nt) = call(ember, name, *args), call(torch, name, *args)
        assert ne == nt
        for a, b in zip(pe, pt, strict=True):
            assert_same(a, b)
    same_result(lambda L: L.arange(5).split_with_sizes([1, 4])[1])


@pytest.mark.parametrize("call", [
    lambda L: L.split(L.arange(5.0), [3, -1]),
    lambda L: L.split_with_sizes(L.arange(5.0), [2, 2]),
    lambda L: L.tensor_split(L.arange(5.0), L.tensor([1.0, 2.0])),
    lambda L: L.tensor_split(L.arange(5.0), L.tensor([[1, 2]])),
])
def test_split_refusals_in_torchs_words(call):
    same_message(call)


@pytest.mark.parametrize("call", [
    lambda L: L.arange(5.0).split(L.tensor([2, 3])),
    lambda L: L.split(L.arange(5.0), 2.5),
    lambda L: L.split(L.arange(5.0), [2, 3.0]),
    lambda L: L.split_with_sizes(L.arange(5.0), 2),
])
def test_split_size_types_in_torchs_words(call):
    same_message(call, TypeError)


@pytest.mark.parametrize("args", [(0, 2.0, 1), (0.0, 2, 1), (0, 2, 1.0), (True, 2, 1),
                                  (0, True, 1), (0, 2, True), (0, "2", 1), (0, None, 1)])
def test_unfold_takes_ints_only(args):
    # (a float size used to slip through and leave floats in the shape)
    same_message(lambda L: L.arange(24.0).reshape(4, 6).unfold(*args), TypeError)


def test_unfold_takes_integer_likes_as_ints():
    for size in (np.int64(2), "tensor"):
        shape = same_result(lambda L, s=size: L.arange(24.0).reshape(4, 6).unfold(
            0, L.tensor(2) if s == "tensor" else s, 1)).shape
        assert tuple(shape) == (3, 6, 2) and all(type(n) is int for n in shape)


@pytest.mark.parametrize("dims", [(0, 1), (0, 2), (0, 1, 2), (-5, 1), (0,), ()])
@pytest.mark.parametrize("inplace", [False, True])
def test_squeeze_method_takes_dims_one_by_one(dims, inplace):
    """`x.squeeze(0, 1)` is `x.squeeze((0, 1))` (the method only: PyTorch's parser unpacks a
    dim list given as the only argument)."""
    def call(L):
        x = L.arange(24.0).reshape(1, 1, 2, 3, 4)
        return (x.clone().squeeze_ if inplace else x.squeeze)(*dims)

    same_result(call)


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.ones(1, 1, 2).squeeze(0, 0), RuntimeError),
    (lambda L: L.ones(1, 1, 2).squeeze(0, -3), RuntimeError),
    (lambda L: L.ones(1, 1, 2).squeeze(0, 7), IndexError),
    (lambda L: L.ones(1, 1, 2).squeeze_(1, 1), RuntimeError),
    (lambda L: L.ones(1, 1, 2).count_nonzero(0, 0), RuntimeError),
])
def test_squeeze_dims_one_by_one_refusals(call, kind):
    same_message(call, kind)


@pytest.mark.parametrize("call", [
    lambda L: L.arange(24.0).reshape(2, 3, 4).count_nonzero(0, 2),
    lambda L: L.arange(24.0).reshape(2, 3, 4).count_nonzero(1),
    lambda L: L.arange(24.0).reshape(2, 3, 4).count_nonzero(dim=(0, 1)),
    lambda L: L.arange(24.0).reshape(2, 3, 4).count_nonzero(),
])
def test_count_nonzero_method_takes_dims_one_by_one(call):
    same_result(call)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(1, 2).squeeze_(axis=0), lambda L: L.ones(1, 1, 2).squeeze_(dim=(0, 1)),
    lambda L: L.ones(1, 2).squeeze(axis=0), lambda L: L.ones(1, 2).count_nonzero(axis=0),
])
def test_dims_one_by_one_methods_keep_the_keyword_forms(call):
    same_result(call)
