"""F.pad's reflection and replication modes refuse what PyTorch's kernels refuse, in its
order: an empty non-batch dim, a reflection wider than its dim (the argument numbered by
the dim: #4 for the last, #6, #8), then a bool input (which constant and circular padding
take)."""

import numpy as np
import pytest
import torch

import ember

from helpers import same_message, same_result


def _pad(shape, pad, mode, dtype="float32"):
    return lambda L: L.nn.functional.pad(L.ones(shape, dtype=getattr(L, dtype)), pad, mode=mode)


REFUSED = {
    "reflect 3-d depth": _pad((1, 1, 2, 3, 4), (0, 0, 0, 0, 2, 0), "reflect"),
    "reflect 3-d height": _pad((1, 1, 2, 3, 4), (0, 0, 3, 0, 0, 0), "reflect"),
    "reflect 2-d height": _pad((1, 2, 3), (0, 0, 2, 0), "reflect"),
    "reflect width first": _pad((1, 1, 2, 3, 4), (4, 0, 3, 0, 2, 0), "reflect"),
    "reflect size before bool": _pad((1, 1, 1, 3, 3), (1, 1, 1, 1, 1, 1), "reflect", "bool"),
    "reflect empty channels": _pad((1, 0, 3), (1, 1), "reflect"),
    "reflect empty width": _pad((1, 1, 0), (1, 1), "reflect"),
    "reflect empty unbatched": _pad((0, 3, 3), (1, 1, 1, 1), "reflect"),
    "replicate empty height": _pad((1, 1, 0, 3), (1, 1, 1, 1), "replicate"),
    "replicate empty unbatched": _pad((3, 0), (1, 1), "replicate"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_in_torchs_words(name):
    same_message(REFUSED[name])


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_bool_input_has_no_reflection_or_replication_kernel(mode, k):
    same_message(_pad((1, 1) + (3,) * k, (1, 1) * k, mode, "bool"), NotImplementedError)


@pytest.mark.parametrize("mode", ["constant", "circular"])
def test_bool_input_pads_in_the_other_modes(mode):
    same_result(lambda L: L.nn.functional.pad(L.arange(9).view(1, 1, 3, 3) % 2 == 0,
                                              (1, 2, 2, 1), mode=mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_empty_batch_pads(mode):
    same_result(_pad((0, 1, 3, 3), (1, 1, 1, 1), mode))




PADS = [((1, 2, 5), (1, 2)), ((2, 5), (2, 0)), ((1, 2, 5, 6), (1, 2, 2, 1)),
        ((2, 5, 6), (0, 3, 1, 1)), ((1, 1, 3, 5, 6), (1, 1, 2, 1, 1, 2)),
        ((1, 2, 5, 6), (0, 0, 0, 0))]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape, pad", PADS, ids=str)
def test_one_node_named_for_the_kernel_with_torchs_gradient(shape, pad, mode):
    """One node (ReflectionPad2DBackward0, ...) straight onto the input, as PyTorch's kernel;
    the gradient is exact: small-integer cotangents added in float32."""
    res = []
    for lib in (torch, ember):
        x = lib.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
        y = lib.nn.functional.pad(x, pad, mode=mode)
        g = lib.arange(float(y.numel())).reshape(y.shape).remainder(7)
        y.backward(g)
        nxt = type(y.grad_fn.next_functions[0][0]).__name__
        res.append((type(y.grad_fn).__name__, nxt, y.detach().numpy(), x.grad.numpy()))
    assert res[1][:2] == res[0][:2]
    np.testing.assert_array_equal(res[1][2], res[0][2])
    np.testing.assert_array_equal(res[1][3], res[0][3])


@pytest.mark.parametrize("shape, pad", [
    ((1, 1, 5), (2, 1)), ((1, 1, 5), (-1, 2)), ((1, 1, 5), (2, -1)), ((1, 1, 5), (-2, -1)),
    ((1, 1, 5), (-4, 1)), ((1, 1, 5), (1, -4)), ((1, 1, 5), (-2, 3)), ((1, 1, 5), (-5, 0)),
    ((1, 1, 5), (5, 5)), ((1, 3, 4), (-1, 2, 2, -1)), ((2, 3), (1, 2)),
    ((1, 1, 2, 3, 4), (1, 0, -1, 1, 1, 1)),
])
def test_circular_pad_wraps_around_the_cropped_core(shape, pad):
    """A negative side crops first; the other side wraps what is left (PyTorch's slice
    copies), and the result's node is CopySlices."""
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    outs = []
    for L in (ember, torch):
        a = L.tensor(x, requires_grad=True)
        out = L.nn.functional.pad(a, pad, mode="circular")
        (out * out).sum().backward()  # (squares of small integers: exact in float32)
        outs.append((out, a.grad, out.grad_fn.name()))
    (oe, ge, ne), (ot, gt, nt) = outs
    assert ne == nt == "torch::autograd::CopySlices"
    np.testing.assert_array_equal(oe.detach().numpy(), ot.detach().numpy())
    np.testing.assert_array_equal(ge.numpy(), gt.numpy())


@pytest.mark.parametrize("pad", [(-3, -3), (-3, 4), (4, -3), (6, 0)])
def test_circular_pad_refusals(pad):
    same_message(_pad((1, 1, 5), pad, "circular"))


TOO_SMALL = {  # negative padding that leaves no output element in any padded dim
    "1-d to zero": ((1, 2, 3), (-3, 0)), "1-d to zero, both sides": ((1, 2, 3), (-1, -2)),
    "1-d negative": ((1, 2, 3), (-5, 1)), "1-d unbatched": ((2, 3), (1, -5)),
    "2-d": ((1, 1, 3, 4), (-5, 0, -3, 0)), "2-d unbatched": ((2, 3, 4), (-5, 0, -4, 0)),
    "3-d": ((1, 1, 2, 3, 4), (-4, 0, -3, 0, -2, 0)),
    "3-d unbatched": ((1, 2, 3, 4), (-1, -3, -4, 1, -3, 1)),
}
NEGATIVE_DIM = {  # one padded dim negative while another keeps elements
    "2-d width": ((1, 1, 3, 4), (-5, 0, 0, 0)), "2-d height": ((1, 1, 3, 4), (0, 0, -4, 0)),
    "2-d unbatched": ((1, 3, 4), (-6, 1, 0, 0)),
    "3-d width": ((1, 1, 2, 3, 4), (-5, 0, 0, 0, 0, 0)),
    "3-d depth": ((1, 1, 2, 3, 4), (0, 0, 0, 0, -3, 0)),
    "3-d unbatched": ((1, 2, 3, 4), (0, 0, 0, 0, -3, -3)),
}


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("name", list(TOO_SMALL) + list(NEGATIVE_DIM))
def test_negative_padding_past_the_input_refused_in_torchs_words(name, mode):
    shape, pad = {**TOO_SMALL, **NEGATIVE_DIM}[name]
    same_message(_pad(shape, pad, mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", [
    ((1, 1, 3, 4), (-4, 0, 0, 0)), ((1, 1, 3, 4), (0, 0, -3, 0)),
    ((1, 2, 3, 4), (-2, 0, 0, 0, 0, 0)),
    ((1, 1, 2, 3, 4), (-1, -3, 0, 0, 0, 0)), ((1, 1, 3, 4), (0, 0, -1, -1)),
], ids=str)
def test_negative_padding_to_an_empty_dim_matches_torch(shape, pad, mode):
    same_result(lambda L: L.nn.functional.pad(L.arange(float(np.prod(shape))).reshape(shape), pad,
                                              mode=mode))


@pytest.mark.parametrize("shape, pad", [
    ((1, 2, 3), (-4, 1)), ((1, 1, 2, 3, 4), (-4, 0, -3, 0, -3, 1)),
], ids=str)
def test_circular_pad_to_exactly_empty_is_empty(shape, pad):
    """A crop past the edge that the other side's wrap brings back to size 0 writes nothing
    (PyTorch returns the empty tensor, not its 'negative padding' refusal)."""
    same_result(lambda L: L.nn.functional.pad(L.ones(shape), pad, mode="circular"))
