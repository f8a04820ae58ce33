"""Folding a batch norm into the layer before it gives PyTorch's weights and outputs."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, copy_module_state, rand_array


def _stats(bn_t, seed):
    """Give a torch batch norm non-trivial statistics and affine parameters."""
    rng = np.random.default_rng(seed)
    n = bn_t.num_features
    with torch.no_grad():
        bn_t.running_mean.copy_(torch.tensor(rng.standard_normal(n).astype(np.float32)))
        bn_t.running_var.copy_(torch.tensor(rng.uniform(0.5, 2, n).astype(np.float32)))
        if bn_t.affine:
            bn_t.weight.copy_(torch.tensor(rng.standard_normal(n).astype(np.float32)))
            bn_t.bias.copy_(torch.tensor(rng.standard_normal(n).astype(np.float32)))


def _pair(make, seed=0):
    torch.manual_seed(seed)
    t = make(torch.nn)
    e = make(ember.nn)
    copy_module_state(e, t)
    return e.eval(), t.eval()


CASES = {
    "conv2d": (lambda nn: nn.Conv2d(3, 4, 3), lambda nn: nn.BatchNorm2d(4), (2, 3, 6, 6), False),
    "conv1d_no_bias": (lambda nn: nn.Conv1d(2, 5, 3, bias=False), lambda nn: nn.BatchNorm1d(5),
                       (2, 2, 7), False),
    "conv_transpose2d": (lambda nn: nn.ConvTranspose2d(3, 4, 2), lambda nn: nn.BatchNorm2d(4),
                         (1, 3, 4, 4), True),
    "conv2d_no_affine": (lambda nn: nn.Conv2d(2, 3, 1),
                         lambda nn: nn.BatchNorm2d(3, affine=False), (2, 2, 3, 3), False),
}


@pytest.mark.parametrize("case", CASES)
def test_fuse_conv_bn_eval_matches_torch(case):
    make_conv, make_bn, shape, transpose = CASES[case]
    conv_e, conv_t = _pair(make_conv)
    bn_e, bn_t = _pair(make_bn, 1)
    _stats(bn_t, 2)
    copy_module_state(bn_e, bn_t)
    fused_e = ember.nn.utils.fusion.fuse_conv_bn_eval(conv_e, bn_e, transpose)
    fused_t = torch.nn.utils.fusion.fuse_conv_bn_eval(conv_t, bn_t, transpose)
    assert fused_e is not conv_e and type(fused_e) is type(conv_e)
    assert_same(fused_e.weight, fused_t.weight, rtol=0, atol=0)
    assert_same(fused_e.bias, fused_t.bias, rtol=0, atol=0)
    assert isinstance(fused_e.weight, ember.nn.Parameter)
    assert fused_e.weight.requires_grad
    assert fused_e.bias.requires_grad == fused_t.bias.requires_grad
    x = rand_array(shape)
    # the fused layer computes the pair's output (sums in another order: a tolerance)
    assert_same(fused_e(ember.tensor(x)), bn_t(conv_t(torch.tensor(x))), rtol=1e-4, atol=1e-5)


def test_fuse_linear_bn_eval_matches_torch():
    lin_e, lin_t = _pair(lambda nn: nn.Linear(4, 3))
    bn_e, bn_t = _pair(lambda nn: nn.BatchNorm1d(3), 1)
    _stats(bn_t, 3)
    copy_module_state(bn_e, bn_t)
    fused_e = ember.nn.utils.fusion.fuse_linear_bn_eval(lin_e, bn_e)
    fused_t = torch.nn.utils.fusion.fuse_linear_bn_eval(lin_t, bn_t)
    assert_same(fused_e.weight, fused_t.weight, rtol=0, atol=0)
    assert_same(fused_e.bias, fused_t.bias, rtol=0, atol=0)
    x = rand_array((5, 4))
    assert_same(fused_e(ember.tensor(x)), bn_t(lin_t(torch.tensor(x))), rtol=1e-5, atol=1e-6)


def test_fuse_weights_functions_and_a_missing_bias():
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (4,), (4,), (4,)]]
    var = rng.uniform(0.5, 2, 4).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        w, rm, bw, bb = (lib.tensor(a) for a in arrays)
        w.requires_grad_(True)
        lin = lib.nn.utils.fusion.fuse_linear_bn_weights(w, None, rm, lib.tensor(var), 1e-3,
                                                        bw, bb)
        conv = lib.nn.utils.fusion.fuse_conv_bn_weights(w.reshape(4, 3, 1), None, rm,
                                                       lib.tensor(var), 1e-3, None, None)
        outs.append((lin, conv))
        assert lin[0].requires_grad and not lin[1].requires_grad
        assert lin[0].is_leaf and lin[0].grad_fn is None
    for e, t in zip(outs[0], outs[1]):
        assert_same(e[0], t[0], rtol=0, atol=0)
        assert_same(e[1], t[1], rtol=0, atol=0)


def test_fusion_refuses_training_mode_and_mismatched_features():
    conv, bn = ember.nn.Conv2d(1, 2, 1), ember.nn.BatchNorm2d(2)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        ember.nn.utils.fusion.fuse_conv_bn_eval(conv, bn)
    lin, bn = ember.nn.Linear(2, 3).eval(), ember.nn.BatchNorm1d(4).eval()
    with pytest.raises(AssertionError, match="linear.out_features=3 and bn.num_features=4"):
        ember.nn.utils.fusion.fuse_linear_bn_eval(lin, bn)
    no_stats = ember.nn.BatchNorm1d(3, track_running_stats=False).eval()
    with pytest.raises(AssertionError, match="must not be None"):
        ember.nn.utils.fusion.fuse_linear_bn_eval(lin, no_stats)
