"""trapezoid / cumulative_trapezoid check their arguments as PyTorch does: a 1-D `x` needs
one value per sample point, a 0-d `y` has no dim to integrate along, and no intervals give
an empty cumulative result."""

import pytest
import torch

from helpers import same_message, same_result

MISMATCHED = {
    "short x": lambda L, f: f(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2])),
    "long x": lambda L, f: f(L.tensor([1.0, 2, 3]), L.tensor([1.0, 2, 3, 4])),
    "x along dim 0": lambda L, f: f(L.ones(2, 3), L.arange(3.0), dim=0),
}


@pytest.mark.parametrize("fn", ["trapezoid", "cumulative_trapezoid"])
@pytest.mark.parametrize("case", sorted(MISMATCHED))
def test_one_x_per_sample_point(fn, case):
    msg = same_message(lambda L: MISMATCHED[case](L, getattr(L, fn)))
    assert msg.startswith(fn + ":")


def test_zero_dim_y():
    same_message(lambda L: L.trapezoid(L.tensor(1.0)), IndexError)


@pytest.mark.parametrize("shape", [(2, 0), (0,)])
def test_cumulative_without_intervals(shape):
    same_result(lambda L: L.cumulative_trapezoid(L.ones(shape)))


def test_matching_x_still_integrates():
    # NOTE: exact: three products and a three-term sum, in the same order on both sides
    same_result(lambda L: L.trapezoid(L.ones(2, 3), L.arange(2.0), dim=0))
    same_result(lambda L: L.cumulative_trapezoid(L.tensor([1.0, 2, 4]), L.tensor([0.0, 1, 3])))


# calls that fit neither overload (x with dx, a number for x, an explicit None, three
# positionals): PyTorch's parser lists the overloads, its keywords in its map's order, and
# notes why each failed when the call has as many arguments as the printed signature
REFUSED = {
    "x and dx": lambda L, f: f(L.ones(3), L.ones(3), dx=2.0),
    "dx then dim": lambda L, f: f(L.ones(3), L.ones(3), dx=2.0, dim=0),
    "dim then dx": lambda L, f: f(L.ones(3), L.ones(3), dim=0, dx=2),
    "x by keyword": lambda L, f: f(L.ones(2, 3), x=L.ones(3), dx=1.0, dim=1),
    "number for x": lambda L, f: f(L.ones(3), 2.0),
    "None for x": lambda L, f: f(L.ones(3), None, dx=2.0),
    "three positionals": lambda L, f: f(L.ones(3), L.ones(3), 1),
}


@pytest.mark.parametrize("fn", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_overload_mismatch(fn, case):
    msg = same_message(lambda L: REFUSED[case](L, getattr(L, fn)), TypeError)
    assert "invalid combination of arguments" in msg


@pytest.mark.parametrize("call", [
    lambda L: L.trapezoid(L.tensor([1.0, 2, 4]), dx=L.tensor(0.5)),
    lambda L: L.trapz(L.tensor([1.0, 2, 4]), dx=0.5, dim=0),
    lambda L: L.trapz(L.tensor([1.0, 2, 4]), L.tensor([0.0, 1, 3])),
    lambda L: L.trapz(L.tensor([1.0, 2, 4]), x=L.tensor([0.0, 1, 3])),
    lambda L: L.cumulative_trapezoid(L.tensor([1.0, 2, 4]), x=L.tensor([0.0, 1, 3]), dim=0),
])
def test_accepted_spellings(call):
    # NOTE: exact: a few float32 products and sums of small integers and halves
    same_result(call)


def test_trapz_names_trapezoid_in_its_length_check():
    assert same_message(lambda L: L.trapz(L.ones(3), L.ones(2))).startswith("trapezoid:")


# bool samples or coordinates are refused (after the dim's checks for trapezoid, before them
# for cumulative_trapezoid), a bool or complex dx too; trapz reads its dx as a double
BOOLS = {
    "bool y": lambda L, f: f(L.tensor([True, False, True])),
    "bool y with dx": lambda L, f: f(L.tensor([True, False, True]), dx=2),
    "bool x": lambda L, f: f(L.tensor([1.0, 2, 3]), L.tensor([True, False, True])),
    "bool y and x": lambda L, f: f(L.tensor([True, False]), L.tensor([True, False])),
    "bool y, short x": lambda L, f: f(L.tensor([True, False, True]), L.tensor([1.0, 2])),
    "bool 2-d x": lambda L, f: f(L.ones(2, 2), L.ones(2, 2, dtype=L.bool)),
    "bool dx": lambda L, f: f(L.tensor([1.0, 2, 3]), dx=True),
    "complex dx": lambda L, f: f(L.tensor([1.0, 2, 3]), dx=1j),
}


@pytest.mark.parametrize("fn", ["trapezoid", "cumulative_trapezoid"])
@pytest.mark.parametrize("case", sorted(BOOLS))
def test_bool_inputs_and_dx_refused(fn, case):
    msg = same_message(lambda L: BOOLS[case](L, getattr(L, fn)))
    assert msg.startswith(fn + ":")


def test_trapz_reads_a_bool_dx_as_a_double():
    # NOTE: exact: a sum of three small integers times 1.0
    same_result(lambda L: L.trapz(L.tensor([1.0, 2, 4]), dx=True))
    same_message(lambda L: L.trapz(L.tensor([1.0, 2, 4]), dx=L.tensor(1j)))


@pytest.mark.parametrize("call", [
    lambda L: L.trapezoid(L.tensor([], dtype=L.bool)),
    lambda L: L.trapezoid(L.ones(3, 0, dtype=L.int32)),
    lambda L: L.trapezoid(L.ones(0, 3, dtype=L.float16, requires_grad=True), dim=0),
    lambda L: L.cumulative_trapezoid(L.ones(0, dtype=L.int32)),
    lambda L: L.cumulative_trapezoid(L.ones(2, 0, dtype=L.int64), L.ones(2, 0, dtype=L.int64)),
    lambda L: L.cumulative_trapezoid(L.ones(0, requires_grad=True)),
])
def test_no_samples_give_torchs_dtype(call):
    # trapezoid: zeros of y's dtype (no graph); cumulative_trapezoid: its formula's dtype
    out = same_result(call)
    assert out.requires_grad == call(torch).requires_grad


@pytest.mark.parametrize("call", [
    lambda L: L.cumulative_trapezoid(L.tensor(2.0)),
    lambda L: L.cumulative_trapezoid(L.tensor(2.0), dim=5),
    lambda L: L.cumulative_trapezoid(L.tensor(2.0), L.ones(3)),
    lambda L: L.cumulative_trapezoid(L.tensor(2.0), L.ones(3), dim=3),
    lambda L: L.cumulative_trapezoid(L.tensor(2.0), L.tensor(1.0)),
    lambda L: L.cumulative_trapezoid(L.tensor(2.0), L.tensor(1.0), dim=1),
    lambda L: L.trapezoid(L.tensor(2.0), L.ones(2, 2)),
    lambda L: L.trapezoid(L.tensor(2.0), dim=3),
])
def test_zero_dim_y_messages(call):
    same_message(call, IndexError)
