"""torch.* function forms of Tensor methods (ops/function_forms.py) against torch: what they
compute, and the argument parser's words when the call does not fit."""

import pytest
import torch

import ember

from helpers import same_message, same_result

X = [1.5, -2.0, 0.0, 3.25]


@pytest.mark.parametrize("call", [
    lambda L: L.clamp_min_(L.tensor(X), 0),
    lambda L: L.clamp_min_(L.tensor(X), min=L.tensor(1.0)),
    lambda L: L.clamp_max_(L.tensor(X), 0.5),
    lambda L: L.deg2rad_(L.tensor(X)),
    lambda L: L.rad2deg_(L.tensor(X)),
    lambda L: L.sinc_(L.tensor(X)),
    lambda L: L.xlogy_(L.tensor(X).abs(), 2.0),
    lambda L: L.xlogy_(L.tensor(X).abs(), L.tensor([1.0, 2.0, 3.0, 4.0])),
    lambda L: L.detach(L.tensor(X, requires_grad=True) * 2),
    lambda L: L.get_device(L.tensor(X)),
    lambda L: L.is_distributed(L.tensor(X)),
    lambda L: L.tensor(X).is_distributed(),
    lambda L: L.as_strided_(L.arange(6.0), (2, 2), (1, 2), 1),
    lambda L: L.resize_as_(L.arange(6.0), L.ones(2, 2)),
], ids=["clamp_min_", "clamp_min_tensor", "clamp_max_", "deg2rad_", "rad2deg_", "sinc_",
        "xlogy_number", "xlogy_tensor", "detach", "get_device", "is_distributed",
        "Tensor.is_distributed", "as_strided_", "resize_as_"])
def test_each_form_computes_what_the_method_does(call):
    same_result(call)


def test_in_place_forms_write_into_their_input():
    for lib in (ember, torch):
        x = lib.tensor(X)
        assert lib.clamp_min_(x, 0) is x and lib.detach_(x) is x
        assert lib.as_strided_(x, (2,), (2,)) is x
        assert x.tolist() == [1.5, 0.0]


def test_detach_keeps_the_storage_and_leaves_the_graph():
    a = ember.tensor(X, requires_grad=True)
    d = ember.detach(a)
    assert not d.requires_grad and d.data_ptr() == a.data_ptr()
    same_message(lambda L: L.detach_(L.ones(3, requires_grad=True)[:2]))


@pytest.mark.parametrize("name", ["clamp_min_", "clamp_max_", "xlogy_", "deg2rad_", "sinc_",
                                  "detach", "detach_", "get_device", "is_distributed",
                                  "resize_as_", "as_strided_"])
@pytest.mark.parametrize("args", [(1,), (1, 2), (1, 2.5), (1, 2, 3)],
                         ids=["one", "two", "float", "three"])
def test_a_call_that_does_not_fit_is_refused_in_the_parsers_words(name, args):
    same_message(lambda L: getattr(L, name)(*args), TypeError)


def test_a_tensor_in_a_number_place_is_marked():
    same_message(lambda L: L.clamp_min_(1, L.ones(1)), TypeError)
    same_message(lambda L: L.clamp_max_(L.ones(1), "a"), TypeError)
