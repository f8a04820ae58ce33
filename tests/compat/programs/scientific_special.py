"""Scientific computing with torch.special: the error-function and normal-distribution family
(erf, erfc, erfcx, erfinv, ndtr, ndtri, log_ndtr, expit / logit with eps), xlogy / xlog1py /
entr / sinc, the gamma family (gammaln, digamma / psi, polygamma n = 0..3, multigammaln, zeta,
gammainc / gammaincc), modified and ordinary Bessel functions (i0 ... i1e, k0 / k1 and their
scaled forms, j0 / j1 / y0 / y1, spherical j0), airy_ai, the orthogonal polynomials (Chebyshev
T/U/V/W and their shifted forms, Hermite H / He, Laguerre L, Legendre P) with tensor and
scalar degrees, softmax / log_softmax / logsumexp and round(decimals) on grids with 0,
negative, large values and inf in float32 and float64, with gradients where torch has them.
Then the uses: Student-t and Gamma maximum likelihood by gradient descent, a Bessel standing
wave, Gauss-Legendre / Gauss-Hermite nodes from eigvalsh of the Jacobi matrix, trapezoid
integration, lgamma / mvlgamma / igamma, nextafter, frexp / ldexp, copysign, float_power,
logaddexp, and the typical mistakes."""

import math

import torch

torch.manual_seed(0)
sp = torch.special
INF = float("inf")


def f32(name, t):
    print(name, tuple(t.shape), t.dtype, [round(v, 4) for v in t.detach().flatten().tolist()])


def f64(name, t):
    print(name, tuple(t.shape), t.dtype, [f"{v:.6g}" for v in t.detach().flatten().tolist()])


def show(name, t):
    (f64 if t.dtype == torch.float64 else f32)(name, t)


def attempt(label, fn):
    try:
        out = fn()
        show(label, out) if isinstance(out, torch.Tensor) else print(label, out)
    except Exception as e:
        print(label, type(e).__name__, str(e).split("\n")[0])


# 1. the error function and the normal distribution --------------------
x32 = torch.tensor([-INF, -6.0, -1.5, -0.0, 0.0, 0.25, 1.0, 3.0, 12.0, INF])
x64 = x32.double()
for name in ["erf", "erfc", "erfcx", "ndtr", "log_ndtr", "expit", "sinc", "i0e", "i1e"]:
    fn = getattr(sp, name)
    show(name + "32", fn(x32))
    show(name + "64", fn(x64))
p = torch.tensor([0.0, 1e-6, 0.025, 0.5, 0.975, 1.0], dtype=torch.float64)
show("ndtri", sp.ndtri(p))
show("erfinv", sp.erfinv(torch.tensor([-1.0, -0.5, 0.0, 0.9, 1.0])))
show("logit_eps", sp.logit(torch.tensor([0.0, 0.3, 1.0]), eps=1e-6))
show("logit", sp.logit(torch.tensor([0.0, 0.3, 1.0], dtype=torch.float64)))
show("nan_in", sp.erfcx(torch.tensor([float("nan"), 1.0])))

g = torch.tensor([-2.0, 0.0, 0.5, 3.0], requires_grad=True)
for name in ["erf", "erfc", "erfcx", "ndtr", "log_ndtr", "expit", "i0e", "i1e"]:
    (gx,) = torch.autograd.grad(getattr(sp, name)(g).sum(), g)
    show("grad_" + name, gx)

# 2. xlogy, entr and friends -------------------------------------------
a = torch.tensor([0.0, 0.0, 1.0, 2.0, -1.0], dtype=torch.float64)
b = torch.tensor([0.0, INF, 0.5, -0.5, 3.0], dtype=torch.float64)
show("xlogy", sp.xlogy(a, b))
show("xlog1py", sp.xlog1py(a, b))
show("xlogy_scalar", sp.xlogy(2.0, b))
show("entr", sp.entr(torch.tensor([-1.0, 0.0, 0.5, 1.0, INF])))

# 3. the gamma family --------------------------------------------------
z = torch.tensor([-2.5, -1.0, -0.0, 0.5, 1.0, 2.0, 7.5, 150.0, INF], dtype=torch.float64)
show("gammaln", sp.gammaln(z))
show("digamma", sp.digamma(z))
show("psi32", sp.psi(z.float()))
for n in range(4):
    show(f"polygamma{n}", sp.polygamma(n, z[3:]))
show("multigammaln", sp.multigammaln(torch.tensor([2.5, 4.0, 10.0], dtype=torch.float64), 3))
show("zeta", sp.zeta(torch.tensor([2.0, 3.0, 4.5, 1.0]), torch.tensor([1.0, 2.0, 0.5, 1.0])))
show("zeta_scalar", sp.zeta(2.0, torch.tensor([1.0, 10.0], dtype=torch.float64)))
s = torch.tensor([0.5, 1.0, 3.0, 10.0], dtype=torch.float64)
xs = torch.tensor([0.0, 1.0, 2.5, 30.0], dtype=torch.float64)
show("gammainc", sp.gammainc(s, xs))
show("gammaincc", sp.gammaincc(s, xs))
zg = torch.tensor([0.5, 1.5, 4.0], dtype=torch.float64, requires_grad=True)
(gz,) = torch.autograd.grad((sp.gammaln(zg) + sp.digamma(zg) + sp.polygamma(2, zg)).sum(), zg)
show("grad_gamma", gz)

