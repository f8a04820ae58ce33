"""Ops PyTorch refuses for complex (and bool) inputs refuse them in its types and words:
the rounding functions, the clamps behind relu / hardtanh, histc, isin and nanmean; and a
complex tensor cast to bool keeps its imaginary parts, so that cast does not warn."""

import warnings

import pytest
import torch

import ember

from helpers import assert_same, same_message

Z = [1.5 + 1j, -2j]


def z(lib, dtype="complex64"):
    return lib.tensor(Z, dtype=getattr(lib, dtype))


NOT_IMPLEMENTED = {
    "floor": lambda L: L.floor(z(L)),
    "ceil": lambda L: L.ceil(z(L, "complex128")),
    "trunc": lambda L: L.trunc(z(L)),
    "fix": lambda L: L.fix(z(L)),
    "floor_": lambda L: z(L).floor_(),
    "round": lambda L: L.round(z(L)),
    "round_": lambda L: z(L).round_(),
    "round decimals": lambda L: L.round(z(L), decimals=2),
    "floor bool": lambda L: L.floor(L.tensor([True])),
    "ceil_ bool": lambda L: L.tensor([True]).ceil_(),
    "round bool": lambda L: L.round(L.tensor([True])),
    "relu": lambda L: L.nn.functional.relu(z(L)),
    "relu inplace": lambda L: L.nn.functional.relu(z(L), inplace=True),
    "torch.relu": lambda L: L.relu(z(L, "complex128")),
    "relu6": lambda L: L.nn.functional.relu6(z(L)),
    "hardtanh": lambda L: L.nn.functional.hardtanh(z(L), -0.5, 0.5),
    "histc": lambda L: L.histc(z(L)),
    "histc range": lambda L: L.histc(z(L), bins=3, min=0, max=1),
    "histc bool": lambda L: L.histc(L.tensor([True, False])),
    # the gamma family names the kernel torch runs: digamma / trigamma for polygamma's n = 0
    # and 1, an arange for mvlgamma
    "digamma": lambda L: L.digamma(z(L)),
    "psi": lambda L: L.special.psi(z(L)),
    "digamma_": lambda L: z(L).digamma_(),
    "polygamma 0": lambda L: L.polygamma(0, z(L)),
    "polygamma 1": lambda L: L.polygamma(1, z(L)),
    "polygamma_ 1": lambda L: z(L).polygamma_(1),
    "polygamma 3": lambda L: L.special.polygamma(3, z(L)),
    "mvlgamma": lambda L: L.mvlgamma(z(L), 2),
    "multigammaln": lambda L: L.special.multigammaln(z(L), 1),
    "erfinv": lambda L: L.erfinv(z(L)),
    "erfinv_": lambda L: z(L).erfinv_(),
    "lgamma": lambda L: L.lgamma(z(L)),
}

RUNTIME = {
    "isin elements": lambda L: L.isin(z(L), L.tensor([1.0])),
    "isin test": lambda L: L.isin(L.tensor([1.0]), z(L, "complex128")),
    "isin complex number": lambda L: L.isin(L.tensor([1.0]), 1j),
    "isin number in complex": lambda L: L.isin(2j, z(L)),
    "nanmean": lambda L: L.nanmean(z(L)),
    "nanmean dim": lambda L: z(L).nanmean(0),
}


@pytest.mark.parametrize("name", sorted(NOT_IMPLEMENTED))
def test_not_implemented_as_torch(name):
    same_message(NOT_IMPLEMENTED[name], NotImplementedError)


@pytest.mark.parametrize("name", sorted(RUNTIME))
def test_runtime_error_as_torch(name):
    same_message(RUNTIME[name], RuntimeError)


def test_real_inputs_still_work():
    x = [1.25, -2.5, 3.0]
    for fn in ("floor", "ceil", "trunc", "round", "relu"):
        assert_same(getattr(ember, fn)(ember.tensor(x)), getattr(torch, fn)(torch.tensor(x)))
    assert_same(ember.isin(ember.tensor(x), 3.0), torch.isin(torch.tensor(x), 3.0))


def test_complex_to_bool_does_not_warn():
    """bool tests the whole complex value against zero: nothing is discarded, no warning."""
    for lib in (ember, torch):
        zs = lib.tensor([1j, 0j, 2 + 0j])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = [zs.bool(), zs.to(lib.bool), lib.zeros(3, dtype=lib.bool).copy_(zs)]
        assert [g.tolist() for g in got] == [[True, False, True]] * 3
    # (the warning of the other casts, once a process, is in tests/test_user_warnings.py)


@pytest.mark.parametrize("call", [
    lambda L: L.randint(0, 5, (2,), dtype=L.complex64),
    lambda L: L.ones(2, dtype=L.complex64).random_(0, 5),
    lambda L: L.ones(2, dtype=L.complex128).random_(5),
    lambda L: L.randint_like(L.ones(2, dtype=L.complex64), 5),
], ids=["randint", "random_ from to", "random_ to", "randint_like"])
def test_random_integers_into_a_complex_tensor_are_refused_by_the_bounds_check(call):
    same_message(call, RuntimeError)


def test_random_full_range_into_a_complex_tensor_is_refused_by_its_kernel():
    same_message(lambda L: L.ones(2, dtype=L.complex64).random_(), NotImplementedError)
