"""A tour of the torch.distributions zoo, as a probabilistic-modelling course would walk it:
every family's shapes, seeded samples, log densities, moments, cdf / icdf, expand,
enumerate_support, constraints and argument validation; KL divergences (registered and not,
plus a user register_kl); the transforms and the constraint registry; pathwise versus
score-function gradients; and the mistakes users make, with the errors they get."""

import math
import warnings

import torch
import torch.distributions as D
from torch.distributions import constraints, kl_divergence
from torch.distributions import transforms as T

torch.manual_seed(0)
torch.set_printoptions(precision=4)


def fmt(t):
    """Shape and values to 5 significant digits."""
    if not isinstance(t, torch.Tensor):
        return str(t)
    vals = ", ".join(f"{v:.5g}" for v in t.detach().reshape(-1).tolist()[:8])
    return f"{tuple(t.shape)} [{vals}]"


def attempt(label, fn):
    """Call fn, printing its value or the error type and first line of its message."""
    try:
        out = fn()
        print(f"  {label}: {fmt(out)}")
    except Exception as e:  # noqa: BLE001 - printing what a user would see
        msg = str(e).splitlines()[0] if str(e) else repr(e)
        print(f"  {label}: {type(e).__name__}: {msg[:150]}")


def tour(name, d, value):
    """Print the usual questions one asks of a distribution."""
    print(f"== {name}: batch {tuple(d.batch_shape)} event {tuple(d.event_shape)}"
          f" rsample={d.has_rsample} enum={d.has_enumerate_support}")
    print("  support", d.support)
    print("  arg_constraints", sorted(d.arg_constraints))
    torch.manual_seed(1)
    s = d.sample((2,))
    print("  sample", fmt(s), s.dtype)
    if d.has_rsample:
        torch.manual_seed(2)
        print("  rsample", fmt(d.rsample((3,))))
    print("  log_prob", fmt(d.log_prob(value)))
    for attr in ("mean", "mode", "variance", "stddev"):
        attempt(attr, lambda a=attr: getattr(d, a))
    attempt("entropy", d.entropy)
    attempt("cdf", lambda: d.cdf(value))
    attempt("icdf", lambda: d.icdf(torch.full(d.batch_shape, 0.3)))
    e = d.expand(torch.Size((2,)) + d.batch_shape)
    print("  expand", tuple(e.batch_shape), type(e).__name__, fmt(e.log_prob(value)))
    if d.has_enumerate_support:
        print("  enumerate_support", fmt(d.enumerate_support()),
              tuple(d.enumerate_support(expand=False).shape))


# --- 1. discrete families ----------------------------------------------------------------
p = torch.tensor([0.2, 0.7, 0.5])
tour("Bernoulli", D.Bernoulli(probs=p), torch.tensor([1.0, 0.0, 1.0]))
tour("Bernoulli logits", D.Bernoulli(logits=torch.tensor([-1.0, 2.0])), torch.tensor(1.0))
tour("Binomial", D.Binomial(10, probs=torch.tensor([0.3, 0.6])), torch.tensor([3.0, 7.0]))
tour("Binomial enum", D.Binomial(3, probs=torch.tensor([0.3, 0.6])), torch.tensor(2.0))
cat_p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
tour("Categorical", D.Categorical(probs=cat_p), torch.tensor([2, 0]))
print("  logits", fmt(D.Categorical(probs=cat_p).logits),
      "probs from logits", fmt(D.Categorical(logits=torch.tensor([1.0, 2.0, 3.0])).probs))
