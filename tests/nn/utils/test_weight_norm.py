"""Legacy weight_norm and DataParallel against torch."""

import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, check_module, rand_array


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    e_mod = nn.utils.weight_norm(nn.Conv1d(3, 4, 2), dim=dim)
    t_mod = torch.nn.utils.weight_norm(torch.nn.Conv1d(3, 4, 2), dim=dim)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [n for n, _ in e_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]
    check_module(e_mod, t_mod, rand_array((2, 3, 5)))
    nn.utils.remove_weight_norm(e_mod)
    torch.nn.utils.remove_weight_norm(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert_same(e_mod.weight, t_mod.weight)
    assert not e_mod._hooked
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(e_mod)


def test_data_parallel_prefixes_state_dict_and_forwards():
    e = nn.DataParallel(nn.Linear(3, 2))
    t = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(e.state_dict()) == list(t.state_dict()) == ["module.weight", "module.bias"]
    check_module(e, t, rand_array((4, 3)))
    assert repr(e) == repr(t)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("dim", [-2, -3, 2])
def test_weight_norm_negative_and_last_dims(dim):
    """A negative dim other than -1 counts from the end (as torch's norm_except_dim does);
    -1 alone means "over every dim"."""
    for wrap in (nn.utils.weight_norm, nn.utils.parametrizations.weight_norm):
        twrap = (torch.nn.utils.weight_norm if wrap is nn.utils.weight_norm
                 else torch.nn.utils.parametrizations.weight_norm)
        e_mod, t_mod = wrap(nn.Conv1d(3, 4, 2), dim=dim), twrap(torch.nn.Conv1d(3, 4, 2), dim=dim)
        for (name, pe), (_, pt) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
            assert pe.shape == pt.shape, name
        check_module(e_mod, t_mod, rand_array((2, 3, 5)))


def test_weight_norm_functions_at_the_top_level():
    v, g = rand_array((4, 3, 2), seed=1), rand_array((1, 3, 1), seed=2)
    for dim, gshape in ((1, (1, 3, 1)), (-2, (1, 3, 1)), (0, (4, 1, 1)), (-1, ())):
        gg = rand_array(gshape, seed=2)
        e = ember._weight_norm(ember.tensor(v), ember.tensor(gg), dim)
        t = torch._weight_norm(torch.tensor(v), torch.tensor(gg), dim)
        assert_same(e, t, rtol=1e-6)  # (a float32 sum of squares: the order of the adds)
        for p in (2, 1, 3):
            assert_same(ember.norm_except_dim(ember.tensor(v), p, dim),
                        torch.norm_except_dim(torch.tensor(v), p, dim), rtol=1e-6)
    ve = ember.tensor(v, requires_grad=True)
    vt = torch.tensor(v, requires_grad=True)
    ember._weight_norm(ve, ember.tensor(g), 1).sum().backward()
    torch._weight_norm(vt, torch.tensor(g), 1).sum().backward()
    assert_same(ve.grad, vt.grad, rtol=1e-5, atol=1e-6)
    for L in (ember, torch):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                             r"of \[-3, 2\], but got 5\)"):
            L.norm_except_dim(L.tensor(v), 2, 5)
        with pytest.raises(TypeError, match=r"norm_except_dim\(\): argument 'pow' \(position 2\) "
                                            r"must be int, not float"):
            L.norm_except_dim(L.tensor(v), 2.0, 0)
