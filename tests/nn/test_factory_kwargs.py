"""torch.nn.factory_kwargs and torch.nn.common_types, against torch 2.13."""

import pytest
import torch

import ember


@pytest.mark.parametrize("kwargs", [None, {}, {"dtype": "d"}, {"device": "cpu", "dtype": 1},
                                    {"factory_kwargs": {"dtype": 2}, "device": "cpu"},
                                    {"memory_format": 3}])
def test_factory_kwargs_merges(kwargs):
    assert ember.nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)


@pytest.mark.parametrize("kwargs", [{"bogus": 1},
                                    {"dtype": 1, "factory_kwargs": {"dtype": 2}}])
def test_factory_kwargs_errors(kwargs):
    with pytest.raises(TypeError) as want:
        torch.nn.factory_kwargs(kwargs)
    with pytest.raises(TypeError) as got:
        ember.nn.factory_kwargs(kwargs)
    assert str(got.value) == str(want.value)


def test_common_types_names():
    from torch.nn import common_types as theirs

    from ember.nn import common_types as ours

    names = {n for n in dir(theirs) if n.startswith("_") and n.endswith("_t")}
    assert names <= set(dir(ours))
    assert str(ours._size_2_t) == "typing.Union[int, tuple[int, int]]"
    assert str(ours._size_2_t) == str(theirs._size_2_t)
