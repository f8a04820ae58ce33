"""An operand that is neither a Tensor nor a number a pointwise op takes: refused with
torch's TypeError in its argument parser's words (ops/_arg_parser_text.py `operand_error`),
as a function and as a Tensor method, in place and not."""

import pytest

from helpers import same_message


class Odd:
    """No library knows this type."""


CALLS = {
    # one printed overload: the argument is named, with its position
    "add": lambda L, x: L.add(x, "a"),
    "add_method": lambda L, x: x.add("a"),
    "add_inplace": lambda L, x: x.add_("a"),
    "add_alpha": lambda L, x: L.add(x, x, alpha="a"),
    "add_number_alpha": lambda L, x: L.add(x, 1, alpha="a"),
    "add_inplace_alpha": lambda L, x: x.add_(x, alpha="a"),
    "sub_alpha_method": lambda L, x: x.sub(x, alpha="a"),
    "sub_inplace": lambda L, x: x.sub_(Odd()),
    "mul_none": lambda L, x: L.mul(x, None),
    "mul_inplace_none": lambda L, x: x.mul_(None),
    "div_method": lambda L, x: x.div("a"),
    "div_inplace": lambda L, x: x.div_([1]),
    # several overloads: listed, with why each missed when the count fits
    "div_rounded": lambda L, x: L.div(x, "a", rounding_mode="floor"),
    "true_divide": lambda L, x: L.true_divide(x, "a"),
    "floor_divide": lambda L, x: L.floor_divide(x, "a"),
    "pow": lambda L, x: L.pow(x, "a"),
    "pow_method": lambda L, x: x.pow("a"),
    "pow_inplace": lambda L, x: x.pow_(Odd()),
    "float_power": lambda L, x: L.float_power(x, "a"),
    "remainder": lambda L, x: L.remainder(x, "a"),
    "remainder_method": lambda L, x: x.remainder(Odd()),
    "fmod_inplace": lambda L, x: x.fmod_([2]),
    "eq": lambda L, x: L.eq(x, "a"),
    "eq_number_first": lambda L, x: L.eq(1, x),
    "lt_method": lambda L, x: x.lt("a"),
    "ge_inplace": lambda L, x: x.ge_("a"),
    "bitwise_and": lambda L, x: L.bitwise_and(x.int(), "a"),
    "bitwise_or_method": lambda L, x: x.int().bitwise_or(Odd()),
    "xlogy": lambda L, x: L.xlogy(x, "a"),
    "copysign": lambda L, x: L.copysign(x, "a"),
    "where": lambda L, x: L.where(x > 0, x, "a"),
    "lerp": lambda L, x: L.lerp(x, x, "a"),
    "lerp_method": lambda L, x: x.lerp(x, "a"),
    "lerp_inplace": lambda L, x: x.lerp_(1.0, 0.5),
    "masked_fill_method": lambda L, x: x.masked_fill(x > 0, "a"),
    "masked_fill_inplace": lambda L, x: x.masked_fill_(x > 0, Odd()),
    "fill_inplace": lambda L, x: x.fill_("a"),
    "clamp": lambda L, x: L.clamp(x, "a"),
    "clamp_method": lambda L, x: x.clamp("a"),
    "clamp_max_keyword": lambda L, x: x.clamp(max="a"),
    "clamp_inplace": lambda L, x: x.clamp_("a"),
    "clip": lambda L, x: L.clip(x, "a"),
    "clamp_min": lambda L, x: L.clamp_min(x, [1]),
    "clamp_min_method": lambda L, x: x.clamp_min("a"),
    "clamp_max_inplace": lambda L, x: x.clamp_max_("a"),
    "addcmul_value": lambda L, x: L.addcmul(x, x, x, value="a"),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_wrong_operand_type_is_refused_in_the_parsers_words(call):
    same_message(lambda L: call(L, L.ones(2)), TypeError)


def test_the_error_shows_as_a_plain_type_error():
    import ember

    with pytest.raises(TypeError) as info:
        ember.ones(2).add("a")
    assert type(info.value) is TypeError  # (what `type(e) is TypeError` checks see)


def test_the_method_is_the_function_under_another_code_name():
    """The method form runs the function's own code (no wrapper): only its name differs."""
    import ember

    assert ember.Tensor.add.__code__.co_code == ember.add.__code__.co_code
    assert ember.Tensor.add.__qualname__ == "Tensor.add"
    x = ember.tensor([1.0, 2.0])
    assert x.add(x, alpha=2).tolist() == ember.add(x, x, alpha=2).tolist() == [3.0, 6.0]
