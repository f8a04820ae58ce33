"""Public functions carry the names PyTorch's do (`torch.arccos.__name__` is "arccos", not
the "acos" of the function ember publishes under both names): reprs, torch.fx node names
and name-keyed tables read them."""

import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF


def _functions(space, names):
    for name in names:
        f = getattr(space, name, None)
        if callable(f) and not isinstance(f, type) and hasattr(f, "__name__"):
            yield name, f


@pytest.mark.parametrize("theirs, ours", [(torch, ember), (TF, EF), (torch.Tensor, ember.Tensor)],
                         ids=["torch", "nn.functional", "Tensor"])
def test_every_shared_public_function_has_torchs_name(theirs, ours):
    names = [n for n in dir(theirs) if not n.startswith("__")]
    differ = [(name, f.__name__, getattr(ours, name).__name__)
              for name, f in _functions(theirs, names)
              if hasattr(getattr(ours, name, None), "__name__")
              and getattr(ours, name).__name__ != f.__name__]
    assert differ == []


def test_an_alias_is_its_own_function_and_runs_the_same_code():
    assert ember.arccos is not ember.acos and ember.arccos.__code__ is ember.acos.__code__
    assert repr(ember.arccos).startswith("<function arccos at ")
    x = ember.tensor([0.25, -0.5])
    assert ember.equal(ember.arccos(x), ember.acos(x))
    assert ember.Tensor.float.__qualname__ == "Tensor.float"
