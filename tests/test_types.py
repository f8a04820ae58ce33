"""ember.types against torch.types: the aliases programs annotate with."""

import typing

import torch

import ember


def test_public_aliases_accept_the_same_values():
    for name in ("Number", "Device", "FileLike", "_size", "_TensorOrTensors"):
        assert hasattr(ember.types, name), name
    assert set(typing.get_args(ember.types.Number)) == set(typing.get_args(torch.types.Number))
    assert ember.types._Number == torch.types._Number == (int, float, bool)
    device_args = {a.__name__ for a in typing.get_args(ember.types.Device)}
    assert device_args == {a.__name__ for a in typing.get_args(torch.types.Device)}
    assert ember.types.__all__ == torch.types.__all__
    assert ember.types._int is int and ember.types._float is float and ember.types._bool is bool


def test_no_symbolic_values_in_ember():
    # isinstance against py_sym_types is False for every concrete value, in both
    for v in (1, 2.0, True, ember.ones(1)):
        assert not isinstance(v, ember.types.py_sym_types)
    assert not isinstance(3, torch.types.py_sym_types)


def test_annotations_resolve_through_ember_as_torch():
    def f(x: "ember.types.Number", d: "ember.types.Device" = None) -> "ember.types._size":
        return (int(x),)

    assert typing.get_type_hints(f)["x"] == ember.types.Number
    assert f(2.5) == (2,)
