"""torch.func sweep of the two- and three-input elementwise maps (the `binary` and `ternary`
families, comparisons, bitwise ops, isin): jvp, vmap and vjp against torch, with
broadcasting, scalars and empty dims."""

from __future__ import annotations

from tests.func.sweep import Case, make_tests

SHAPES = [(2, 3), (3,)]
EXTRA = [[(), ()], [(0, 3), (3,)], [(2, 1), (3,)]]
ND = "not differentiable: vmap only"
NO_FWD = "torch has no forward-mode rule for it (NotImplementedError): vmap and vjp only"


def _b(name, fn, domain="any", complex=False, **kw) -> Case:
    return Case(name, fn, SHAPES, domain, extra=EXTRA, complex=complex, **kw)


POLYNOMIALS = tuple(f"{kind}_polynomial_{letter}" for kind, letters in (
    ("chebyshev", "tuvw"), ("shifted_chebyshev", "tuvw"), ("hermite", ("h", "he")),
    ("laguerre", "l"), ("legendre", "p")) for letter in letters)


def _polynomial(name: str) -> Case:
    return _b(f"special_{name}", lambda m, x, y: getattr(m.special, name)(x, y.abs() * 2),
              jvp=ND, vjp=ND)


def _t(name, fn, domain="any", **kw) -> Case:
    return Case(name, fn, [(2, 3), (3,), (2, 1)], domain,
                extra=[[(), (), ()], [(0, 3), (3,), (1,)]], **kw)


CASES = [
    _b("add", lambda m, x, y: x + y + m.add(x, y, alpha=2.5) + (x + 1.5), complex=True),
    _b("sub", lambda m, x, y: x - y + m.sub(x, y, alpha=0.5) + (2 - x), complex=True),
    _b("rsub", lambda m, x, y: m.rsub(x, y, alpha=2.5) + m.rsub(y, 1.5), complex=True),
    _b("remainder_self_scalar", lambda m, x, y: 3.5 % y + x, ("any", "pos"),
       jvp="no derivative of the divisor in either framework (both raise): vmap only",
       vjp="no derivative of the divisor in either framework (both raise)"),
    _b("mul", lambda m, x, y: x * y + x * 3, complex=True),
    _b("div", lambda m, x, y: x / y + 1 / y, ("any", "pos"), complex=True),
    # A 16-bit float tensor and a number: mul and div read the number at float32 precision.
    # (No 0-d case: torch's forward mode divides a 0-d float16 tangent by the number as a
    # 0-d float64 tensor, so that tangent comes out float64, unrounded.)
    Case("mul_div_16bit_number", lambda m, x, y: (
        (x.to(m.bfloat16) * 0.3).double() + (y.to(m.float16) / 1.7).double()), SHAPES,
        ("any", "pos"), extra=[[(0, 3), (3,)], [(2, 1), (3,)]]),
    _b("div_trunc", lambda m, x, y: m.div(x, y, rounding_mode="trunc") * x, ("any", "pos")),
    _b("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor") * y, ("any", "pos")),
    _b("floor_divide", lambda m, x, y: m.floor_divide(x, y), ("any", "pos"),
       jvp="no derivative in either framework (both raise): vmap only", vjp=ND),
    _b("pow_tensor_scalar", lambda m, x, y: x ** 3 + y ** 2.5 + x ** 0, ("any", "pos"),
       complex=True),
    _b("pow_tensor_tensor", lambda m, x, y: x ** y, ("pos", "any"), complex=True),
    _b("pow_scalar", lambda m, x, y: 2.0 ** x + 1.5 ** y, complex=True),
    _b("remainder", lambda m, x, y: m.remainder(x, y), ("any", "pos")),
    _b("remainder_scalar", lambda m, x, y: m.remainder(x, 0.7) + y % 1.3),
    _b("fmod", lambda m, x, y: m.fmod(x, y), ("any", "pos")),
    _b("fmod_scalar", lambda m, x, y: m.fmod(x, 0.7) + y),
    _b("atan2", lambda m, x, y: m.atan2(x, y)),
    _b("hypot", lambda m, x, y: m.hypot(x, y)),
    _b("copysign", lambda m, x, y: m.copysign(x, y)),
    _b("maximum", lambda m, x, y: m.maximum(x, y)),
    _b("minimum", lambda m, x, y: m.minimum(x, y)),
    _b("fmax", lambda m, x, y: m.fmax(x, y)),
    _b("fmin", lambda m, x, y: m.fmin(x, y)),
    _b("special_xlog1py", lambda m, x, y: m.special.xlog1py(x, y), ("any", "pos")),
    _b("special_zeta", lambda m, x, y: m.special.zeta(x + 2, y), ("above1", "pos"),
       jvp=NO_FWD, vjp="torch has no derivative for zeta wrt either input"),
    _b("igamma", lambda m, x, y: m.igamma(x.detach(), y), "pos", jvp=NO_FWD),
    # the orthogonal polynomials at degrees 0-5 (a float degree is truncated, as torch)
    *(_polynomial(name) for name in POLYNOMIALS),
    _b("igammac", lambda m, x, y: m.igammac(x.detach(), y), "pos", jvp=NO_FWD),
    _b("heaviside", lambda m, x, y: m.heaviside(x, y), jvp=ND, vjp=ND),
    _b("ldexp", lambda m, x, y: m.ldexp(x, y) + m.ldexp(y, (x * 4).long())),
    _b("nextafter", lambda m, x, y: m.nextafter(x, y) + m.nextafter(y, y)),
    _b("compare", lambda m, x, y: (x < y, x >= y, x == y, m.ne(x, 0.5)), jvp=ND, vjp=ND),
    _b("bitwise", lambda m, x, y: ((x > 0) & (y > 0), (x * 3).long() ^ (y * 3).long(),
                                   m.logical_or(x > 0, y > 1),
                                   m.gcd((x * 9).long(), (y * 6).long()),
                                   m.lcm((x * 9).long(), (y * 6).long())), jvp=ND, vjp=ND),
    _b("isin", lambda m, x, y: m.isin(m.round(x), m.tensor([0.0, 1.0, -1.0])),
       jvp=ND, vjp=ND),
    # the ternary family
    _t("where", lambda m, c, x, y: m.where(c > 0, x, y) + m.where(c > 0.5, x, 0.25)),
    _t("clamp", lambda m, x, y, z: x.clamp(-0.5, 0.75) + m.clamp(y, min=0.1)),
    _t("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, lo + hi.abs() + 0.5)),
    _t("clamp_min_max", lambda m, x, lo, hi: (m.clamp_min(x, 0.1) + x.clamp_max(-0.2)
                                               + m.clamp_min(x, lo) + x.clamp_max(hi))),
    _t("lerp", lambda m, x, y, z: m.lerp(x, y, 0.3)),
    _t("lerp_tensor", lambda m, x, y, w: m.lerp(x, y, w)),
    _t("addcmul", lambda m, x, y, z: m.addcmul(x, y, z, value=0.5)),
    _t("addcdiv", lambda m, x, y, z: m.addcdiv(x, y, z, value=-1.5), ("any", "any", "pos")),
]


test_jvp, test_vmap, test_vjp = make_tests(CASES)
