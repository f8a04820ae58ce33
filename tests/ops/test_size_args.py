"""The varargs-size factories (zeros, ones, empty, rand, randn, new_zeros, new_ones,
new_empty) also take their size by keyword, `zeros(size=(2, 3))`, as PyTorch's parser does:
same shape, dtype and (for the random ones) the same draws; a size given twice or as a bare
int by keyword raises PyTorch's TypeError."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, same_message

FACTORIES = {
    "zeros": lambda m, *a, **kw: m.zeros(*a, **kw),
    "ones": lambda m, *a, **kw: m.ones(*a, **kw),
    "empty": lambda m, *a, **kw: m.empty(*a, **kw).zero_(),
    "rand": lambda m, *a, **kw: m.rand(*a, **kw),
    "randn": lambda m, *a, **kw: m.randn(*a, **kw),
    "new_zeros": lambda m, *a, **kw: m.ones(1, dtype=m.float64).new_zeros(*a, **kw),
    "new_ones": lambda m, *a, **kw: m.ones(1, dtype=m.int16).new_ones(*a, **kw),
    "new_empty": lambda m, *a, **kw: m.ones(1).new_empty(*a, **kw).zero_(),
}


@pytest.mark.parametrize("size", [(2, 3), [4], (), "Size"])
@pytest.mark.parametrize("name", FACTORIES)
def test_size_by_keyword_matches_torch(name, size):
    def call(m):
        m.manual_seed(0)
        s = m.Size([2, 2]) if size == "Size" else size
        return FACTORIES[name](m, size=s)

    assert_same(call(ember), call(torch))  # (exact: copies and seeded draws)


@pytest.mark.parametrize("name", ["zeros", "ones", "rand", "new_ones"])
def test_bad_keyword_sizes_raise_like_torch(name):
    f = FACTORIES[name]
    same_message(lambda m: f(m, size=2), TypeError)
    if name != "rand":  # (rand's several overloads word it as an invalid combination)
        same_message(lambda m: f(m, 2, size=(2,)), TypeError)


def test_keyword_size_with_dtype_and_grad():
    for m in (ember, torch):
        t = m.zeros(size=(2,), dtype=m.int32)
        assert t.dtype == m.int32 and t.shape == (2,)
        assert m.ones(size=[3], requires_grad=True).requires_grad


# --- the int lists of the shape ops (permute's dims, reshape's shape, ...) -------------------
# Each is read as torch's parser reads an int list: ints one by one on the method form only, a
# bad first element (bool included) refuses the argument's type, a later one fails to unpack,
# and the position counts `self` on the function form only.

def _t(m):
    return m.arange(48.0).reshape(4, 6, 2)


BAD_INT_LISTS = [
    lambda m: _t(m).permute(0, 1, 2.0),
    lambda m: _t(m).permute((0, 1, None)),
    lambda m: _t(m).permute(1.0, 0, 2),
    lambda m: _t(m).permute((True, 0, 1)),
    lambda m: _t(m).permute(None),
    lambda m: _t(m).permute(range(3)),
    lambda m: m.permute(_t(m), (0, 1, 2.0)),
    lambda m: m.permute(_t(m), (1.0, 0, 2)),
    lambda m: m.permute(_t(m), 1),
    lambda m: m.permute(_t(m), 2, 1, 0),
    lambda m: _t(m).permute(dims=1),
    lambda m: _t(m).permute(dims=(0, 1.0, 2)),
    lambda m: _t(m).permute(2, 1, 0, dims=(0, 1, 2)),
    lambda m: _t(m).permute(dim=(0, 1, 2)),
    lambda m: _t(m).view(4, "a"),
    lambda m: _t(m).view((4, 12, 1.0)),
    lambda m: _t(m).view(4.0, 12),
    lambda m: _t(m).view([4.0]),
    lambda m: _t(m).view(None),
    lambda m: _t(m).view(m.tensor([4, 12])),
    lambda m: _t(m).view(),
    lambda m: _t(m).view(size=(4.0, 12)),
    lambda m: _t(m).view(size=4),
    lambda m: _t(m).reshape(4.0),
    lambda m: _t(m).reshape("ab"),
    lambda m: _t(m).reshape(True, 48),
    lambda m: _t(m).reshape([4, 12.5]),
    lambda m: _t(m).reshape(m.tensor([4, 12])),
    lambda m: m.reshape(_t(m), (4.0, 12)),
    lambda m: m.reshape(_t(m), 48),
    lambda m: m.reshape(_t(m), 4, 12),
    lambda m: m.reshape(_t(m), shape=[4.0]),
    lambda m: _t(m).expand(4, 6, None),
    lambda m: _t(m).expand((4.0, 6, 2)),
    lambda m: _t(m).repeat(1, 1, "2"),
    lambda m: _t(m).repeat((1.0, 1, 2)),
    lambda m: _t(m).tile(1.0, 2),
    lambda m: m.tile(_t(m), (1, 2.0)),
    lambda m: m.tile(_t(m), 2),
    lambda m: m.tile(_t(m), 1, 2),
    lambda m: _t(m).flip(1.0),
    lambda m: _t(m).flip(0, 1.0),
    lambda m: _t(m).flip((1.0,)),
    lambda m: m.flip(_t(m), (0, 1.0)),
    lambda m: m.flip(_t(m), 0),
    lambda m: m.unflatten(_t(m), 1, [2.0, 3]),
    lambda m: _t(m).unflatten(1, (2, 3.0)),
    lambda m: _t(m).unflatten(1, 6),
    lambda m: m.roll(_t(m), 1.0, 0),
    lambda m: _t(m).roll((1, 1.0), (0, 1)),
    lambda m: _t(m).roll(1, (0, 1.0)),
    lambda m: m.roll(_t(m), 1, 0.0),
]


@pytest.mark.parametrize("call", BAD_INT_LISTS)
def test_bad_int_lists_refused_in_torchs_words(call):
    same_message(call, TypeError)


def test_duplicate_permute_dims_in_torchs_words():
    same_message(lambda m: _t(m).permute(0, 0, 1))
    same_message(lambda m: m.permute(_t(m), (2, -1, 0)))


GOOD_INT_LISTS = [
    lambda m: _t(m).permute(0, True, 2),  # (a later bool unpacks as an int)
    lambda m: _t(m).permute(dims=(2, 0, 1)),
    lambda m: m.permute(_t(m), dims=[2, 0, 1]),
    lambda m: _t(m).view(size=(4, 12)),
    lambda m: _t(m).view(m.tensor(48)),
    lambda m: _t(m).reshape(np.int64(48)),
    lambda m: _t(m).reshape(m.tensor([48])),
    lambda m: _t(m).reshape(shape=(8, -1)),
    lambda m: _t(m).expand(size=(2, 4, 6, 2)),
    lambda m: _t(m).expand(m.Size([4, 6, 2])),
    lambda m: _t(m).repeat(repeats=(1, 2, 1)),
    lambda m: _t(m).tile(2),
    lambda m: _t(m).flip(0),
    lambda m: _t(m).flip(0, -1),
    lambda m: _t(m).roll(np.int64(1), 0),
    lambda m: m.roll(_t(m), (1, 2), (0, 1)),
    lambda m: _t(m).unflatten(1, [2, -1]),
]


@pytest.mark.parametrize("call", GOOD_INT_LISTS)
def test_good_int_lists_read_as_torch(call):
    assert_same(call(ember), call(torch), check_stride=True)  # (exact: views and copies)


# --- int parameters of the dim-swapping views, and required arguments left out -------------

BAD_INT_ARGS = [
    lambda m: _t(m).transpose(0.0, 1),
    lambda m: _t(m).transpose(True, 0),  # (a bool is no int here)
    lambda m: _t(m).transpose(m.tensor(0.0), 1),
    lambda m: _t(m).transpose(0, "1"),
    lambda m: m.transpose(_t(m), 0, 1.0),
    lambda m: _t(m).swapaxes(0, 1.0),
    lambda m: m.swapaxes(_t(m), 0.0, 1),
    lambda m: _t(m).swapdims(0, 1.0),
    lambda m: m.swapdims(_t(m), 0, None),
    lambda m: _t(m).movedim(0, 1.0),
    lambda m: m.movedim(_t(m), 0, 1.0),
    lambda m: _t(m).movedim((0, 1.0), (1, 0)),
    lambda m: _t(m).movedim((0.0, 1), (1, 0)),
    lambda m: _t(m).movedim([0, 1], 1),
    lambda m: _t(m).movedim(0, (1,)),
    lambda m: _t(m).movedim(True, 1),
    lambda m: _t(m).moveaxis(0, 1.0),
    lambda m: m.moveaxis(_t(m), (0, 1.0), (1, 0)),
    lambda m: _t(m).movedim(None, 0),
    # required arguments left out: the parser's words, not Python's
    lambda m: _t(m).transpose(),
    lambda m: _t(m).transpose(0),
    lambda m: m.transpose(_t(m), 0),
    lambda m: _t(m).swapaxes(0),
    lambda m: _t(m).swapdims(0),
    lambda m: _t(m).movedim(0),
    lambda m: _t(m).moveaxis(),
    lambda m: _t(m).permute(),
    lambda m: _t(m).reshape(),
    lambda m: _t(m).expand(),
    lambda m: _t(m).repeat(),
    lambda m: _t(m).flip(),
    lambda m: _t(m).tile(),
    lambda m: _t(m).roll(),
]


@pytest.mark.parametrize("call", BAD_INT_ARGS)
def test_bad_int_args_refused_in_torchs_words(call):
    same_message(call, TypeError)


GOOD_INT_ARGS = [
    lambda m: _t(m).transpose(np.int64(0), 1),
    lambda m: _t(m).transpose(m.tensor(0), -1),
    lambda m: m.swapaxes(_t(m), axis0=0, axis1=1),
    lambda m: _t(m).swapaxes(axis0=0, axis1=2),
    lambda m: m.swapdims(_t(m), dim0=0, dim1=1),
    lambda m: _t(m).movedim(np.int64(0), -1),
    lambda m: _t(m).moveaxis((0, 1), (2, 0)),
    lambda m: m.movedim(_t(m), [0], [1]),
    lambda m: _t(m).expand(4, 6, 2, implicit=True),
]


@pytest.mark.parametrize("call", GOOD_INT_ARGS)
def test_good_int_args_read_as_torch(call):
    assert_same(call(ember), call(torch), check_stride=True)  # (exact: views)


def _s(m):
    return m.arange(8.0).reshape(4, 1, 2)


BAD_SQUEEZE_DIMS = [
    lambda m: _s(m).squeeze(1.0),
    lambda m: m.squeeze(_s(m), 1.0),
    lambda m: _s(m).squeeze((1, 1.0)),
    lambda m: _s(m).squeeze((1.0,)),
    lambda m: _s(m).squeeze(None),  # (None is no overload's: `squeeze()` takes them all)
    lambda m: m.squeeze(_s(m), None),
    lambda m: _s(m).squeeze(1, 1.0),
    lambda m: _s(m).squeeze(True),
    lambda m: _s(m).squeeze_(1.0),
    lambda m: _s(m).squeeze_(None),
    lambda m: _s(m).unsqueeze(1.0),
    lambda m: _s(m).unsqueeze(True),
    lambda m: m.unsqueeze(_s(m), None),
]


@pytest.mark.parametrize("call", BAD_SQUEEZE_DIMS)
def test_bad_squeeze_dims_refused_in_torchs_words(call):
    same_message(call, TypeError)


@pytest.mark.parametrize("call", [
    lambda m: _s(m).squeeze(), lambda m: m.squeeze(_s(m)), lambda m: _s(m).squeeze(1),
    lambda m: m.squeeze(_s(m), (1,)), lambda m: _s(m).squeeze(0, 1, 2),
    lambda m: _s(m).squeeze(axis=1), lambda m: m.squeeze(_s(m), dim=[0, 1]),
    lambda m: _s(m).squeeze(np.int64(1)), lambda m: _s(m).clone().squeeze_(),
    lambda m: _s(m).clone().squeeze_(1, 0), lambda m: _s(m).unsqueeze(np.int64(-1)),
])
def test_good_squeeze_dims_read_as_torch(call):
    assert_same(call(ember), call(torch), check_stride=True)  # (exact: views)
