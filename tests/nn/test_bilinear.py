"""`nn.functional.bilinear` / `nn.Bilinear` against torch 2.13: values and gradients, and
PyTorch's checks in its order (arguments, dtypes, ranks, batch dims, sizes, bias) before any
arithmetic, so a wrong input size names the mismatch rather than a failed reshape."""

from __future__ import annotations

import pytest
import torch

import ember

from helpers import assert_same, check_module, rand_array, same_message

r = lambda L, *s, dtype="float32": L.zeros(s, dtype=getattr(L, dtype))  # noqa: E731


def test_module_matches_torch_with_batch_dims():
    """(through a BLAS product and a float32 sum over the second input's features)"""
    torch.manual_seed(0)
    t_mod = torch.nn.Bilinear(5, 4, 3)
    e_mod = ember.nn.Bilinear(5, 4, 3)
    check_module(e_mod, t_mod, rand_array((2, 6, 5), seed=1), rand_array((2, 6, 4), seed=2),
                 rtol=1e-5, atol=1e-6)


def test_integer_inputs_all_of_one_dtype_compute():
    def call(L):
        x = L.ones(2, 3, dtype=L.int64)
        return L.nn.functional.bilinear(x, x, L.ones(4, 3, 3, dtype=L.int64))
    assert_same(call(ember), call(torch))


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.bilinear(r(L, 2, 8), r(L, 2, 7), r(L, 4, 8, 8)),
    lambda L: L.nn.functional.bilinear(r(L, 2, 7), r(L, 2, 8), r(L, 4, 8, 8)),
    lambda L: L.nn.functional.bilinear(r(L, 2, 8), r(L, 2, 8), r(L, 4, 8, 8), r(L, 3)),
    lambda L: L.nn.functional.bilinear(r(L, 2, 8), r(L, 2, 8), r(L, 4, 8, 8), r(L, 1, 4)),
    lambda L: L.nn.functional.bilinear(r(L, 2, 3, 8), r(L, 2, 8), r(L, 4, 8, 8)),
    lambda L: L.nn.functional.bilinear(r(L, 2, 3, 8), r(L, 2, 4, 8), r(L, 4, 8, 8)),
    lambda L: L.nn.functional.bilinear(r(L, 3, 7), r(L, 2, 8), r(L, 4, 8, 8)),
    lambda L: L.nn.functional.bilinear(r(L, 2, 8), r(L, 2, 8), r(L, 4, 8, 8, 1)),
    # a dtype mismatch comes first, whatever else is wrong
    lambda L: L.nn.functional.bilinear(r(L, 2, 7, dtype="float64"), r(L, 2, 8), r(L, 4, 8, 8)),
    lambda L: L.nn.functional.bilinear(r(L, 2, 8), r(L, 2, 8), r(L, 4, 8, 8),
                                       r(L, 4, dtype="float64")),
    lambda L: L.nn.functional.bilinear(r(L, 2, 8, dtype="uint8"), r(L, 2, 8), r(L, 4, 8, 8)),
    lambda L: L.nn.Bilinear(8, 8, 4)(r(L, 2, 8, dtype="bfloat16"), r(L, 2, 8)),
])
def test_checks_raise_torchs_runtime_errors(call):
    same_message(call)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.bilinear(r(L), r(L), r(L, 4, 8, 8)),  # a 0-d input
    lambda L: L.nn.functional.bilinear(r(L, 2, 8), r(L, 2, 8), r(L, 4, 8)),  # a 2-D weight
    lambda L: L.nn.functional.bilinear(r(L, 2, 8), r(L, 2, 8), r(L, 4, 8, 8), r(L)),
])
def test_missing_dims_raise_torchs_index_errors(call):
    same_message(call, IndexError)


def test_a_non_tensor_argument_is_a_type_error():
    same_message(lambda L: L.nn.functional.bilinear(r(L, 2, 8), [1.0], r(L, 4, 8, 8)), TypeError)
