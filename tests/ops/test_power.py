"""power.py against torch: pow at the IEEE edges where PyTorch's kernels and NumPy's differ
(exponent 0.5 with a -inf or -0.0 base), in every form and float dtype."""

import numpy as np
import pytest
import torch

import ember

INF = float("inf")
BASES = [-INF, -0.0, 0.0, INF, 4.0, -4.0, float("nan"), 1.0]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _same_bits(got, want):
    # Bit-for-bit, signed zeros included: pow at these points is exact (0, inf, nan, 2);
    # a NaN's sign bit means nothing.
    g, w = got.float().numpy(), want.float().numpy()
    assert np.array_equal(g, w, equal_nan=True), (g, w)
    real = ~np.isnan(w)
    assert np.array_equal(np.signbit(g[real]), np.signbit(w[real])), (g, w)


def _pair(values, dtype):
    return ember.tensor(values, dtype=getattr(ember, dtype)), \
        torch.tensor(values, dtype=getattr(torch, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("exponent", [0.5, -0.5, 1.5, 2.0, -1.0])
def test_tensor_to_a_number_at_signed_zeros_and_infinities(exponent, dtype):
    # torch takes sqrt / rsqrt shortcuts for +-0.5 (NaN and -0.0 at -inf and -0.0), except
    # in its float16 kernel, which calls std::pow (inf and +0.0).
    e, t = _pair(BASES, dtype)
    _same_bits(e ** exponent, t ** exponent)
    _same_bits(e.pow(exponent), t.pow(exponent))
    e2, t2 = e.clone(), t.clone()
    e2.pow_(exponent)
    t2.pow_(exponent)
    _same_bits(e2, t2)
    eo, to = ember.empty_like(e), torch.empty_like(t)
    ember.pow(e, exponent, out=eo)
    torch.pow(t, exponent, out=to)
    _same_bits(eo, to)


@pytest.mark.parametrize("dtype", FLOATS)
def test_tensor_exponent_of_one_half_follows_c_pow(dtype):
    # A tensor exponent goes through std::pow in torch: (-inf) ** 0.5 = inf, (-0.0) ** 0.5
    # = +0.0; NumPy's sqrt shortcut for a uniform 0.5 exponent gave NaN and -0.0.
    e, t = _pair(BASES, dtype)
    for ee, te in ((ember.tensor(0.5), torch.tensor(0.5)),
                   (ember.full((8,), 0.5), torch.full((8,), 0.5)),
                   (ember.tensor([0.5]).expand(8), torch.tensor([0.5]).expand(8)),
                   _pair([0.5, 0.5, 1.5, -0.5, 0.5, 0.5, 0.5, 0.5], dtype)):
        _same_bits(e ** ee, t ** te)
    _same_bits(ember.pow(-INF, ember.full((3,), 0.5)), torch.pow(-INF, torch.full((3,), 0.5)))
    _same_bits(ember.pow(-0.0, ember.full((3,), 0.5)), torch.pow(-0.0, torch.full((3,), 0.5)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("exponent", [1.5, 2.0, -0.5, 3])
def test_16_bit_base_gradient_and_tangent(dtype, exponent):
    # (the exponent reaches the rule rounded, as a NumPy / ml_dtypes scalar: bfloat16's
    # once turned `exponent * base` into an array of the tensor needing a gradient)
    import warnings

    res = []
    for lib in (ember, torch):
        x = lib.tensor([0.7, 1.2, 2.5], dtype=getattr(lib, dtype), requires_grad=True)
        (x ** exponent).sum().backward()
        with warnings.catch_warnings():
            # (ember's call warns of nothing; torch's first jvp warns of its own jit.script)
            warnings.simplefilter("error" if lib is ember else "ignore")
            _, t = lib.func.jvp(lambda y: y ** exponent, (x.detach(),),
                                (lib.ones_like(x.detach()),))
        res.append((x.grad, t))
    (ge, te), (gt, tt) = res
    for e, t in ((ge, gt), (te, tt)):
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        # (a few 16-bit products and a pow rounded to 16 bits: one unit apart at most)
        assert torch.allclose(torch.tensor(e.float().tolist()), t.float(), rtol=1e-2)


@pytest.mark.parametrize("exponent", [3, -2, 3.0, -2.0])
def test_bfloat16_cube_and_inverse_square_round_each_product(exponent):
    """torch's bfloat16 pow takes x * x * x and 1 / (x * x) with bfloat16 operators, each
    rounded to bfloat16 (a quarter of the cubes of 5000 values differed from the cube
    rounded once); multiplication and division are correctly rounded: bit for bit."""
    x = np.concatenate([np.linspace(-40, 40, 4001), [0.0, -0.0, np.inf, -np.inf, 1e20, 3e38]])
    e = ember.tensor(x, dtype=ember.bfloat16) ** exponent
    t = torch.tensor(x, dtype=torch.bfloat16) ** exponent
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())
