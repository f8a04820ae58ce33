"""Every layer against torch.nn: same weights in, same outputs and gradients out.

Each case builds the layer in both frameworks with one configuration, copies
torch's parameters and buffers into ember's, and compares the outputs, the input
gradients and the parameter gradients (and buffers) under a random cotangent, in
train and in eval mode. A second test checks that seeded construction draws the
same initial weights as torch.
"""

import numpy as np
import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, check_module, rand_array

F32 = {"rtol": 1e-5, "atol": 1e-6}
CONV = {"rtol": 1e-4, "atol": 1e-5}

# (id, factory(ns) -> module, input shapes, tolerances)
CASES = [
    ("identity", lambda ns: ns.Identity(3, k=1), [(2, 3)], F32),
    ("linear", lambda ns: ns.Linear(5, 3), [(4, 5)], F32),
    ("linear_3d", lambda ns: ns.Linear(5, 3), [(2, 4, 5)], F32),
    ("linear_1d_nobias", lambda ns: ns.Linear(5, 3, bias=False), [(5,)], F32),
    ("bilinear", lambda ns: ns.Bilinear(3, 4, 2), [(5, 3), (5, 4)], F32),
    ("flatten", lambda ns: ns.Flatten(), [(2, 3, 4)], F32),
    ("unflatten", lambda ns: ns.Unflatten(1, (2, 3)), [(4, 6)], F32),
    ("conv1d", lambda ns: ns.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), [(2, 4, 9)], CONV),
    ("conv1d_same_dilated", lambda ns: ns.Conv1d(3, 2, 4, padding="same", dilation=2),
     [(2, 3, 10)], CONV),
    ("conv1d_circular", lambda ns: ns.Conv1d(2, 3, 3, padding=2, padding_mode="circular"),
     [(1, 2, 7)], CONV),
    ("conv2d", lambda ns: ns.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=1), [(2, 3, 7, 6)],
     CONV),
    ("conv2d_groups_dilation", lambda ns: ns.Conv2d(4, 4, 3, padding=2, dilation=2, groups=4,
                                                    bias=False), [(1, 4, 6, 6)], CONV),
    ("conv2d_reflect", lambda ns: ns.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
     [(2, 2, 5, 5)], CONV),
    ("conv2d_unbatched", lambda ns: ns.Conv2d(2, 3, 2), [(2, 4, 4)], CONV),
    ("conv_transpose2d", lambda ns: ns.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                       output_padding=1, groups=2),
     [(2, 4, 4, 3)], CONV),
    ("conv_transpose2d_dilated", lambda ns: ns.ConvTranspose2d(2, 3, 2, dilation=2),
     [(1, 2, 3, 3)], CONV),
    ("conv_transpose1d", lambda ns: ns.ConvTranspose1d(3, 2, 3, stride=3), [(2, 3, 4)], CONV),
    ("maxpool1d", lambda ns: ns.MaxPool1d(3, 2, padding=1), [(2, 3, 9)], F32),
    ("maxpool2d", lambda ns: ns.MaxPool2d(2), [(2, 3, 6, 6)], F32),
    ("maxpool2d_ceil_dilated", lambda ns: ns.MaxPool2d(3, 2, 1, dilation=(1, 2), ceil_mode=True),
     [(1, 2, 7, 9)], F32),
    ("avgpool1d", lambda ns: ns.AvgPool1d(3, 2, 1, count_include_pad=False), [(2, 3, 8)], F32),
    ("avgpool2d", lambda ns: ns.AvgPool2d(3, 2, 1, ceil_mode=True), [(2, 2, 7, 6)], F32),
    ("avgpool2d_divisor", lambda ns: ns.AvgPool2d(2, divisor_override=3), [(1, 2, 4, 4)], F32),
    ("adaptive_avgpool2d", lambda ns: ns.AdaptiveAvgPool2d((3, 2)), [(2, 3, 7, 5)], F32),
    ("adaptive_avgpool2d_none", lambda ns: ns.AdaptiveAvgPool2d((None, 1)), [(2, 3, 4, 5)], F32),
    ("batchnorm1d", lambda ns: ns.BatchNorm1d(4), [(6, 4)], F32),
    ("batchnorm1d_3d", lambda ns: ns.BatchNorm1d(3, momentum=None), [(4, 3, 5)], F32),
    ("batchnorm2d", lambda ns: ns.BatchNorm2d(3, affine=False), [(2, 3, 4, 4)], F32),
    ("batchnorm2d_untracked", lambda ns: ns.BatchNorm2d(2, track_running_stats=False),
     [(3, 2, 2, 3)], F32),
    ("layernorm", lambda ns: ns.LayerNorm(6), [(3, 6)], F32),
    ("layernorm_2d_nobias", lambda ns: ns.LayerNorm((3, 4), bias=False), [(2, 3, 4)], F32),
    ("groupnorm", lambda ns: ns.GroupNorm(2, 4), [(3, 4, 5)], F32),
    ("rmsnorm", lambda ns: ns.RMSNorm(5), [(3, 5)], F32),
    ("rmsnorm_eps", lambda ns: ns.RMSNorm((2, 3), eps=1e-3, elementwise_affine=False),
     [(4, 2, 3)], F32),
    ("zero_pad2d", lambda ns: ns.ZeroPad2d((1, 2, 0, 1)), [(2, 3, 4, 4)], F32),
    ("constant_pad1d", lambda ns: ns.ConstantPad1d(2, 0.5), [(2, 3, 4)], F32),
    ("reflection_pad2d", lambda ns: ns.ReflectionPad2d(1), [(1, 2, 4, 4)], F32),
    ("replication_pad1d", lambda ns: ns.ReplicationPad1d((2, 1)), [(2, 3, 4)], F32),
    ("circular_pad2d", lambda ns: ns.CircularPad2d(1), [(1, 2, 3, 3)], F32),
    ("upsample_nearest", lambda ns: ns.Upsample(scale_factor=2), [(1, 2, 3, 3)], F32),
    ("upsample_bilinear", lambda ns: ns.Upsample(size=(5, 4), mode="bilinear"),
     [(1, 2, 3, 3)], F32),
    ("pixel_shuffle", lambda ns: ns.PixelShuffle(2), [(1, 8, 2, 3)], F32),
    ("pixel_unshuffle", lambda ns: ns.PixelUnshuffle(2), [(1, 2, 4, 6)], F32),
    ("cosine_similarity", lambda ns: ns.CosineSimilarity(dim=1), [(3, 4), (3, 4)], F32),
    ("pairwise_distance", lambda ns: ns.PairwiseDistance(p=1.5), [(3, 4), (3, 4)], F32),
    ("unfold", lambda ns: ns.Unfold(2, stride=2), [(1, 2, 4, 4)], F32),
    ("fold", lambda ns: ns.Fold((4, 4), 2, stride=2), [(1, 8, 4)], F32),
    ("instance_norm2d", lambda ns: ns.InstanceNorm2d(3), [(2, 3, 4, 4)], F32),
    ("instance_norm1d_affine_tracked", lambda ns: ns.InstanceNorm1d(
        3, affine=True, track_running_stats=True), [(2, 3, 5)], F32),
    ("local_response_norm", lambda ns: ns.LocalResponseNorm(3), [(2, 5, 4, 3)], F32),
    ("local_response_norm_3d", lambda ns: ns.LocalResponseNorm(2, k=2.0), [(2, 5, 4)], F32),
    ("channel_shuffle", lambda ns: ns.ChannelShuffle(2), [(2, 6, 2, 2)], F32),
    # activations
    ("relu", lambda ns: ns.ReLU(), [(4, 5)], F32),
    ("relu6", lambda ns: ns.ReLU6(), [(4, 5)], F32),
    ("leaky_relu", lambda ns: ns.LeakyReLU(0.2), [(4, 5)], F32),
    ("prelu", lambda ns: ns.PReLU(), [(4, 5)], F32),
    ("prelu_channels", lambda ns: ns.PReLU(3, init=0.1), [(2, 3, 4)], F32),
    ("elu", lambda ns: ns.ELU(0.7), [(4, 5)], F32),
    ("selu", lambda ns: ns.SELU(), [(4, 5)], F32),
    ("celu", lambda ns: ns.CELU(1.3), [(4, 5)], F32),
    ("gelu", lambda ns: ns.GELU(), [(4, 5)], F32),
    ("gelu_tanh", lambda ns: ns.GELU("tanh"), [(4, 5)], F32),
    ("silu", lambda ns: ns.SiLU(), [(4, 5)], F32),
    ("mish", lambda ns: ns.Mish(), [(4, 5)], F32),
    ("sigmoid", lambda ns: ns.Sigmoid(), [(4, 5)], F32),
    ("tanh", lambda ns: ns.Tanh(), [(4, 5)], F32),
    ("hardtanh", lambda ns: ns.Hardtanh(-0.5, 1.5), [(4, 5)], F32),
    ("hardswish", lambda ns: ns.Hardswish(), [(4, 5)], F32),
    ("hardsigmoid", lambda ns: ns.Hardsigmoid(), [(4, 5)], F32),
    ("softplus", lambda ns: ns.Softplus(beta=2, threshold=3), [(4, 5)], F32),
    ("softmax", lambda ns: ns.Softmax(dim=1), [(3, 4, 2)], F32),
    ("log_softmax", lambda ns: ns.LogSoftmax(dim=-1), [(3, 4)], F32),
    ("softmin", lambda ns: ns.Softmin(dim=0), [(3, 4)], F32),
    ("glu", lambda ns: ns.GLU(dim=1), [(3, 6)], F32),
    ("logsigmoid", lambda ns: ns.LogSigmoid(), [(4, 5)], F32),
    ("softsign", lambda ns: ns.Softsign(), [(4, 5)], F32),
    ("tanhshrink", lambda ns: ns.Tanhshrink(), [(4, 5)], F32),
    ("threshold", lambda ns: ns.Threshold(0.1, 20.0), [(4, 5)], F32),
    ("dropout_p0", lambda ns: ns.Dropout(0.0), [(4, 5)], F32),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_layer_matches_torch(case, mode):
    _, factory, shapes, tol = case
    e_mod, t_mod = factory(nn), factory(torch.nn)
    if mode == "eval":
        e_mod.eval()
        t_mod.eval()
    arrays = [rand_array(s, seed=i) for i, s in enumerate(shapes)]
    check_module(e_mod, t_mod, *arrays, rtol=tol["rtol"], atol=tol["atol"])
    # A second forward with the updated buffers (running stats) must still agree.
    check_module(e_mod, t_mod, *arrays, rtol=tol["rtol"], atol=tol["atol"], copy=False, seed=2)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in ("identity",)],
                         ids=[c[0] for c in CASES if c[0] not in ("identity",)])
