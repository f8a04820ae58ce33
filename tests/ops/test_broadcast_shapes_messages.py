"""torch.broadcast_shapes' error: the failing argument as it was passed (a Size, tuple or
list prints as such) and the shape built so far, over the longest rank and including the
failing argument's own right-hand dims; checked against torch in-process."""

import pytest
import torch

import ember

CASES = [
    ((4, 5), (3,)),
    ((4, 5), (2, 4, 3)),
    ((4, 5), (3, 1)),
    ((4, 1), (2, 3)),
    ([4, 5], [3]),
    (4, 3),
    ((2, 3), (4, 3), (5, 3)),
]


@pytest.mark.parametrize("shapes", CASES)
def test_message_matches_torch(shapes):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            lib.broadcast_shapes(*shapes)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


def test_size_arguments_print_as_sizes():
    with pytest.raises(RuntimeError) as t:
        torch.broadcast_shapes(torch.Size([4, 5]), torch.Size([3]))
    with pytest.raises(RuntimeError) as e:
        ember.broadcast_shapes(ember.Size([4, 5]), ember.Size([3]))
    assert str(e.value).replace("ember.Size", "torch.Size") == str(t.value)


@pytest.mark.parametrize("shapes", [((4, 1), (3,)), ((2, 1, 3), (5, 1)), (1, (0,)), ((),)])
def test_broadcasting_shapes_agree(shapes):
    assert tuple(ember.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