tour("OneHotCategorical", D.OneHotCategorical(probs=cat_p),
     torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
st = D.OneHotCategoricalStraightThrough(logits=torch.zeros(4, requires_grad=True))
torch.manual_seed(3)
y = st.rsample()
print("StraightThrough", fmt(y), y.requires_grad, st.has_rsample)
tour("Multinomial", D.Multinomial(6, probs=torch.tensor([0.2, 0.3, 0.5])),
     torch.tensor([1.0, 2.0, 3.0]))
tour("Poisson", D.Poisson(torch.tensor([0.5, 4.0, 10.0])), torch.tensor([0.0, 3.0, 12.0]))
tour("Geometric", D.Geometric(probs=torch.tensor([0.2, 0.9])), torch.tensor([3.0, 0.0]))
tour("NegativeBinomial", D.NegativeBinomial(torch.tensor([3.0, 5.0]), probs=torch.tensor(0.4)),
     torch.tensor([2.0, 6.0]))

# --- 2. continuous univariate families --------------------------------------------------
x2 = torch.tensor([0.5, 1.5])
tour("Beta", D.Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5])), torch.tensor([0.3, 0.9]))
tour("Gamma", D.Gamma(torch.tensor([2.0, 0.5]), torch.tensor([1.0, 3.0])), x2)
tour("Chi2", D.Chi2(torch.tensor([1.0, 4.0])), x2)
tour("Exponential", D.Exponential(torch.tensor([0.5, 2.0])), x2)
tour("Laplace", D.Laplace(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5])), x2)
tour("Cauchy", D.Cauchy(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])), x2)
tour("HalfCauchy", D.HalfCauchy(torch.tensor([1.0, 2.0])), x2)
tour("HalfNormal", D.HalfNormal(torch.tensor([1.0, 2.0])), x2)
tour("LogNormal", D.LogNormal(torch.tensor([0.0, 0.5]), torch.tensor([1.0, 0.25])), x2)
tour("Gumbel", D.Gumbel(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])), x2)
tour("Weibull", D.Weibull(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 0.8])), x2)
tour("Pareto", D.Pareto(torch.tensor([1.0, 0.5]), torch.tensor([3.0, 2.5])),
     torch.tensor([1.5, 2.0]))
tour("StudentT", D.StudentT(torch.tensor([3.0, 1.5]), torch.tensor([0.0, 1.0])), x2)
tour("Uniform", D.Uniform(torch.tensor([0.0, -1.0]), torch.tensor([1.0, 3.0])), x2)
tour("VonMises", D.VonMises(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 0.5])), x2)
tour("ContinuousBernoulli", D.ContinuousBernoulli(probs=torch.tensor([0.2, 0.5])),
     torch.tensor([0.3, 0.7]))
tour("Kumaraswamy", D.Kumaraswamy(torch.tensor([2.0, 1.0]), torch.tensor([3.0, 1.0])),
     torch.tensor([0.3, 0.7]))
tour("FisherSnedecor", D.FisherSnedecor(torch.tensor([3.0, 8.0]), torch.tensor([5.0, 12.0])), x2)
tour("RelaxedBernoulli", D.RelaxedBernoulli(torch.tensor(0.5), probs=torch.tensor([0.3, 0.8])),
     torch.tensor([0.4, 0.9]))
tour("RelaxedOneHotCategorical",
     D.RelaxedOneHotCategorical(torch.tensor(0.7), probs=torch.tensor([0.2, 0.3, 0.5])),
     torch.tensor([0.1, 0.2, 0.7]))

# --- 3. multivariate families ------------------------------------------------------------
cov = torch.tensor([[2.0, 0.6, 0.2], [0.6, 1.0, 0.3], [0.2, 0.3, 0.5]])
loc = torch.tensor([0.0, 1.0, -1.0])
v3 = torch.tensor([[0.5, 0.5, -0.5], [1.0, 0.0, 0.0]])
mvn_c = D.MultivariateNormal(loc, covariance_matrix=cov)
mvn_p = D.MultivariateNormal(loc, precision_matrix=torch.linalg.inv(cov))
mvn_t = D.MultivariateNormal(loc, scale_tril=torch.linalg.cholesky(cov))
for name, d in (("covariance", mvn_c), ("precision", mvn_p), ("scale_tril", mvn_t)):
    tour(f"MVN {name}", d, v3)
    print("  scale_tril", fmt(d.scale_tril))
    print("  precision", fmt(d.precision_matrix))
