"""arange's arguments as PyTorch's parser takes them: a bool bound is integral, a bound
that is no Number (or a dtype that is no dtype) is refused in the parser's words, naming
the one overload a single argument fits or else listing all three."""

import pytest

from helpers import same_message, same_result

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
