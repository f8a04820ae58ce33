"""The varargs-size factories (zeros, ones, empty, rand, randn, new_zeros, new_ones,
new_empty) also take their size by keyword, `zeros(size=(2, 3))`, as PyTorch's parser does:
same shape, dtype and (for the random ones) the same draws; a size given twice or as a bare
int by keyword raises PyTorch's TypeError."""

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