mvn_batch = D.MultivariateNormal(torch.zeros(4, 3), cov)
print("MVN batch", tuple(mvn_batch.batch_shape), fmt(mvn_batch.log_prob(torch.ones(3))))
lr = D.LowRankMultivariateNormal(loc, cov_factor=torch.tensor([[1.0], [0.5], [-0.5]]),
                                 cov_diag=torch.tensor([0.5, 1.0, 2.0]))
tour("LowRankMVN", lr, v3)
print("  covariance", fmt(lr.covariance_matrix))
print("  KL(lowrank || full)", fmt(kl_divergence(lr, mvn_c)))
diri = D.Dirichlet(torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]))
tour("Dirichlet", diri, torch.tensor([0.2, 0.3, 0.5]))
wish = D.Wishart(df=torch.tensor(4.0), covariance_matrix=torch.tensor([[1.0, 0.3], [0.3, 2.0]]))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    tour("Wishart", wish, torch.tensor([[3.0, 0.5], [0.5, 6.0]]))
print("  warnings", sorted({f"{w.category.__name__}: {w.message}" for w in caught}))
lkj = D.LKJCholesky(3, concentration=torch.tensor([1.0, 3.0]))
tour("LKJCholesky", lkj, torch.eye(3))

# --- 4. composite distributions ----------------------------------------------------------
normals = D.Normal(torch.zeros(3, 2), torch.ones(3, 2))
ind = D.Independent(normals, 1)
tour("Independent", ind, torch.zeros(2))
print("  base batch", tuple(ind.base_dist.batch_shape),
      "reinterpreted", ind.reinterpreted_batch_ndims)
mix = D.MixtureSameFamily(D.Categorical(torch.tensor([0.3, 0.5, 0.2])),
                          D.Normal(torch.tensor([-2.0, 0.0, 3.0]), torch.tensor([0.5, 1.0, 0.7])))
tour("MixtureSameFamily", mix, torch.tensor([[-1.0], [0.5], [2.5]]))
print("  mixture probs", fmt(mix.mixture_distribution.probs))
mix2d = D.MixtureSameFamily(D.Categorical(logits=torch.zeros(2, 3)),
                            D.Independent(D.Normal(torch.randn(2, 3, 2), torch.ones(2, 3, 2)), 1))
print("mixture of diagonal normals", tuple(mix2d.batch_shape), tuple(mix2d.event_shape),
      fmt(mix2d.log_prob(torch.zeros(4, 1, 2))))
base = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
td = D.TransformedDistribution(base, [T.AffineTransform(1.0, 2.0), T.ExpTransform()])
tour("TransformedDistribution", td, x2)
logit_normal = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.SigmoidTransform()])
print("logit-normal", logit_normal.support, fmt(logit_normal.log_prob(torch.tensor([0.2, 0.5]))),
      fmt(logit_normal.cdf(torch.tensor([0.2, 0.5]))), fmt(logit_normal.icdf(torch.tensor(0.9))))

