"""The fused add-product family (addmm via F.linear, baddbmm) under vmap when an operand's
logical rank is past 2, as under nested vmap or with a batched matrix closed over: the
batch must pair with the batch, never with the other operand's leading axes."""

import pytest
import torch

import ember

# name -> (input shapes, function of the library and the inputs)
CASES = {
    "linear, closed-over 3-D input, batched weight": (
        [(2, 5, 4), (6, 3, 4), (3,)],
        lambda L, x, w, b: L.func.vmap(lambda ww: L.nn.functional.linear(x, ww, b))(w)),
    "baddbmm, batched input only": (
        [(6, 2, 5, 3), (2, 5, 4), (2, 4, 3)],
        lambda L, i, x, y: L.func.vmap(lambda ii: L.baddbmm(ii, x, y))(i)),
    "baddbmm, batched batch2 only": (
        [(3,), (2, 5, 4), (6, 2, 4, 3)],
        lambda L, b, x, y: L.func.vmap(lambda yy: L.baddbmm(b, x, yy))(y)),
    "linear's jvp under two vmaps": (
        [(5, 4), (3, 4), (6, 3, 4), (3,)],
        lambda L, x, w, t, b: L.func.vmap(L.func.vmap(
            lambda xa, tt: L.func.jvp(lambda ww: L.nn.functional.linear(xa, ww, b), (w,),
                                      (tt,))[1], (0, None)), (None, 0))(x, t)),
}


@pytest.mark.parametrize("name", CASES)
def test_batched_add_product_matches_torch(name):
    shapes, fn = CASES[name]
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(s, generator=g) for s in shapes]
    t = fn(torch, *args)
    e = fn(ember, *(ember.tensor(a.numpy()) for a in args))
    assert tuple(e.shape) == tuple(t.shape)
    # float32 products through BLAS: summation order may differ in the last bits
    torch.testing.assert_close(torch.from_numpy(e.numpy()), t, rtol=1e-5, atol=1e-6)
