"""LazyBatchNorm / LazyInstanceNorm / LazyConvTranspose against torch: placeholders,
reprs, state dicts, the class they become, the numbers they give and their errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array

NORMS = [
    ("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 5)),
    ("LazyBatchNorm2d", (2, 3, 4, 4)), ("LazyBatchNorm3d", (2, 2, 3, 3, 3)),
    ("LazyInstanceNorm1d", (2, 3, 6)),
    ("LazyInstanceNorm2d", (2, 3, 4, 5)), ("LazyInstanceNorm3d", (1, 2, 3, 3, 4)),
]


def _both(make):
    torch.manual_seed(0)
    t = make(torch)
    ember.manual_seed(0)
    return make(ember), t


def _kinds(sd):
    return [(k, type(v).__name__) for k, v in sd.items()]


@pytest.mark.parametrize("name, shape", NORMS)
def test_lazy_norm_like_torch(name, shape):
    e, t = _both(lambda L: getattr(L.nn, name)())
    assert repr(e) == repr(t)
    assert e.has_uninitialized_params() and t.has_uninitialized_params()
    assert _kinds(e.state_dict()) == _kinds(t.state_dict())
    x = rand_array(shape)
    # NOTE: batch statistics are sums over the batch: float32 rounding order may differ
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    assert type(e).__name__ == type(t).__name__ == name[4:]
    assert repr(e) == repr(t)
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(e.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kw", [{"affine": False}, {"track_running_stats": False},
                                {"bias": False}, {"affine": False, "track_running_stats": False}])
def test_lazy_norm_options(kw):
    e, t = _both(lambda L: L.nn.LazyBatchNorm1d(eps=1e-3, momentum=None, **kw))
    assert repr(e) == repr(t)
    assert _kinds(e.state_dict()) == _kinds(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    x = rand_array((5, 4))
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    assert repr(e) == repr(t)


def test_lazy_norm_load_state_dict_and_errors():
    e, t = _both(lambda L: L.nn.LazyBatchNorm2d())
    src_t = torch.nn.BatchNorm2d(3)
    src_t.running_mean.fill_(0.5)
    src_t.num_batches_tracked.fill_(7)
    sd = {k: ember.tensor(v.numpy()) for k, v in src_t.state_dict().items()}
    assert str(e.load_state_dict(sd)) == str(t.load_state_dict(src_t.state_dict()))
    assert type(e).__name__ == "LazyBatchNorm2d"  # the first forward still converts it
    assert tuple(e.running_mean.shape) == (3,)
    assert e.num_batches_tracked.item() == 7
    for L in (torch, ember):
        with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
            L.nn.LazyBatchNorm2d()(L.zeros(3, 4))
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
            L.nn.LazyInstanceNorm1d()(L.zeros(1, 2, 3, 4))
        # NOTE: as in PyTorch, an unbatched input's dim 1 (not its channel dim) sizes it
        with pytest.raises(ValueError, match=r"size at dim=0 to match num_features \(6\)"):
            L.nn.LazyInstanceNorm1d()(L.zeros(3, 6))


CONVT = [
    ("LazyConvTranspose1d", (2, 3, 7), {"kernel_size": 3, "stride": 2}),
    ("LazyConvTranspose2d", (1, 4, 5, 5), {"kernel_size": 3, "groups": 2, "output_padding": 0}),
    ("LazyConvTranspose2d", (4, 5, 5), {"kernel_size": (2, 3), "bias": False, "padding": 1}),
    ("LazyConvTranspose3d", (1, 2, 3, 3, 3), {"kernel_size": 2, "stride": 2,
                                              "output_padding": 1}),
]


@pytest.mark.parametrize("name, shape, kw", CONVT)
def test_lazy_conv_transpose_like_torch(name, shape, kw):
    e, t = _both(lambda L: getattr(L.nn, name)(6, **kw))
    assert repr(e) == repr(t)
    assert repr(e.weight) == "<UninitializedParameter>"
    x = rand_array(shape)
    # NOTE: transposed convolution sums products: float32 rounding order may differ
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-5)
    assert repr(e) == repr(t) and type(e).__name__ == name[4:]
    assert tuple(e.weight.shape) == tuple(t.weight.shape)
    # the initialization drew torch's numbers
    np.testing.assert_array_equal(e.weight.detach().numpy(), t.weight.detach().numpy())


def test_lazy_conv_transpose_errors_and_optimizer_first():
    for L in (torch, ember):
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            L.nn.LazyConvTranspose1d(4, 3, groups=2)(L.zeros(1, 3, 5))
        with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\)"):
            L.nn.LazyConvTranspose2d(4, 3)(L.zeros(5, 5))
    # an optimizer made before the first forward holds the same (materialised) objects
    e, t = _both(lambda L: L.nn.LazyConvTranspose1d(2, 2))
    opt_e = ember.optim.SGD(e.parameters(), lr=0.5)
    opt_t = torch.optim.SGD(t.parameters(), lr=0.5)
    x = rand_array((1, 3, 4))
    e(ember.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    opt_e.step()
    opt_t.step()
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    assert opt_e.param_groups[0]["params"][0] is e.weight
