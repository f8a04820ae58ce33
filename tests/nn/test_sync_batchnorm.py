"""SyncBatchNorm in one process: BatchNorm step for step, against torch 2.13 (forward,
gradients, running statistics, repr, conversion, refusals). The synced path, on several
processes, is checked in tests/distributed/programs/sync_batchnorm.py."""

import pytest
import torch

import ember

from helpers import same_message


def models(lib, bias=True, momentum=0.1):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4, momentum=momentum,
                                                                        bias=bias),
                            lib.nn.ReLU(), lib.nn.Sequential(lib.nn.BatchNorm2d(4)))
    return lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)


@pytest.mark.parametrize("bias,momentum", [(True, 0.1), (False, None)])
def test_converted_model_trains_as_torchs(bias, momentum):
    t, e = models(torch, bias, momentum), models(ember, bias, momentum)
    assert repr(e).replace("ember", "torch") == repr(t)
    assert type(e[1]).__name__ == "SyncBatchNorm" and type(e[3][0]).__name__ == "SyncBatchNorm"
    assert e[1].weight is not None and list(e.state_dict()) == list(t.state_dict())
    x = torch.randn(5, 3, 6, 6)
    for step in range(3):
        xe = ember.tensor(x.numpy() + step)
        yt, ye = t(x + step), e(xe)
        # convolution sums and the batch statistics: a few float32 ulps
        assert ye.detach().numpy() == pytest.approx(yt.detach().numpy(), rel=1e-4, abs=1e-5)
        yt.square().sum().backward()
        ye.square().sum().backward()
    for (name, pt), pe in zip(t.named_parameters(), e.parameters()):
        assert pe.grad.numpy() == pytest.approx(pt.grad.numpy(), rel=1e-3, abs=1e-3), name
    for (name, bt), be in zip(t.named_buffers(), e.buffers()):
        assert be.numpy() == pytest.approx(bt.numpy(), rel=1e-5, abs=1e-6), name
    t.eval(), e.eval()
    assert e(ember.tensor(x.numpy())).detach().numpy() == pytest.approx(
        t(x).detach().numpy(), rel=1e-4, abs=1e-5)


def test_conversion_of_a_lone_batchnorm_shares_its_tensors():
    bn = ember.nn.BatchNorm1d(3)
    sync = ember.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert sync is not bn and sync.weight is bn.weight and sync.running_var is bn.running_var
    assert ember.nn.SyncBatchNorm.convert_sync_batchnorm(sync) is sync


@pytest.mark.parametrize("shape", [(4,), (2, 0)])
def test_refusals_as_torch(shape):
    channels = shape[1] if len(shape) > 1 else 4
    same_message(lambda L: L.nn.SyncBatchNorm(channels)(L.ones(*shape)), ValueError)
