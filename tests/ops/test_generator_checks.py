"""A `generator=` that is no Generator (a seed passed in its place, the typical mistake) is
refused with torch's exception type and words: the argument named for an op with one
signature, every overload listed, with the given argument types, for one with several."""

import pytest
import torch

import ember

CALLS = {
    "randn": lambda L, g: L.randn(2, generator=g),
    "randn_dtype": lambda L, g: L.randn(2, 3, generator=g, dtype=L.float64),
    "rand": lambda L, g: L.rand(2, 3, generator=g),
    "rand_size_kw": lambda L, g: L.rand(size=(2,), generator=g, requires_grad=True),
    "randint_high": lambda L, g: L.randint(5, (2,), generator=g),
    "randint_low_high": lambda L, g: L.randint(0, 5, (2,), generator=g),
    "randperm": lambda L, g: L.randperm(4, generator=g),
    "normal_floats": lambda L, g: L.normal(0.0, 1.0, (2,), generator=g),
    "normal_tensor": lambda L, g: L.normal(L.ones(3), 1.0, generator=g),
    "normal_tensors": lambda L, g: L.normal(L.ones(3), L.ones(3), generator=g),
    "bernoulli": lambda L, g: L.bernoulli(L.ones(3) * 0.5, generator=g),
    "bernoulli_p": lambda L, g: L.bernoulli(L.ones(3), 0.5, generator=g),
    "random_": lambda L, g: L.ones(3).random_(generator=g),
    "random_to": lambda L, g: L.ones(3).random_(7, generator=g),
    "random_from_to": lambda L, g: L.ones(3).random_(2, 7, generator=g),
    "rand_like": lambda L, g: L.rand_like(L.ones(3), generator=g),
    "randn_like": lambda L, g: L.randn_like(L.ones(3), generator=g, dtype=L.float64),
    "randint_like": lambda L, g: L.randint_like(L.ones(3), 5, generator=g),
    "randint_like_low": lambda L, g: L.randint_like(L.ones(3), 1, 5, generator=g),
    "multinomial": lambda L, g: L.multinomial(L.ones(3), 1, generator=g),
    "poisson": lambda L, g: L.poisson(L.ones(3), generator=g),
    "uniform_": lambda L, g: L.ones(3).uniform_(generator=g),
    "normal_": lambda L, g: L.ones(3).normal_(generator=g),
    "exponential_": lambda L, g: L.ones(3).exponential_(generator=g),
}


def _outcome(lib, call, g):
    try:
        call(lib, g)
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the type and words are compared
        return type(exc).__name__, str(exc).replace("ember.", "torch.")  # (as under ember.run)


@pytest.mark.parametrize("bad", [42, "cpu", 1.5], ids=["int", "str", "float"])
@pytest.mark.parametrize("name", list(CALLS))
def test_wrong_generator_is_refused_in_torchs_words(name, bad):
    got = _outcome(ember, CALLS[name], bad)
    assert got != "ok"
    assert got == _outcome(torch, CALLS[name], bad)


@pytest.mark.parametrize("name", list(CALLS))
def test_a_generator_or_none_is_taken(name):
    for lib in (ember, torch):
        assert _outcome(lib, CALLS[name], lib.Generator().manual_seed(0)) == "ok"
        assert _outcome(lib, CALLS[name], None) == "ok"