# --- 5. KL divergences -------------------------------------------------------------------
print("== KL")
pairs = {
    "Bernoulli": (D.Bernoulli(torch.tensor([0.3, 0.6])), D.Bernoulli(torch.tensor(0.5))),
    "Binomial": (D.Binomial(5, torch.tensor(0.3)), D.Binomial(5, torch.tensor(0.6))),
    "Categorical": (D.Categorical(cat_p), D.Categorical(logits=torch.zeros(3))),
    "OneHot": (D.OneHotCategorical(cat_p), D.OneHotCategorical(torch.tensor([0.3, 0.3, 0.4]))),
    "Poisson": (D.Poisson(torch.tensor([1.0, 3.0])), D.Poisson(torch.tensor(2.0))),
    "Geometric": (D.Geometric(torch.tensor(0.3)), D.Geometric(torch.tensor(0.6))),
    "Beta": (D.Beta(torch.tensor(2.0), torch.tensor(3.0)),
             D.Beta(torch.tensor(1.0), torch.tensor(1.0))),
    "Gamma": (D.Gamma(torch.tensor(2.0), torch.tensor(1.0)),
              D.Gamma(torch.tensor(3.0), torch.tensor(2.0))),
    "Exponential": (D.Exponential(torch.tensor(2.0)), D.Exponential(torch.tensor(0.5))),
    "Exp-Gamma": (D.Exponential(torch.tensor(2.0)), D.Gamma(torch.tensor(2.0), torch.tensor(1.0))),
    "Laplace": (D.Laplace(0.0, 1.0), D.Laplace(1.0, 2.0)),
    "Cauchy": (D.Cauchy(0.0, 1.0), D.Cauchy(1.0, 2.0)),
    "HalfNormal": (D.HalfNormal(torch.tensor(1.0)), D.HalfNormal(torch.tensor(2.0))),
    "LogNormal": (D.LogNormal(0.0, 1.0), D.LogNormal(0.5, 0.5)),
    "Gumbel": (D.Gumbel(0.0, 1.0), D.Gumbel(1.0, 2.0)),
    "Pareto": (D.Pareto(1.0, 3.0), D.Pareto(0.5, 2.0)),
    "Uniform": (D.Uniform(0.0, 1.0), D.Uniform(-1.0, 2.0)),
    "Uniform-Normal": (D.Uniform(0.0, 1.0), D.Normal(0.0, 1.0)),
    "Normal-Gumbel": (D.Normal(0.0, 1.0), D.Gumbel(0.0, 1.0)),
    "Dirichlet": (diri, D.Dirichlet(torch.ones(3))),
    "MVN": (mvn_c, D.MultivariateNormal(torch.zeros(3), torch.eye(3))),
    "LowRank-LowRank": (lr, D.LowRankMultivariateNormal(torch.zeros(3), torch.ones(3, 1),
                                                        torch.ones(3))),
    "Independent": (ind, D.Independent(D.Normal(torch.ones(3, 2), 2 * torch.ones(3, 2)), 1)),
    "ContinuousBernoulli": (D.ContinuousBernoulli(torch.tensor(0.3)),
                            D.ContinuousBernoulli(torch.tensor(0.6))),
    "Transformed": (D.LogNormal(0.0, 1.0), D.LogNormal(1.0, 1.0)),
    "Wishart": (wish, D.Wishart(df=torch.tensor(5.0), covariance_matrix=torch.eye(2))),
    "Uniform-Beta": (D.Uniform(0.2, 0.6), D.Beta(torch.tensor(2.0), torch.tensor(3.0))),
    "Beta-Uniform": (D.Beta(torch.tensor(2.0), torch.tensor(3.0)), D.Uniform(0.2, 0.6)),
    "Laplace-Normal": (D.Laplace(0.0, 1.0), D.Normal(0.5, 2.0)),
}
for name, (p_, q_) in pairs.items():
    attempt(f"KL {name}", lambda a=p_, b=q_: kl_divergence(a, b))
attempt("KL unregistered", lambda: kl_divergence(D.VonMises(0.0, 1.0), D.Normal(0.0, 1.0)))
attempt("KL StudentT", lambda: kl_divergence(D.StudentT(3.0), D.StudentT(4.0)))
attempt("KL shape mismatch", lambda: kl_divergence(D.Normal(torch.zeros(2), 1.0),
                                                   D.Normal(torch.zeros(3), 1.0)))


