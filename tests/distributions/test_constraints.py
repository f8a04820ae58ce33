"""ember.distributions.constraints against torch's: the wrappers' constructors refuse what
torch refuses (a non-constraint base, a negative or non-int number of reinterpreted dims)
with torch's AssertionError and words, and accept what it accepts."""

import pytest
import torch

import ember


@pytest.mark.parametrize("call", [
    lambda C: C.independent(C.positive, -1),
    lambda C: C.independent(C.positive, 1.0),
    lambda C: C.independent(3, 1),
    lambda C: C.independent(None, 0),
    lambda C: C.MixtureSameFamilyConstraint(3),
    lambda C: C.MixtureSameFamilyConstraint("real"),
    lambda C: C.cat([C.positive, 3]),
    lambda C: C.stack([C.positive, 3]),
    lambda C: C.cat([C.positive, C.real], lengths=[1]),
], ids=["neg", "float", "int_base", "none_base", "mixture_int", "mixture_str", "cat", "stack",
        "cat_lengths"])
def test_wrapper_constructors_refuse_like_torch(call):
    with pytest.raises(AssertionError) as t_info:
        call(torch.distributions.constraints)
    with pytest.raises(AssertionError) as e_info:
        call(ember.distributions.constraints)
    assert str(e_info.value) == str(t_info.value)


@pytest.mark.parametrize("ndims", [0, 1, 2])
def test_independent_accepts_what_torch_accepts(ndims):
    value = [[[1.0, -1.0], [2.0, 3.0]], [[0.5, 0.5], [1.0, 0.0]]]
    tc = torch.distributions.constraints.independent(torch.distributions.constraints.positive,
                                                     ndims)
    ec = ember.distributions.constraints.independent(ember.distributions.constraints.positive,
                                                     ndims)
    assert repr(ec) == repr(tc) and ec.event_dim == tc.event_dim
    assert ec.check(ember.tensor(value)).tolist() == tc.check(torch.tensor(value)).tolist()
    mt = torch.distributions.constraints.MixtureSameFamilyConstraint(tc)
    me = ember.distributions.constraints.MixtureSameFamilyConstraint(ec)
    assert repr(me) == repr(mt)
    assert me.check(ember.tensor(value)).tolist() == mt.check(torch.tensor(value)).tolist()