def test_seeded_initialisation_matches_torch(case):
    _, factory, _, _ = case
    ember.manual_seed(7)
    torch.manual_seed(7)
    e_mod, t_mod = factory(nn), factory(torch.nn)
    t_state = t_mod.state_dict()
    for k, v in e_mod.state_dict().items():
        assert_same(v, t_state[k], rtol=1e-6, atol=1e-7)


def test_embedding_matches_torch_with_padding_and_max_norm():
    idx = np.array([[1, 0, 3, 3], [4, 2, 0, 1]])
    for kwargs in ({}, {"padding_idx": 0}, {"padding_idx": -1, "scale_grad_by_freq": True}):
        e_mod, t_mod = nn.Embedding(5, 3, **kwargs), torch.nn.Embedding(5, 3, **kwargs)
        check_module(e_mod, t_mod, idx)
        assert repr(e_mod) == repr(t_mod)
    e_mod, t_mod = nn.Embedding(5, 3, max_norm=1.0), torch.nn.Embedding(5, 3, max_norm=1.0)
    check_module(e_mod, t_mod, idx)
    assert_same(e_mod.weight, t_mod.weight)  # max_norm renormalised the looked-up rows
    # (the renorm runs first: its select() refuses the index before the lookup can)
    with pytest.raises(IndexError, match=r"select\(\): index 5 out of range"):
        e_mod(ember.tensor([5]))
    with pytest.raises(IndexError, match=r"select\(\): index 5 out of range"):
        t_mod(torch.tensor([5]))
    table = rand_array((4, 3))
    pre_e = nn.Embedding.from_pretrained(ember.tensor(table), padding_idx=1)
    pre_t = torch.nn.Embedding.from_pretrained(torch.tensor(table), padding_idx=1)
    assert not pre_e.weight.requires_grad and repr(pre_e) == repr(pre_t)
    assert_same(pre_e(ember.tensor([[1, 3]])), pre_t(torch.tensor([[1, 3]])))
    with pytest.raises(RuntimeError, match="'indices' to have one of the following"):
        e_mod(ember.tensor([1.0]))