@D.kl.register_kl(D.VonMises, D.Uniform)
def _kl_vonmises_uniform(p_, q_):
    # against a circular uniform on [-pi, pi): log(2 pi) - entropy(p), in Bessel functions
    k = p_.concentration
    log_i0 = torch.special.i0e(k).log() + k
    entropy = -k * torch.special.i1e(k) / torch.special.i0e(k) + math.log(2 * math.pi) + log_i0
    return math.log(q_.high - q_.low) - entropy


print("  registered VonMises->Uniform", fmt(kl_divergence(D.VonMises(torch.tensor([0.0, 1.0]),
                                                                    torch.tensor([0.5, 4.0])),
                                                        D.Uniform(-math.pi, math.pi))))


class Normal2(D.Normal):
    """A subclass: KL lookup falls back on the parent's rule."""


print("  subclass", fmt(kl_divergence(Normal2(0.0, 1.0), D.Normal(1.0, 1.0))))
D.kl.register_kl(Normal2, D.Distribution)(lambda p_, q_: torch.tensor(1.0))
D.kl.register_kl(D.Distribution, Normal2)(lambda p_, q_: torch.tensor(2.0))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ambiguous = kl_divergence(Normal2(0.0, 1.0), Normal2(1.0, 1.0))
print("  ambiguous", fmt(ambiguous), [f"{w.category.__name__}: {w.message}" for w in caught])
attempt("register_kl of a non-class", lambda: D.kl.register_kl(3, D.Normal))

# --- 6. transforms -------------------------------------------------------------------------
print("== transforms")
xt = torch.tensor([[-1.0, 0.5, 2.0], [0.3, -0.2, 0.1]])
ts = {
    "Exp": T.ExpTransform(),
    "Affine": T.AffineTransform(loc=1.0, scale=torch.tensor([2.0, -0.5, 3.0])),
    "Sigmoid": T.SigmoidTransform(),
    "Tanh": T.TanhTransform(),
    "Power": T.PowerTransform(exponent=torch.tensor(2.0)),
    "Softmax": T.SoftmaxTransform(),
    "StickBreaking": T.StickBreakingTransform(),
    "Compose": T.ComposeTransform([T.AffineTransform(0.0, 0.5), T.ExpTransform()]),
    "Abs": T.AbsTransform(),
    "Softplus": T.SoftplusTransform(),
    "LowerCholesky": T.LowerCholeskyTransform(),
}
for name, t in ts.items():
    arg = xt.exp() if name == "Power" else xt
    if name == "LowerCholesky":
        arg = torch.tensor([[0.5, 1.0], [-0.3, 0.2]])
    y = t(arg)
    try:
        sign = t.sign
    except NotImplementedError:
        sign = "undefined"
    print(f"  {name}: bijective={t.bijective} sign={sign}"
          f" event_dim={t.domain.event_dim}->{t.codomain.event_dim}")
    print("    forward", fmt(y))
    if t.bijective:
        print("    inverse", fmt(t.inv(y)), "inv of inv is t:", t.inv.inv is t)
        attempt("log_abs_det_jacobian", lambda t=t, a=arg, y=y: t.log_abs_det_jacobian(a, y))
    print("    shapes", t.forward_shape(tuple(arg.shape)), t.inverse_shape(tuple(y.shape)))
cc = T.CorrCholeskyTransform()
raw = torch.tensor([0.5, -1.0, 0.3])
Lc = cc(raw)
print("  CorrCholesky", fmt(Lc), "inverse", fmt(cc.inv(Lc)))
print("    log_abs_det_jacobian", fmt(cc.log_abs_det_jacobian(raw, Lc)),
      "row norms", fmt(Lc.pow(2).sum(-1)))
sb = T.StickBreakingTransform()
print("  StickBreaking shapes", sb.forward_shape((4, 3)), sb.inverse_shape((4, 4)))
print("  Compose", ts["Compose"], "inv", ts["Compose"].inv)
print("  Tanh(0.9999) inv", fmt(T.TanhTransform()(torch.tensor(5.0))),
      fmt(T.TanhTransform().inv(torch.tensor(0.9999))))
