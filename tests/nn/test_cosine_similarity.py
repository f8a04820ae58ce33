"""F.cosine_similarity (src/ember/nn/_functional/layers.py) against torch: the pair is
promoted to its common dtype first, which must be a real floating type."""

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF

from helpers import same_message

PAIRS = [("int64", "float32"), ("float64", "float32"), ("int32", "float64"), ("float16", "float16"),
         ("float32", "float32")]


@pytest.mark.parametrize("d1,d2", PAIRS)
def test_mixed_dtypes_promote_like_torch(d1, d2):
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (4, 5)).astype(np.float64)
    b = rng.integers(-3, 4, (4, 5)).astype(np.float64)
    want = torch.nn.functional.cosine_similarity(torch.tensor(a).to(getattr(torch, d1)),
                                                 torch.tensor(b).to(getattr(torch, d2)))
    got = EF.cosine_similarity(ember.tensor(a).to(getattr(ember, d1)),
                               ember.tensor(b).to(getattr(ember, d2)))
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    # (a norm and a sum of products: a few ulps of the result dtype, not bit for bit)
    tol = 2e-3 if want.dtype == torch.float16 else 1e-6
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=tol, atol=tol)


def test_mixed_dtype_gradient_keeps_each_input_dtype():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    ta = torch.tensor(a, dtype=torch.float32, requires_grad=True)
    ea = ember.tensor(a, dtype=ember.float32, requires_grad=True)
    torch.nn.functional.cosine_similarity(ta, torch.tensor(b)).sum().backward()
    EF.cosine_similarity(ea, ember.tensor(b)).sum().backward()
    assert ea.grad.dtype == ember.float32 and ta.grad.dtype == torch.float32
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["int64", "bool", "complex64", "uint8"])
def test_non_floating_common_dtype_is_refused_in_torch_words(dtype):
    same_message(lambda L: L.nn.functional.cosine_similarity(
        L.ones(2, 3).to(getattr(L, dtype)), L.ones(2, 3).to(getattr(L, dtype))))
