"""Model surgery against torch.nn: set_submodule, state-dict post-hooks (public and
private forms), positional state_dict arguments, skip_init and
nn.modules.utils.consume_prefix_in_state_dict_if_present (nn/modules/module.py,
nn/modules/_state_dict.py, nn/modules/utils.py, nn/utils/init.py)."""

import warnings
from collections import OrderedDict

import pytest
import torch

import ember

from helpers import same_message


def _tree(L):
    return L.nn.Sequential(OrderedDict(body=L.nn.Sequential(L.nn.Linear(2, 2), L.nn.ReLU()),
                                       head=L.nn.Linear(2, 1)))


def _names(m):
    return [(n, type(c).__name__) for n, c in m.named_modules()]


@pytest.mark.parametrize("target,strict",
                         [("head", False), ("body.1", True), ("body.extra", False)])
def test_set_submodule_replaces_or_adds_as_torch(target, strict):
    got = []
    for L in (ember, torch):
        m = _tree(L)
        m.set_submodule(target, L.nn.Tanh(), strict=strict)
        got.append(_names(m))
    assert got[0] == got[1]


@pytest.mark.parametrize("call,kind", [
    (lambda L, m: m.set_submodule("body.extra", L.nn.Tanh(), strict=True), AttributeError),
    (lambda L, m: m.set_submodule("nope.x", L.nn.Tanh()), AttributeError),
    (lambda L, m: m.set_submodule("", L.nn.Tanh()), ValueError),
    (lambda L, m: m.set_submodule("head.weight", L.nn.Tanh()), AttributeError),
])
def test_set_submodule_errors_as_torch(call, kind):
    same_message(lambda L: call(L, _tree(L)), kind)


def test_set_submodule_refuses_a_non_module():
    msgs = [str(pytest.raises(ValueError, _tree(L).set_submodule, "head", 3).value)
            for L in (ember, torch)]
    assert msgs == ["`module` is not an nn.Module, found <class 'int'>"] * 2


def test_public_post_hook_must_edit_in_place():
    def returns(m, sd, prefix, meta):
        return {"x": 1}

    assert same_message(lambda L: _hooked(L, returns).state_dict()) == \
        "state_dict post-hook must return None"


def _hooked(L, hook, private=False):
    m = L.nn.Linear(1, 1)
    (m._register_state_dict_hook if private else m.register_state_dict_post_hook)(hook)
    return m


def test_private_post_hook_may_replace_the_root_dict():
    got = [list(_hooked(L, lambda m, sd, p, meta: {"only": 1}, private=True).state_dict())
           for L in (ember, torch)]
    assert got == [["only"], ["only"]]


def test_one_function_cannot_be_both_hook_forms():
    def hook(m, sd, prefix, meta):
        return None

    same_message(lambda L: _hooked(L, hook)._register_state_dict_hook(hook))


def test_positional_state_dict_arguments_warn_and_fill_prefix():
    got = []
    for L in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            keys = list(L.nn.Linear(1, 1).state_dict(OrderedDict(), "p."))
        got.append((keys, [(x.category, str(x.message)) for x in w]))
    assert got[0] == got[1]
    assert got[0][1][0][0] is FutureWarning


def test_mixin_methods_are_named_as_module_methods():
    assert "Module.to_empty()" in same_message(lambda L: L.nn.Linear(1, 1).to_empty(), TypeError)
    assert ember.nn.Module.load_state_dict.__qualname__ == "Module.load_state_dict"


def test_skip_init_draws_nothing_and_builds_on_the_device():
    got = []
    for L in (ember, torch):
        L.manual_seed(0)
        m = L.nn.utils.skip_init(L.nn.Linear, 3, 2, bias=False)
        got.append((tuple(m.weight.shape), str(m.weight.device), m.bias, L.rand(2).tolist(),
                    type(m.weight).__name__, m.weight.requires_grad))
    assert got[0] == got[1]


@pytest.mark.parametrize("cls", ["ReLU", "Module"])
def test_skip_init_refuses_modules_without_a_device_argument(cls):
    same_message(lambda L: L.nn.utils.skip_init(getattr(L.nn, cls)))


def test_skip_init_refuses_a_non_module():
    same_message(lambda L: L.nn.utils.skip_init(dict))


def test_consume_prefix_renames_keys_and_metadata_as_torch():
    got = []
    for L in (ember, torch):
        model = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
        sd = L.nn.DataParallel(model).state_dict()
        L.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        got.append((list(sd), list(sd._metadata), str(model.load_state_dict(sd))))
    assert got[0] == got[1]


def test_ntuple_helpers_as_torch():
    from torch.nn.modules import utils as theirs

    from ember.nn.modules import utils as ours

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (1, 2), [4]):
            assert getattr(ours, name)(arg) == getattr(theirs, name)(arg)
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert ours._list_with_default([None, 4], [1, 2, 3]) == \
        theirs._list_with_default([None, 4], [1, 2, 3])
    assert ours._list_with_default(5, [1]) == 5
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        ours._list_with_default([1, 2], [1, 2])