# 4. Bessel and Airy functions -----------------------------------------
r = torch.tensor([-INF, -3.0, 0.0, 0.5, 1.0, 2.5, 10.0, 40.0, INF], dtype=torch.float64)
for name in ["i0", "i1", "modified_bessel_i0", "modified_bessel_i1", "bessel_j0", "bessel_j1",
             "spherical_bessel_j0", "airy_ai"]:
    show(name, getattr(sp, name)(r))
    # (float32 I0 / I1 past 2.5: torch's float32 kernel is off by an ulp or two there)
    show(name + "32", getattr(sp, name)(r.float() if "i" not in name[-2:] else r[:6].float()))
rp = torch.tensor([0.0, 0.1, 0.5, 1.0, 2.5, 10.0, 40.0, INF], dtype=torch.float64)
for name in ["bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
             "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]:
    show(name, getattr(sp, name)(rp))
    show(name + "32", getattr(sp, name)(rp.float()))
show("neg_y0", sp.bessel_y0(torch.tensor([-1.0, -0.0])))
show("int_in", sp.bessel_j0(torch.tensor([0, 1, 2])))
airy = torch.linspace(-8, 3, 12)
show("airy_grid", sp.airy_ai(airy))

# 5. orthogonal polynomials --------------------------------------------
xp = torch.tensor([-1.0, -0.5, 0.0, 0.3, 0.9, 1.0, 1.7], dtype=torch.float64)
polys = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
for name in polys:
    fn = getattr(sp, name)
    show(name + "_n4", fn(xp, 4))
    show(name + "_n11", fn(xp.float(), 11))
    show(name + "_ntensor", fn(0.35, torch.tensor([-1, 0, 1, 2, 3, 9])))
show("poly_int_x", sp.legendre_polynomial_p(torch.tensor([0, 1, 2]), torch.tensor(2)))
show("poly_bcast", sp.hermite_polynomial_h(xp[:3, None], torch.arange(3)))
show("poly_inf", sp.chebyshev_polynomial_t(torch.tensor([INF, -INF]), torch.tensor([1, 2])))

# 6. softmax family and rounding ---------------------------------------
logits = torch.tensor([[1.0, 2.0, -INF], [1000.0, 1000.0, 999.0]])
show("softmax", sp.softmax(logits, dim=1))
show("log_softmax", sp.log_softmax(logits, dim=-1, dtype=torch.float64))
show("logsumexp", sp.logsumexp(logits, dim=1))
show("round2", sp.round(torch.tensor([1.2345, -2.5, 0.125, 1234.5678]), decimals=2))
show("round_neg", sp.round(torch.tensor([1234.5678, 25.0]), decimals=-1))
show("exp2", sp.exp2(torch.tensor([-1.0, 0.0, 10.0])))
show("expm1_log1p", sp.expm1(sp.log1p(torch.tensor([1e-10, 0.5, 3.0], dtype=torch.float64))))

# 7. fitting a Student-t and a Gamma by gradient descent ---------------
data_t = torch.distributions.StudentT(4.0, 1.0, 2.0).sample((200,)).double()
raw = torch.zeros(3, dtype=torch.float64, requires_grad=True)  # log nu, loc, log scale
opt = torch.optim.Adam([raw], lr=0.1)
for step in range(120):
    nu, loc, scale = raw[0].exp() + 1, raw[1], raw[2].exp()
    zt = (data_t - loc) / scale
    ll = (sp.gammaln((nu + 1) / 2) - sp.gammaln(nu / 2) - 0.5 * torch.log(nu * math.pi)
          - torch.log(scale) - (nu + 1) / 2 * sp.xlog1py(torch.ones(()), zt * zt / nu))
    loss = -ll.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 40 == 0:
        print("student_t", step, round(loss.item(), 4))
show("student_t_params", torch.stack([raw[0].exp() + 1, raw[1], raw[2].exp()]))

data_g = torch.distributions.Gamma(3.0, 2.0).sample((300,)).double()
log_ab = torch.zeros(2, dtype=torch.float64, requires_grad=True)
opt = torch.optim.SGD([log_ab], lr=0.2, momentum=0.5)
for _step in range(150):
    al, be = log_ab.exp()
    ll = al * be.log() - sp.gammaln(al) + sp.xlogy(al - 1, data_g) - be * data_g
    loss = -ll.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
show("gamma_fit", log_ab.exp())
print("gamma_cdf_check", round(sp.gammainc(log_ab.exp()[0], log_ab.exp()[1] * 1.5).item(), 4))

# 8. a Bessel standing wave on a drum: u = J0(k r) cos(w t) --------------
k0 = 2.404825557695773  # first zero of J0: the drum's rim at r = 1 stays still
rad = torch.linspace(0, 1, 6, dtype=torch.float64)
tt = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
u = sp.bessel_j0(k0 * rad)[None, :] * torch.cos(k0 * tt)[:, None]
show("drum", u.round(decimals=6) + 0.0)  # (0 at the rim up to rounding)
energy = torch.trapezoid(sp.bessel_j0(k0 * rad) ** 2 * rad, rad)
exact = sp.bessel_j1(torch.tensor(k0, dtype=torch.float64)) ** 2 / 2
print("drum_energy", f"{energy.item():.6g}", f"{exact.item():.6g}")

# 9. Gauss quadrature from the Jacobi matrix ---------------------------
m = 5
kk = torch.arange(1, m, dtype=torch.float64)
jac_leg = torch.diag(kk / torch.sqrt(4 * kk * kk - 1), 1)
nodes = torch.linalg.eigvalsh(jac_leg + jac_leg.T)
show("legendre_nodes", nodes.round(decimals=6) + 0.0)
show("legendre_at_nodes", sp.legendre_polynomial_p(nodes, m).abs() < 1e-12)
dp = m * (nodes * sp.legendre_polynomial_p(nodes, m) - sp.legendre_polynomial_p(nodes, m - 1))
weights = 2 * (1 - nodes ** 2) / dp ** 2
print("gauss_legendre_int_exp", f"{(weights * nodes.exp()).sum().item():.6g}")
jac_her = torch.diag(torch.sqrt(kk / 2), 1)
hnodes = torch.linalg.eigvalsh(jac_her + jac_her.T)
show("hermite_nodes", hnodes.round(decimals=6) + 0.0)
print("hermite_root_ok", bool((sp.hermite_polynomial_h(hnodes, m).abs() < 1e-8).all()))

# 10. trapezoid rules and elementary helpers ---------------------------
xq = torch.linspace(0, math.pi, 9, dtype=torch.float64)
print("trapezoid_sin", f"{torch.trapezoid(torch.sin(xq), xq).item():.6g}")
show("cumtrapz", torch.cumulative_trapezoid(torch.sin(xq), dx=xq[1] - xq[0]))
show("lgamma", torch.lgamma(torch.tensor([0.5, -0.5, 100.0])))
show("mvlgamma", torch.mvlgamma(torch.tensor([3.0, 5.0]), p=4))
show("igamma", torch.igamma(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.5])))
show("igammac", torch.igammac(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.5])))
one = torch.tensor([1.0, 0.0], dtype=torch.float64)
show("nextafter", torch.nextafter(one, torch.tensor([2.0, -1.0], dtype=torch.float64)) - one)
mant, expo = torch.frexp(torch.tensor([8.0, 0.3, -5.0, 0.0]))
show("frexp_m", mant)
print("frexp_e", expo.dtype, expo.tolist())
show("ldexp", torch.ldexp(mant, expo))
show("copysign", torch.copysign(torch.tensor([1.0, 2.0, 0.0]), torch.tensor([-0.0, 1.0, -1.0])))
show("float_power", torch.float_power(torch.tensor([2, 3]), 0.5))
show("logaddexp", torch.logaddexp(torch.tensor([-INF, 0.0, 800.0]), torch.tensor([-INF, 0.0, 1.0])))