cat_t = T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=0, lengths=[1, 1])
stack_t = T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=1)
print("  Cat", fmt(cat_t(torch.tensor([[0.5], [1.0]]))), "Stack",
      fmt(stack_t(torch.tensor([[0.0, 0.0], [1.0, 1.0]]))))
rt = T.ReshapeTransform((2, 3), (6,))
print("  Reshape", tuple(rt(xt).shape), tuple(rt.inv(rt(xt)).shape))
it = T.IndependentTransform(T.ExpTransform(), 1)
print("  Independent ladj", fmt(it.log_abs_det_jacobian(xt, it(xt))))
print("  identity", T.identity_transform, T.identity_transform(xt).equal(xt))

# --- 7. constraints -------------------------------------------------------------------------
print("== constraints")
cons = {
    "real": constraints.real, "positive": constraints.positive,
    "unit_interval": constraints.unit_interval, "simplex": constraints.simplex,
    "interval": constraints.interval(-1.0, 2.0), "greater_than": constraints.greater_than(1.0),
    "half_open": constraints.half_open_interval(0.0, 1.0), "boolean": constraints.boolean,
    "integer_interval": constraints.integer_interval(0, 3),
    "nonnegative_integer": constraints.nonnegative_integer,
    "lower_cholesky": constraints.lower_cholesky,
    "positive_definite": constraints.positive_definite,
    "corr_cholesky": constraints.corr_cholesky, "real_vector": constraints.real_vector,
}
probe = torch.tensor([[0.2, 0.3, 0.5], [1.0, -1.0, 1.0]])
for name, c in cons.items():
    matrices = torch.tensor([[[1.0, 0.0], [0.5, 2.0]], [[2.0, 1.0], [1.0, 2.0]]])
    value = probe if c.event_dim <= 1 else matrices
    print(f"  {name}: {c} discrete={c.is_discrete} event_dim={c.event_dim}",
          c.check(value).tolist())
for c in (constraints.positive, constraints.unit_interval, constraints.simplex,
          constraints.interval(-1.0, 2.0), constraints.greater_than(1.0),
          constraints.lower_cholesky, constraints.positive_definite, constraints.corr_cholesky,
          constraints.real_vector):
    for label, registry in (("biject_to", D.biject_to), ("transform_to", D.transform_to)):
        attempt(f"{c} {label}", lambda r=registry, c=c: type(r(c)).__name__)
z = torch.tensor([-0.5, 0.0, 0.5])
print("  to simplex", fmt(D.biject_to(constraints.simplex)(z)),
      fmt(D.transform_to(constraints.simplex)(z)))
print("  to interval", fmt(D.transform_to(constraints.interval(-1.0, 2.0))(z)))
print("  to positive_definite", fmt(D.transform_to(constraints.positive_definite)(
    torch.tensor([[0.1, 0.0], [0.4, -0.2]]))))
print("  independent", constraints.independent(constraints.positive, 1),
      constraints.independent(constraints.positive, 1).check(probe).tolist())
print("  cat", constraints.cat([constraints.positive, constraints.real], dim=0, lengths=[1, 1])
      .check(torch.tensor([1.0, -1.0])).tolist(),
      "stack", constraints.stack([constraints.positive, constraints.real], dim=0)
      .check(torch.tensor([-1.0, -1.0])).tolist())
attempt("biject_to(boolean)", lambda: D.biject_to(constraints.boolean))
attempt("transform_to(integer_interval)",
        lambda: D.transform_to(constraints.integer_interval(0, 3)))

