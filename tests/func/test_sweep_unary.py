"""torch.func sweep of the unary elementwise maps (every member of the `unary` family, and
the activation derivative kernels through a gradient): jvp, vmap and vjp against torch."""

from __future__ import annotations

from tests.func.sweep import Case, make_tests


def _F(m):
    return m.nn.functional


def _u(name, fn, domain="any", complex=False, **kw) -> Case:
    return Case(name, lambda m, x: fn(m, x), [(2, 3)], domain, extra=[[()], [(0, 3)]],
                complex=complex, **kw)


ND = "not differentiable: vmap only"
BESSEL_K_Y_AIRY = (("bessel_y0", "pos"), ("bessel_y1", "pos"), ("modified_bessel_k0", "pos"),
                   ("modified_bessel_k1", "pos"), ("scaled_modified_bessel_k0", "pos"),
                   ("scaled_modified_bessel_k1", "pos"), ("airy_ai", "any"))


def _no_derivative(name: str, domain: str) -> Case:
    return _u(f"special_{name}", lambda m, x: getattr(m.special, name)(x), domain, jvp=ND,
              vjp=ND)

CASES = [
    _u("neg", lambda m, x: -x, complex=True),
    _u("exp", lambda m, x: m.exp(x), complex=True),
    _u("log", lambda m, x: m.log(x), "pos", complex=True),
    _u("sqrt", lambda m, x: x.sqrt(), "pos", complex=True),
    _u("sin", lambda m, x: m.sin(x), complex=True),
    _u("cos", lambda m, x: m.cos(x), complex=True),
    _u("tanh", lambda m, x: x.tanh(), complex=True),
    _u("sigmoid", lambda m, x: m.sigmoid(x), complex=True),
    _u("abs", lambda m, x: m.abs(x), complex=True),
    _u("sign", lambda m, x: m.sign(x) * x),
    _u("sgn", lambda m, x: m.sgn(x), complex=True),
    _u("angle", lambda m, x: m.angle(x), complex=True),
    _u("logical_not", lambda m, x: m.logical_not(x > 0.3), jvp=ND, vjp=ND),
    _u("bitwise_not", lambda m, x: m.bitwise_not((x * 3).long()), jvp=ND, vjp=ND),
    _u("conj", lambda m, x: m.conj(x * (1 + 0.5j)).abs(), complex=True),
    _u("conj_physical", lambda m, x: m.conj_physical(x * (1 + 0.5j)).abs(), complex=True),
    _u("real", lambda m, x: m.real(x * (1 + 0.5j)), complex=True),
    _u("imag", lambda m, x: m.imag(x * (1 + 0.5j)), complex=True),
    _u("rsqrt", lambda m, x: m.rsqrt(x), "pos", complex=True),
    _u("exp2", lambda m, x: m.exp2(x), complex=True),
    _u("expm1", lambda m, x: m.expm1(x), complex=True),
    _u("log2", lambda m, x: m.log2(x), "pos", complex=True),
    _u("log10", lambda m, x: m.log10(x), "pos", complex=True),
    _u("log1p", lambda m, x: m.log1p(x), "pos", complex=True),
    _u("reciprocal", lambda m, x: m.reciprocal(x), "pos", complex=True),
    _u("tan", lambda m, x: m.tan(x), "unit", complex=True),
    _u("asin", lambda m, x: m.asin(x), "unit", complex=True),
    _u("acos", lambda m, x: m.acos(x), "unit", complex=True),
    _u("atan", lambda m, x: m.atan(x), complex=True),
    _u("sinh", lambda m, x: m.sinh(x), complex=True),
    _u("cosh", lambda m, x: m.cosh(x), complex=True),
    _u("asinh", lambda m, x: m.asinh(x), complex=True),
    _u("acosh", lambda m, x: m.acosh(x), "above1", complex=True),
    _u("atanh", lambda m, x: m.atanh(x), "unit", complex=True),
    _u("logit", lambda m, x: m.logit(x) + m.logit(x, eps=0.2), "prob"),
    _u("erf", lambda m, x: m.erf(x)),
    _u("erfc", lambda m, x: m.erfc(x)),
    _u("erfinv", lambda m, x: m.erfinv(x), "unit"),
    _u("floor", lambda m, x: m.floor(x) * x),
    _u("ceil", lambda m, x: m.ceil(x) * x),
    _u("trunc", lambda m, x: m.trunc(x) + x.fix()),
    _u("round", lambda m, x: m.round(x)),
    _u("round_decimals", lambda m, x: m.round(x, decimals=2)),
    _u("frac", lambda m, x: m.frac(x)),
    _u("float_class", lambda m, x: (m.isfinite(x), m.isneginf(x / 0), m.isnan(x)),
       jvp=ND, vjp=ND),
    _u("frexp", lambda m, x: m.frexp(x * 3).mantissa),
    _u("frexp_exponent", lambda m, x: m.frexp(x * 3).exponent, jvp=ND, vjp=ND),
    _u("nan_to_num", lambda m, x: m.nan_to_num(x / (x > 0.5), nan=0.5, posinf=3.0)),
    _u("relu", lambda m, x: m.relu(x) + _F(m).relu6(x * 4)),
    _u("hardtanh", lambda m, x: _F(m).hardtanh(x, -0.5, 1.0)),
    _u("threshold", lambda m, x: _F(m).threshold(x, 0.5, -1.0)),
    _u("gelu", lambda m, x: _F(m).gelu(x) + _F(m).gelu(x, approximate="tanh")),
    _u("silu", lambda m, x: _F(m).silu(x)),
    _u("softplus", lambda m, x: _F(m).softplus(x, beta=2.0, threshold=3.0)),
    _u("mish", lambda m, x: _F(m).mish(x)),
    _u("leaky_relu", lambda m, x: _F(m).leaky_relu(x, 0.2)),
    _u("elu", lambda m, x: _F(m).elu(x, 0.7) + _F(m).selu(x)),
    _u("celu", lambda m, x: _F(m).celu(x, 1.5)),
    _u("hardsigmoid", lambda m, x: _F(m).hardsigmoid(x * 2)),
    _u("hardswish", lambda m, x: _F(m).hardswish(x * 2)),
    _u("log_sigmoid", lambda m, x: _F(m).logsigmoid(x)),
    _u("lgamma", lambda m, x: m.lgamma(x), "pos"),
    # torch's trigamma is good to ~5e-10 relative (ember's to 1 ulp, against mpmath)
    _u("digamma", lambda m, x: m.digamma(x), "pos", slack64=10),
    _u("polygamma", lambda m, x: m.polygamma(2, x), "pos"),
    _u("mvlgamma", lambda m, x: m.mvlgamma(x, 3), "above1"),
    _u("i0", lambda m, x: m.i0(x)),
    _u("special_i0e", lambda m, x: m.special.i0e(x)),
    _u("special_i1", lambda m, x: m.special.i1(x)),
    _u("special_i1e", lambda m, x: m.special.i1e(x)),
    _u("special_bessel_j0", lambda m, x: m.special.bessel_j0(x), jvp=ND, vjp=ND),
    _u("special_bessel_j1", lambda m, x: m.special.bessel_j1(x), jvp=ND, vjp=ND),
    _u("special_modified_bessel_i0", lambda m, x: m.special.modified_bessel_i0(x),
       jvp=ND, vjp=ND),
    _u("special_modified_bessel_i1", lambda m, x: m.special.modified_bessel_i1(x),
       jvp=ND, vjp=ND),
    _u("special_spherical_bessel_j0", lambda m, x: m.special.spherical_bessel_j0(x),
       jvp=ND, vjp=ND),
    *(_no_derivative(name, domain) for name, domain in BESSEL_K_Y_AIRY),
    _u("special_erfcx", lambda m, x: m.special.erfcx(x)),
    _u("special_ndtr", lambda m, x: m.special.ndtr(x)),
    _u("special_ndtri", lambda m, x: m.special.ndtri(x), "prob"),
    _u("special_log_ndtr", lambda m, x: m.special.log_ndtr(x)),
    _u("special_entr", lambda m, x: m.special.entr(x), "pos"),
    # the derivative kernels of relu / threshold and gelu, reached through a gradient
    _u("threshold_backward", lambda m, x: m.func.grad(lambda y: (m.relu(y) * y).sum())(x)),
    _u("gelu_backward", lambda m, x: m.func.grad(lambda y: _F(m).gelu(y).sum())(x)),
    _u("gelu_tanh_backward", lambda m, x: m.func.grad(
        lambda y: (_F(m).gelu(y, approximate="tanh") * y).sum())(x)),
    # sigmoid's, tanh's and SiLU's (products with y: the second derivatives' every term)
    _u("sigmoid_backward", lambda m, x: m.func.grad(lambda y: (m.sigmoid(y) * y).sum())(x)),
    _u("tanh_backward", lambda m, x: m.func.grad(lambda y: (m.tanh(y) * y).sum())(x)),
    _u("silu_backward", lambda m, x: m.func.grad(lambda y: (_F(m).silu(y) * y).sum())(x)),
    # hardsigmoid's, which PyTorch does not differentiate (test_activation_derivatives.py
    # compares the refusals)
    _u("hardsigmoid_backward", lambda m, x: m.func.grad(lambda y: _F(m).hardsigmoid(y).sum())(x),
       jvp=ND, vjp=ND),
]


test_jvp, test_vmap, test_vjp = make_tests(CASES)
