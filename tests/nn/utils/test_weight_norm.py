"""Legacy weight_norm and DataParallel against torch."""

import pytest
import torch

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