# --- 8. gradients: pathwise (rsample) against score function (log_prob) -----------------
print("== gradients")
mu = torch.tensor(0.5, requires_grad=True)
sigma = torch.tensor(1.2, requires_grad=True)
torch.manual_seed(4)
eps_draws = D.Normal(mu, sigma).rsample((4000,))
print("rsample grad_fn", eps_draws.grad_fn.name(), "requires_grad", eps_draws.requires_grad)
(eps_draws ** 2).mean().backward()
print(f"pathwise d E[x^2]/dmu {mu.grad.item():.4f} dsigma {sigma.grad.item():.4f}"
      f" (exact {2 * mu.item():.4f} {2 * sigma.item():.4f})")
mu.grad, sigma.grad = None, None
torch.manual_seed(4)
q = D.Normal(mu, sigma)
xs = q.sample((4000,))
print("sample requires_grad", xs.requires_grad)
surrogate = (xs ** 2 * q.log_prob(xs)).mean()
surrogate.backward()
print(f"score-function d/dmu {mu.grad.item():.4f} dsigma {sigma.grad.item():.4f}")
for name, make in (("Gamma", lambda a: D.Gamma(a, 1.0)), ("Beta", lambda a: D.Beta(a, 2.0)),
                   ("Dirichlet", lambda a: D.Dirichlet(torch.stack([a, 2 * a]))),
                   ("StudentT", lambda a: D.StudentT(a)),
                   ("Kumaraswamy", lambda a: D.Kumaraswamy(a, 2.0)),
                   ("RelaxedBernoulli", lambda a: D.RelaxedBernoulli(a, probs=0.3))):
    a = torch.tensor(1.5, requires_grad=True)
    torch.manual_seed(5)
    s = make(a).rsample((500,))
    s[..., 0].mean().backward()
    print(f"  {name} implicit grad d mean/d a {a.grad.item():.4f}, grad_fn {s.grad_fn.name()}")
logits = torch.tensor([0.2, -0.4, 1.0], requires_grad=True)
cat = D.Categorical(logits=logits)
torch.manual_seed(6)
acts = cat.sample((64,))
reward = (acts == 2).float()
loss = -(cat.log_prob(acts) * (reward - reward.mean())).mean()
loss.backward()
print("REINFORCE grad", fmt(logits.grad), "entropy grad_fn", cat.entropy().grad_fn.name())
cb_logits = torch.tensor([0.5, -1.0], requires_grad=True)
D.ContinuousBernoulli(logits=cb_logits).rsample((8,)).sum().backward()
print("ContinuousBernoulli rsample grad", fmt(cb_logits.grad))