def test_embedding_bag_matches_torch():
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 0])
    offsets = np.array([0, 3, 3, 6])
    for mode in ("sum", "mean", "max"):
        e_mod = nn.EmbeddingBag(6, 3, mode=mode)
        t_mod = torch.nn.EmbeddingBag(6, 3, mode=mode)
        check_module(e_mod, t_mod, idx, offsets)
    e_mod, t_mod = nn.EmbeddingBag(6, 2, mode="sum"), torch.nn.EmbeddingBag(6, 2, mode="sum")
    check_module(e_mod, t_mod, np.array([[1, 2], [3, 0]]), None,
                 rand_array((2, 2), seed=4))


def test_batchnorm_running_stats_follow_torch_over_steps():
    e_mod, t_mod = nn.BatchNorm2d(3, momentum=0.3), torch.nn.BatchNorm2d(3, momentum=0.3)
    for step in range(3):
        x = rand_array((4, 3, 2, 2), seed=step)
        check_module(e_mod, t_mod, x, copy=step == 0)
    assert int(e_mod.num_batches_tracked) == 3
    with pytest.raises(ValueError, match="expected 4D input"):
        e_mod(ember.zeros(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(ember.zeros(1, 3))
    # Like torch, a plain dict without num_batches_tracked (an old checkpoint) still loads.
    old = {k: v for k, v in e_mod.state_dict().items() if k != "num_batches_tracked"}
    assert repr(nn.BatchNorm2d(3).load_state_dict(old)) == "<All keys matched successfully>"


def test_dropout_masks_match_torch_under_the_same_seed():
    x = rand_array((6, 8))
    for factory in (lambda ns: ns.Dropout(0.3), lambda ns: ns.Dropout2d(0.5),
                    lambda ns: ns.Dropout1d(0.4)):
        e_mod, t_mod = factory(nn), factory(torch.nn)
        shape = (2, 3, 4, 2) if isinstance(e_mod, nn.Dropout2d) else (3, 4, 4)
        x = rand_array(shape)
        ember.manual_seed(3)
        torch.manual_seed(3)
        check_module(e_mod, t_mod, x)
    e_mod = nn.Dropout(0.5)
    e_mod.eval()
    t = ember.ones(3)
    assert e_mod(t) is t
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)


def test_layer_reprs_match_torch():
    factories = [c[1] for c in CASES] + [
        lambda ns: ns.Embedding(4, 2, padding_idx=1, max_norm=2.0),
        lambda ns: ns.EmbeddingBag(4, 2, mode="max"),
        lambda ns: ns.CrossEntropyLoss(), lambda ns: ns.Dropout2d(0.2, inplace=True),
        lambda ns: ns.ReLU(inplace=True), lambda ns: ns.LeakyReLU(inplace=True),
        lambda ns: ns.Conv2d(1, 2, 3, padding="same", padding_mode="zeros"),
        lambda ns: ns.MaxPool2d((2, 3), stride=1),
    ]
    for f in factories:
        assert repr(f(nn)) == repr(f(torch.nn))


def test_conv_errors_match_torch():
    for build, shape in ((lambda ns: ns.Conv2d(3, 4, 3), (1, 2, 5, 5)),
                         (lambda ns: ns.Conv2d(3, 4, 7), (1, 3, 5, 5))):
        with pytest.raises(RuntimeError) as ee:
            build(nn)(ember.zeros(shape))
        with pytest.raises(RuntimeError) as et:
            build(torch.nn)(torch.zeros(shape))
        assert str(ee.value) == str(et.value)
    for bad in (dict(groups=0), dict(groups=2), dict(padding="same", stride=2),
                dict(padding_mode="wrap")):
        with pytest.raises(ValueError):
            nn.Conv2d(3, 4, 3, **bad)


def test_max_unpool_inverts_max_pool_like_torch():
    def run(ns):
        pool, unpool = ns.MaxPool2d(2, return_indices=True), ns.MaxUnpool2d(2)

        def f(a):
            y, i = pool(a)
            return unpool(y, i, output_size=(7, 5))
        return f

    from helpers import check_op

    check_op(run(nn), run(torch.nn), rand_array((2, 3, 7, 5)))
    assert repr(nn.MaxUnpool2d(2)) == repr(torch.nn.MaxUnpool2d(2))
