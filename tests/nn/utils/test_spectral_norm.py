"""Spectral normalisation (the hook-based API) against torch.nn.utils.spectral_norm.

u and v start as normal draws: with the same seed, ember draws PyTorch's numbers, so the
initial buffers are equal bit for bit. After that the power iteration runs through
matrix-vector products and norms, float32 sums whose order differs between the two
libraries (last-bit differences, ~1e-7 relative, that each iteration carries forward):
those comparisons take a float32 tolerance.
"""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array

SUMS = dict(rtol=1e-5, atol=1e-6)  # float32 sums in another order (see the module docstring)

MAKERS = {
    "linear": (lambda nn: nn.Linear(5, 4), (3, 5)),
    "conv2d": (lambda nn: nn.Conv2d(2, 3, 3), (2, 2, 5, 5)),
    "conv_transpose2d": (lambda nn: nn.ConvTranspose2d(3, 2, 2), (1, 3, 4, 4)),
}


def _both(kind, **kw):
    make, shape = MAKERS[kind]
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        out.append(lib.nn.utils.spectral_norm(make(lib.nn), **kw))
    return out[0], out[1], shape


@pytest.mark.parametrize("kind", MAKERS)
def test_initial_state_equals_torchs_bit_for_bit(kind):
    m_e, m_t, _ = _both(kind)
    sd_e, sd_t = m_e.state_dict(), m_t.state_dict()
    assert list(sd_e) == list(sd_t)
    assert list(sd_e)[-3:] == ["weight_orig", "weight_u", "weight_v"]
    for k in sd_t:
        assert_same(sd_e[k], sd_t[k], rtol=0, atol=0)
    assert sd_e._metadata == sd_t._metadata  # ({'spectral_norm': {'weight.version': 1}})
    assert isinstance(m_e.weight_orig, ember.nn.Parameter)
    assert "weight" not in dict(m_e.named_parameters())
    dim = 1 if kind == "conv_transpose2d" else 0
    assert m_e._forward_pre_hooks[next(iter(m_e._forward_pre_hooks))].dim == dim


@pytest.mark.parametrize("kind", MAKERS)
def test_training_forwards_update_u_and_v_as_torchs(kind):
    m_e, m_t, shape = _both(kind, n_power_iterations=2)
    for step in range(5):
        x = rand_array(shape, seed=step)
        assert_same(m_e(ember.tensor(x)), m_t(torch.tensor(x)), **SUMS)
        assert_same(m_e.weight_u, m_t.weight_u, **SUMS)
        assert_same(m_e.weight_v, m_t.weight_v, **SUMS)
        assert_same(m_e.weight, m_t.weight, **SUMS)


def test_eval_mode_uses_the_stored_vectors():
    m_e, m_t, shape = _both("linear")
    m_e.eval()
    m_t.eval()
    u0 = m_e.weight_u.clone()
    x = rand_array(shape)
    assert_same(m_e(ember.tensor(x)), m_t(torch.tensor(x)), **SUMS)
    np.testing.assert_array_equal(m_e.weight_u.numpy(), u0.numpy())
    sigma = m_e.weight_u.dot(m_e.weight_orig.mv(m_e.weight_v))
    assert_same(m_e.weight, m_t.weight, **SUMS)
    np.testing.assert_allclose(m_e.weight.detach().numpy(),
                               (m_e.weight_orig / sigma).detach().numpy())


def test_gradients_flow_through_sigma_as_torchs():
    m_e, m_t, shape = _both("linear")
    x = rand_array(shape)
    m_e(ember.tensor(x)).pow(2).sum().backward()
    m_t(torch.tensor(x)).pow(2).sum().backward()
    assert_same(m_e.weight_orig.grad, m_t.weight_orig.grad, rtol=1e-4, atol=1e-5)
    assert m_e.weight_u.grad is None and not m_e.weight_u.requires_grad


def test_a_few_sgd_steps_track_torch():
    m_e, m_t, shape = _both("conv2d")
    opts = [lib.optim.SGD(m.parameters(), lr=0.1) for lib, m in ((ember, m_e), (torch, m_t))]
    for step in range(4):
        x = rand_array(shape, seed=10 + step)
        for m, opt, lib in ((m_e, opts[0], ember), (m_t, opts[1], torch)):
            opt.zero_grad()
            m(lib.tensor(x)).tanh().sum().backward()
            opt.step()
    for k, t in m_t.state_dict().items():
        assert_same(m_e.state_dict()[k], t, rtol=1e-4, atol=1e-5)


def test_remove_spectral_norm_folds_the_weight():
    m_e, m_t, shape = _both("linear")
    x = rand_array(shape)
    m_e(ember.tensor(x))
    m_t(torch.tensor(x))
    ember.nn.utils.remove_spectral_norm(m_e)
    torch.nn.utils.remove_spectral_norm(m_t)
    assert list(m_e.state_dict()) == list(m_t.state_dict()) == ["bias", "weight"]
    assert isinstance(m_e.weight, ember.nn.Parameter)
    assert not m_e._forward_pre_hooks and not m_e._hooked
    assert not m_e._state_dict_hooks and not m_e._load_state_dict_pre_hooks
    assert_same(m_e.weight, m_t.weight, **SUMS)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        ember.nn.utils.remove_spectral_norm(m_e)


def test_errors_match_torch():
    m = ember.nn.utils.spectral_norm(ember.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        ember.nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        ember.nn.utils.spectral_norm(ember.nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
        ember.nn.utils.spectral_norm(ember.nn.Linear(2, 2, bias=False), name="bias")


def test_state_dict_round_trip_and_a_version_0_checkpoint():
    m_e, m_t, shape = _both("linear")
    x = rand_array(shape)
    m_e(ember.tensor(x))
    m_t(torch.tensor(x))
    fresh = ember.nn.utils.spectral_norm(ember.nn.Linear(5, 4))
    fresh.load_state_dict(m_e.state_dict())
    np.testing.assert_array_equal(fresh.weight_v.numpy(), m_e.weight_v.numpy())
    # an old checkpoint: `weight` saved, no `weight_v`, no version in the metadata. (A weight
    # taller than wide, so that W^T W is invertible and v well defined.)
    torch.manual_seed(1)
    tall_t = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 6))
    tall_t(torch.ones(2, 3))
    old_t = OrderedDict((k, v) for k, v in tall_t.state_dict().items() if k != "weight_v")
    old_t["weight"] = tall_t.weight.detach()
    old_e = OrderedDict((k, ember.tensor(v.numpy())) for k, v in old_t.items())
    new_t = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 6))
    new_e = ember.nn.utils.spectral_norm(ember.nn.Linear(3, 6))
    new_t.load_state_dict(old_t)
    new_e.load_state_dict(old_e)
    # (v is solved for through a pseudo-inverse: an SVD, whose last bits depend on LAPACK)
    assert_same(new_e.weight_v, new_t.weight_v, rtol=1e-4, atol=1e-5)
    assert_same(new_e.weight_v, tall_t.weight_v, rtol=1e-3, atol=1e-4)