# 11. mistakes ---------------------------------------------------------
attempt("polygamma_neg", lambda: sp.polygamma(-1, torch.tensor([1.0])))
attempt("mvlgamma_small", lambda: sp.multigammaln(torch.tensor([0.5, 2.0]), 3))
attempt("float_degree", lambda: sp.chebyshev_polynomial_t(xp, torch.tensor([2.7])))
attempt("zeta_below_1", lambda: sp.zeta(torch.tensor([0.5, -1.0]), torch.tensor([1.0, 1.0])))
attempt("erfinv_outside", lambda: sp.erfinv(torch.tensor([-1.5, 2.0])))
attempt("gammainc_neg", lambda: sp.gammainc(torch.tensor([-1.0, 2.0]), torch.tensor([1.0, -1.0])))
attempt("poly_grad", lambda: sp.legendre_polynomial_p(torch.ones(2, requires_grad=True),
                                                     2).requires_grad)
attempt("k0_grad", lambda: sp.modified_bessel_k0(torch.ones(2, requires_grad=True)).requires_grad)
zs = torch.tensor([2.0], requires_grad=True)
attempt("zeta_grad", lambda: torch.autograd.grad(sp.zeta(zs, torch.tensor([1.0])).sum(), [zs]))
attempt("half_y0", lambda: sp.bessel_y0(torch.ones(2, dtype=torch.float16)))
attempt("int_round", lambda: sp.round(torch.tensor([1, 2]), decimals=1))
attempt("igamma_int", lambda: torch.igamma(torch.tensor([1]), torch.tensor([2])))
