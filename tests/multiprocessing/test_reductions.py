"""A tensor sent through multiprocessing's pickler (queues, pipes) keeps its layout, dtype,
class and requires_grad, and a non-leaf that requires grad is refused, as in torch. The
values are copies, so every comparison is exact."""

from multiprocessing.reduction import ForkingPickler

import pytest
import torch
import torch.multiprocessing  # noqa: F401 (registers torch's reductions)

import ember
import ember.multiprocessing  # noqa: F401 (registers ember's)


def sent(t):
    return ForkingPickler.loads(ForkingPickler.dumps(t))


def layout(t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.untyped_storage().nbytes(),
            str(t.dtype).split(".")[1], type(t).__name__, t.requires_grad, t.tolist())


@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(6).reshape(2, 3).T,  # strides survive: not made contiguous
    lambda lib: lib.arange(10.0)[2:7:2],  # so do the offset and the whole storage
    lambda lib: lib.tensor([1.5, 2.0], dtype=lib.bfloat16),
    lambda lib: lib.ones(2, 2, requires_grad=True),
    lambda lib: lib.nn.Parameter(lib.zeros(3)),
], ids=["transposed", "strided-slice", "bfloat16", "leaf-requires-grad", "parameter"])
def test_a_sent_tensor_keeps_its_layout_as_in_torch(make):
    assert layout(sent(make(ember))) == layout(sent(make(torch)))


def test_a_non_leaf_that_requires_grad_is_refused_as_in_torch():
    def refusal(lib):
        with pytest.raises(RuntimeError) as info:
            ForkingPickler.dumps(lib.ones(2, requires_grad=True) * 2)
        return str(info.value)

    assert refusal(ember) == refusal(torch)


def test_a_small_view_of_a_large_storage_sends_only_the_span_it_reaches():
    # torch shares the storage (its handle costs nothing); ember sends bytes, so a dataset's
    # row of a large tensor must not send the whole tensor with every sample
    big = ember.arange(1000.0).reshape(100, 10)
    row = sent(big[7])
    assert (row.tolist(), row.storage_offset(), row.untyped_storage().nbytes()) == (
        big[7].tolist(), 0, 40)
    assert len(ForkingPickler.dumps(big[7])) < 1000
    column = sent(big[:, 3])  # reaches most of the storage: sent whole, as laid out
    assert (column.tolist(), column.stride(), column.storage_offset()) == (
        big[:, 3].tolist(), (10,), 3)
