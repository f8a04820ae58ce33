"""grid_sample / affine_grid fail in PyTorch 2.13's words: a dtype mismatch is reported by
its dtype check in ScalarType names, an unsupported dtype names the CPU kernel, and
affine_grid's Python checks print `size` as the caller passed it."""

import pytest
import torch

import ember

from helpers import same_message


def same_words(call, kind):
    """Like `same_message`, reading `ember.Size` as the `torch.Size` it is under
    `import ember as torch`."""
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(kind) as info:
            call(lib)
        msgs.append(str(info.value).replace("ember.", "torch."))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("input_dtype,grid_dtype,dims", [
    ("float32", "float64", 2), ("float64", "float32", 2), ("float16", "float32", 2),
    ("float32", "float64", 3),
])
def test_grid_sample_dtype_mismatch(input_dtype, grid_dtype, dims):
    def call(L):
        x = L.ones(1, 1, *[4] * dims, dtype=getattr(L, input_dtype))
        g = L.zeros(1, *[2] * dims, dims, dtype=getattr(L, grid_dtype))
        return L.nn.functional.grid_sample(x, g, align_corners=False)

    same_message(call)


@pytest.mark.parametrize("dims", [2, 3])
def test_grid_sample_integer_input(dims):
    def call(L):
        x = L.ones(1, 1, *[4] * dims, dtype=L.long)
        g = L.zeros(1, *[2] * dims, dims, dtype=L.long)
        return L.nn.functional.grid_sample(x, g, align_corners=False)

    same_message(call, NotImplementedError)


@pytest.mark.parametrize("size", [(1, 1, 4, 4), [1, 1, 4, 4], "Size", (1, 1, 2, 2, 2),
                                  (1, 4, 4)])
def test_affine_grid_prints_size_as_given(size):
    def call(L):
        s = L.Size([1, 1, 4, 4]) if size == "Size" else size
        return L.nn.functional.affine_grid(L.zeros(1, 3, 3), s, align_corners=False)

    kind = NotImplementedError if len(size) == 3 else ValueError
    same_words(call, kind)


def test_affine_grid_empty_size_as_given():
    same_words(lambda L: L.nn.functional.affine_grid(L.zeros(1, 2, 3), (1, 1, 0, 4),
                                                     align_corners=False), ValueError)
