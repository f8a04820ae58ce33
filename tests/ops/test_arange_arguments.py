"""arange's arguments as PyTorch's parser takes them: a bool bound is integral, a bound
that is no Number (or a dtype that is no dtype) is refused in the parser's words, naming
the one overload a single argument fits or else listing all three; and the bounds, counts
and steps of arange, range, linspace, logspace and eye refused as torch refuses them."""

import pytest

import ember

from helpers import refusals_unlike_torch, same_message, same_result

ACCEPTED = {
    "bool end": lambda L: L.arange(True),
    "bool start": lambda L: L.arange(True, 3),
    "bool step": lambda L: L.arange(0, 3, True),
    "bool tensor end": lambda L: L.arange(L.tensor(True)),
    "bool with float": lambda L: L.arange(0.0, True),
    "long tensor end": lambda L: L.arange(L.tensor(3)),
    # a complex bound whose imaginary part is zero is read as its real part (a float)
    "complex end, zero imag": lambda L: L.arange(3 + 0j),
    "complex bounds, zero imag": lambda L: L.arange(0, 3 + 0j, 0.5 + 0j),
    "complex tensor end, zero imag": lambda L: L.arange(L.tensor(2 + 0j)),
    "range complex, zero imag": lambda L: L.range(0, 2 + 0j),
}


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_bounds_and_dtype(name):
    same_result(ACCEPTED[name])


REFUSED = {
    "str end": lambda L: L.arange("a"),
    "str end of two": lambda L: L.arange(0, "5"),
    "str step": lambda L: L.arange(0, 5, "1"),
    "None end after float": lambda L: L.arange(1.5, 5, None),
    "str dtype": lambda L: L.arange(0, 5, dtype="float32"),
}

# no complex or bool kernel (refused before the bounds are read), nor complex bounds
NO_KERNEL = {
    "complex64 dtype": lambda L: L.arange(3, dtype=L.complex64),
    "complex128 dtype, three bounds": lambda L: L.arange(0, 3, 1, dtype=L.complex128),
    "complex out": lambda L: L.arange(3, out=L.empty(0, dtype=L.complex64)),
    "complex dtype before complex bound": lambda L: L.arange(1j, dtype=L.complex64),
    "bool dtype": lambda L: L.arange(3, dtype=L.bool),
    "range complex dtype": lambda L: L.range(0, 2, dtype=L.complex128),
    "range bool dtype": lambda L: L.range(0, 2, dtype=L.bool),
}
COMPLEX_BOUND = {
    "complex end": lambda L: L.arange(0, 1j),
    "complex step": lambda L: L.arange(0, 3, 1j),
    "complex tensor bound": lambda L: L.arange(L.tensor(2j)),
    "range complex end": lambda L: L.range(0, 1j),
}


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
@pytest.mark.parametrize("name", sorted(NO_KERNEL))
def test_no_complex_or_bool_kernel(name):
    assert "not implemented for" in same_message(NO_KERNEL[name], NotImplementedError)


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
@pytest.mark.parametrize("name", sorted(COMPLEX_BOUND))
def test_complex_bound_refused(name):
    assert same_message(COMPLEX_BOUND[name]) == ("value cannot be converted to type double "
                                                 "without overflow")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_parser_words(name):
    same_message(REFUSED[name], TypeError)


NAN, INF = float("nan"), float("inf")

# the ranges' bad bounds, counts and steps, each refused with torch's type and words: a
# count that is no int, a bound that is no Number or Tensor, a bound tensor of many
# elements, a step of 0 or NaN, a bound that is not finite, None where no overload has None
SPACING_REFUSALS = {
    "linspace float steps": lambda L: L.linspace(0, 1, 1.5),
    "linspace bool steps": lambda L: L.linspace(0, 1, True),
    "linspace NaN steps": lambda L: L.linspace(0, 1, NAN),
    "linspace float tensor steps": lambda L: L.linspace(0, 1, L.tensor(3.0)),
    "linspace negative steps": lambda L: L.linspace(0, 1, -1),
    "linspace str start": lambda L: L.linspace("a", 1, 3),
    "linspace None end": lambda L: L.linspace(0, None, 3),
    "linspace 1-d start": lambda L: L.linspace(L.ones(2), 1, 3),
    "linspace 1-d end": lambda L: L.linspace(0, L.ones(1), 3),
    "linspace str dtype": lambda L: L.linspace(0, 1, 3, dtype="a"),
    "logspace float steps": lambda L: L.logspace(0, 1, 1.5),
    "logspace str base": lambda L: L.logspace(0, 1, 3, "a"),
    "logspace tensor base": lambda L: L.logspace(0, 1, 3, L.ones(2)),
    "logspace 1-d start": lambda L: L.logspace(L.ones(2), 1, 3),
    "arange tensor step": lambda L: L.arange(0, 5, L.ones(2)),
    "arange None end": lambda L: L.arange(0, None),
    "arange NaN end": lambda L: L.arange(NAN),
    "arange inf end": lambda L: L.arange(0, INF),
    "arange -inf start": lambda L: L.arange(-INF, 5),
    "arange NaN step": lambda L: L.arange(0, 5, NAN),
    "arange huge": lambda L: L.arange(0, 1e20),
    "range zero step": lambda L: L.range(0, 5, 0),
    "range NaN end": lambda L: L.range(0, NAN),
    "range tensor step": lambda L: L.range(0, 5, L.ones(2)),
    "range str start": lambda L: L.range("a", 5),
    "range inconsistent": lambda L: L.range(0, 5, -1),
    "eye None m": lambda L: L.eye(2, None),
    "eye float m": lambda L: L.eye(2, 1.5),
    "eye str n": lambda L: L.eye("a"),
}

SPACING_TAKEN = {
    "linspace int tensor steps": lambda L: L.linspace(0, 1, L.tensor(3)),
    "linspace 0-d bounds": lambda L: L.linspace(L.tensor(0.0), L.tensor(1.0), 3),
    "logspace tensor base": lambda L: L.logspace(0, 1, 3, L.tensor(2.0)),
    "arange inf step": lambda L: L.arange(0, 5, INF),
    "arange tensor step": lambda L: L.arange(0, 5, L.tensor(0.5)),
    "eye tensor n": lambda L: L.eye(L.tensor(2)),
}


def test_spacing_arguments_as_torch(monkeypatch):
    monkeypatch.setattr(ember._names, "prefix", "torch")
    wrong = refusals_unlike_torch(SPACING_REFUSALS)
    assert not wrong, "\n".join(wrong)
    for call in SPACING_TAKEN.values():
        same_result(call)