# --- 9. validation -----------------------------------------------------------------------
print("== validation")
print("default validate_args", D.Distribution._validate_args)
checks = {
    "Normal negative scale": lambda: D.Normal(0.0, -1.0),
    "Bernoulli probs > 1": lambda: D.Bernoulli(probs=torch.tensor([0.5, 1.5])),
    "Bernoulli both": lambda: D.Bernoulli(probs=0.5, logits=0.0),
    "Categorical neither": lambda: D.Categorical(),
    "Categorical negative probs": lambda: D.Categorical(probs=torch.tensor([0.5, -0.1, 0.6])),
    "Beta zero concentration": lambda: D.Beta(torch.tensor(0.0), torch.tensor(1.0)),
    "Uniform low >= high": lambda: D.Uniform(torch.tensor(2.0), torch.tensor(1.0)),
    "Poisson negative rate": lambda: D.Poisson(torch.tensor(-1.0)),
    "Binomial fractional count": lambda: D.Binomial(total_count=2.5, probs=torch.tensor(0.5)),
    "Dirichlet scalar": lambda: D.Dirichlet(torch.tensor(1.0)),
    "MVN non-PD covariance": lambda: D.MultivariateNormal(torch.zeros(2), torch.tensor(
        [[1.0, 2.0], [2.0, 1.0]])),
    "MVN no matrix": lambda: D.MultivariateNormal(torch.zeros(2)),
    "MVN loc scalar": lambda: D.MultivariateNormal(torch.tensor(0.0), torch.eye(2)),
    "Bernoulli log_prob 0.5": lambda: D.Bernoulli(0.3).log_prob(torch.tensor(0.5)),
    "Poisson log_prob -1": lambda: D.Poisson(2.0).log_prob(torch.tensor(-1.0)),
    "Exponential log_prob -1": lambda: D.Exponential(2.0).log_prob(torch.tensor(-1.0)),
    "Beta log_prob 1.2": lambda: D.Beta(2.0, 2.0).log_prob(torch.tensor(1.2)),
    "Categorical log_prob 5": lambda: D.Categorical(cat_p).log_prob(torch.tensor([5, 0])),
    "Dirichlet off simplex": lambda: diri.log_prob(torch.tensor([0.5, 0.5, 0.5])),
    "Normal wrong shape": lambda: D.Normal(torch.zeros(3), 1.0).log_prob(torch.zeros(2)),
    "MVN wrong event": lambda: mvn_c.log_prob(torch.zeros(2)),
    "Normal log_prob of a list": lambda: D.Normal(0.0, 1.0).log_prob([0.0]),
    "Uniform outside": lambda: D.Uniform(0.0, 1.0).log_prob(torch.tensor(2.0)),
    "Wishart non-PD": lambda: D.Wishart(torch.tensor(3.0), torch.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "rsample of Bernoulli": lambda: D.Bernoulli(0.3).rsample(),
    "rsample of Categorical": lambda: D.Categorical(cat_p).rsample(),
    "Poisson enumerate_support": lambda: D.Poisson(2.0).enumerate_support(),
    "expand wrong": lambda: D.Normal(torch.zeros(3), 1.0).expand((2,)),
    "Independent too many dims": lambda: D.Independent(D.Normal(torch.zeros(3), 1.0), 2),
    "Mixture shape mismatch": lambda: D.MixtureSameFamily(D.Categorical(torch.ones(2)),
                                                          D.Normal(torch.zeros(3), 1.0)),
    "Mixture not Categorical": lambda: D.MixtureSameFamily(D.Bernoulli(0.5), D.Normal(0.0, 1.0)),
    "TransformedDistribution bad transform": lambda: D.TransformedDistribution(
        D.Normal(0.0, 1.0), "exp"),
    "independent constraint, -1 dims": lambda: constraints.independent(constraints.positive, -1),
    "independent of a non-constraint": lambda: constraints.independent("positive", 1),
    "CatTransform dim out of range": lambda: T.CatTransform([T.ExpTransform()], dim=2)(
        torch.ones(3)),
    "broadcast_all of a string": lambda: D.Normal(0.0, "1.0"),
    "Affine ladj event": lambda: T.AffineTransform(0.0, 2.0, event_dim=1).log_abs_det_jacobian(
        torch.zeros(3), torch.zeros(3)),
}
for name, call in checks.items():
    attempt(name, call)
print("explicit validate_args=False:", fmt(D.Bernoulli(0.3, validate_args=False).log_prob(
    torch.tensor(0.5))), fmt(D.Normal(0.0, -1.0, validate_args=False).scale))
D.Distribution.set_default_validate_args(False)
print("after set_default_validate_args(False):", D.Distribution._validate_args,
      fmt(D.Exponential(2.0).log_prob(torch.tensor(-1.0))),
      fmt(D.Categorical(probs=torch.tensor([0.5, -0.1, 0.6])).probs))
attempt("still validated when asked", lambda: D.Normal(0.0, -1.0, validate_args=True))
D.Distribution.set_default_validate_args(True)
attempt("set_default_validate_args('yes')", lambda: D.Distribution.set_default_validate_args("yes"))
print("support of a Normal", D.Normal(0.0, 1.0).support, D.Normal(0.0, 1.0))
print(D.Gamma(torch.tensor([1.0, 2.0]), 1.0), D.MultivariateNormal(torch.zeros(2), torch.eye(2)))
print("done")
