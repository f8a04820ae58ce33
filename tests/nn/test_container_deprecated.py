"""nn.Container: deprecated, warns FutureWarning on subclassing and on building, as torch's."""

import warnings

import pytest
import torch

import ember


def _record(lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        class Sub(lib.nn.Container):
            pass

        c = lib.nn.Container(a=lib.nn.Linear(1, 1), b=lib.nn.ReLU())
    return w, c


def test_warnings_match_torch():
    (ew, _), (tw, _) = _record(ember), _record(torch)
    assert [(x.category, str(x.message)) for x in ew] == [
        (x.category, str(x.message)) for x in tw]
    assert len(ew) == 2
    assert all(x.filename == __file__ for x in ew)  # reported at the user's line


def test_children_and_repr_match_torch():
    with pytest.warns(FutureWarning):
        e = ember.nn.Container(a=ember.nn.Linear(1, 1), b=ember.nn.ReLU())
    with pytest.warns(FutureWarning):
        t = torch.nn.Container(a=torch.nn.Linear(1, 1), b=torch.nn.ReLU())
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict()) == ["a.weight", "a.bias"]
    assert isinstance(e, ember.nn.Module)
