"""multinomial refuses what PyTorch refuses, in its order and words (a wrong `out` dtype,
rows without categories), resizes its `out` without a warning, and returns an empty result
for no rows without drawing."""

import warnings

import pytest
import torch

import ember

from helpers import same_message, same_result


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "float16"])
def test_out_must_be_long(dtype):
    same_message(lambda L: L.multinomial(L.ones(2, 5), 3, out=L.empty(2, 3,
                                                                     dtype=getattr(L, dtype))))


def test_out_dtype_is_checked_after_the_input_and_before_the_count():
    same_message(lambda L: L.multinomial(L.ones(2, 5, dtype=L.long), 3, out=L.empty(2, 3)))
    same_message(lambda L: L.multinomial(L.ones(2, 5), 0, out=L.empty(2, 3)))


@pytest.mark.parametrize("shape, n, replacement", [
    ((2, 0), 1, True), ((2, 0), 2, True), ((0,), 1, True), ((0,), 3, True),
    ((2, 0), 1, False), ((0, 0), 1, False),
])
def test_rows_without_categories_refused_in_torchs_words(shape, n, replacement):
    same_message(lambda L: L.multinomial(L.ones(shape), n, replacement))


@pytest.mark.parametrize("shape, n, replacement", [
    ((0, 0), 1, True), ((0, 0), 2, True), ((0, 3), 2, False), ((0, 3), 4, True),
])
def test_no_rows_give_an_empty_result_and_draw_nothing(shape, n, replacement):
    def call(L):
        g = L.Generator().manual_seed(3)
        out = L.multinomial(L.ones(shape), n, replacement, generator=g)
        return out, L.rand(2, generator=g)  # (the stream is untouched)

    same_result(call)


@pytest.mark.parametrize("out_shape", [(7,), (2, 2), (0,), (2, 3)])
def test_out_is_resized_silently(out_shape):
    def call(L):
        g = L.Generator().manual_seed(0)
        out = L.empty(out_shape, dtype=L.long)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = L.multinomial(L.ones(2, 5), 3, generator=g, out=out)
        assert got is out
        return out

    same_result(call)


def test_out_view_of_wrong_shape_is_resized_as_torch():
    res = []
    for L in (torch, ember):
        g = L.Generator().manual_seed(0)
        out = L.empty(2, 3, dtype=L.long)[:, :2]
        L.multinomial(L.ones(2, 5), 3, generator=g, out=out)
        res.append((tuple(out.shape), out.stride(), out.tolist()))
    assert res[0] == res[1]
