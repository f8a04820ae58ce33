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
}


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


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_parser_words(name):
    same_message(REFUSED[name], TypeError)
