"""`save` refuses a function or class that cannot be found again by its name (a lambda,
a local function, a shadowed one) with Python's PicklingError, as torch.save does
(serialization/_pickler.py)."""

import io

import pytest
import torch

import ember


def _outer():
    def local_fn():
        return 0

    return local_fn


def _shadowed():
    return 1


_SHADOWED = _shadowed


def _shadowed():  # noqa: F811 - the module name now points at another function
    return 2


def _hooked(L, hook):
    m = L.nn.Linear(1, 1)
    m.register_forward_hook(hook)
    return m


def _error(L, obj):
    with pytest.raises(Exception) as e:
        L.save(obj, io.BytesIO())
    text = str(e.value)
    return type(e.value).__name__, text.split(" at 0x")[0], text.split(">")[-1]


@pytest.mark.parametrize("make", [lambda L: {"f": lambda: 0}, lambda L: [_outer()],
                                  lambda L: {"f": _SHADOWED},
                                  lambda L: _hooked(L, lambda m, i, o: o)])
def test_unpicklable_callables_are_refused_as_torch(make):
    assert _error(ember, make(ember)) == _error(torch, make(torch))


def test_named_functions_and_classes_still_save():
    buf = io.BytesIO()
    ember.save({"f": _outer, "cls": io.BytesIO}, buf)
    back = torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert back["f"] is _outer and back["cls"] is io.BytesIO
