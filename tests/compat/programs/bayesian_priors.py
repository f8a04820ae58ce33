"""Bayesian priors with torch.distributions: an LKJ prior on a correlation matrix, a
Wishart / InverseGamma hierarchical model fitted by variational inference (rsample and the
reparameterisation trick), Kumaraswamy as a Beta surrogate, LogisticNormal simplex weights,
a Generalized Pareto tail fitted by maximum likelihood, and F tests with FisherSnedecor."""

import math
import warnings

import torch
from torch.distributions import (
    Beta,
    ExponentialFamily,
    FisherSnedecor,
    Gamma,
    GeneralizedPareto,
    InverseGamma,
    Kumaraswamy,
    LKJCholesky,
    LogisticNormal,
    MultivariateNormal,
    Normal,
    Poisson,
    Wishart,
    constraints,
    kl_divergence,
    transform_to,
)

torch.manual_seed(0)


def show(name, t):
    print(f"{name}: {[round(v, 4) for v in t.reshape(-1).tolist()]}")


# --- 1. LKJ prior on a correlation matrix ----------------------------------------------------
print("== LKJ prior")
lkj = LKJCholesky(3, concentration=2.0)
print(lkj, lkj.batch_shape, lkj.event_shape, lkj.support)
L = lkj.sample()
corr = L @ L.T
show("sampled corr", corr)
print(f"diag of corr: {corr.diagonal().tolist()}")
print(f"log_prob(L) = {lkj.log_prob(L).item():.5f}")
print(f"log_prob(I) = {lkj.log_prob(torch.eye(3)).item():.5f}")
etas = torch.tensor([0.5, 1.0, 5.0])
print("log_prob(I) per eta:", [f"{v:.4f}" for v in LKJCholesky(3, etas).log_prob(torch.eye(3))])
draws = LKJCholesky(3, etas).sample((200,))
off = (draws @ draws.transpose(-1, -2))[..., 1, 0]
print("mean |r_21| per eta:", [f"{v:.3f}" for v in off.abs().mean(0)])

# MAP estimate of a correlation matrix: data from a correlated normal, LKJ prior on the factor
true_corr = torch.tensor([[1.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 1.0]])
data = MultivariateNormal(torch.zeros(3), true_corr).sample((100,))
to_chol = transform_to(constraints.corr_cholesky)
print(type(to_chol).__name__, to_chol.domain, to_chol.codomain)
raw = torch.zeros(3, requires_grad=True)
opt = torch.optim.Adam([raw], lr=0.1)
for step in range(60):
    chol = to_chol(raw)
    loss = -(MultivariateNormal(torch.zeros(3), scale_tril=chol).log_prob(data).sum()
             + lkj.log_prob(chol))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step:2d}  neg log posterior {loss.item():.4f}")
chol = to_chol(raw).detach()
show("MAP corr", chol @ chol.T)

# --- 2. Wishart / InverseGamma hierarchy ------------------------------------------------------
print("== Wishart")
prior = Wishart(df=torch.tensor(5.0), covariance_matrix=0.2 * torch.eye(3))
print(prior, prior.batch_shape, prior.event_shape)
show("prior mean", prior.mean)
show("prior variance", prior.variance)
print(f"prior entropy {prior.entropy().item():.4f}")
print(f"Bregman entropy {ExponentialFamily.entropy(prior).item():.4f}")
# conjugate update of a precision matrix with the zero-mean data above
scatter = data.T @ data
post = Wishart(df=prior.df + data.shape[0],
               precision_matrix=torch.linalg.inv(prior.covariance_matrix) + scatter)
show("posterior mean precision", post.mean)
show("inverse of true corr", torch.linalg.inv(true_corr))
print(f"log_prob of the posterior mean {post.log_prob(post.mean).item():.4f}")
print(f"KL(post || prior) = {kl_divergence(post, prior).item():.4f}")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    W = post.rsample((2,))
print("rsample shape", tuple(W.shape), "warnings:", [str(w.message) for w in caught])
print("samples positive definite:", constraints.positive_definite.check(W).tolist())
batch = Wishart(df=torch.tensor([4.0, 8.0]), scale_tril=torch.eye(2))
print(batch, batch.batch_shape, tuple(batch.expand((3, 2)).mean.shape))

print("== InverseGamma VI")
# y_i ~ Normal(0, sigma^2), sigma^2 ~ InverseGamma(3, 2): fit q(sigma^2) = InverseGamma(a, b)
y = Normal(0.0, 1.5).sample((40,))
ig_prior = InverseGamma(torch.tensor(3.0), torch.tensor(2.0))
print(ig_prior, f"mean {ig_prior.mean.item():.4f} mode {ig_prior.mode.item():.4f}",
      f"var {ig_prior.variance.item():.4f} entropy {ig_prior.entropy().item():.4f}")
log_a = torch.tensor(0.5, requires_grad=True)
log_b = torch.tensor(0.5, requires_grad=True)
opt = torch.optim.Adam([log_a, log_b], lr=0.1)
for step in range(150):
    q = InverseGamma(log_a.exp(), log_b.exp())
    s2 = q.rsample((8,))
    log_lik = Normal(0.0, s2.sqrt().unsqueeze(-1)).log_prob(y).sum(-1)
    elbo = (log_lik + ig_prior.log_prob(s2) - q.log_prob(s2)).mean()
    opt.zero_grad()
    (-elbo).backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step:3d}  elbo {elbo.item():.3f}")
q = InverseGamma(log_a.exp(), log_b.exp())
exact = InverseGamma(3.0 + len(y) / 2, 2.0 + (y ** 2).sum() / 2)
print(f"q mean {q.mean.item():.3f}  exact posterior mean {exact.mean.item():.3f}")
print(f"rsample grad_fn: {q.rsample().grad_fn.name()}")

# --- 3. Kumaraswamy as a Beta surrogate -------------------------------------------------------
print("== Kumaraswamy")
target = Beta(torch.tensor(2.0), torch.tensor(5.0))
k = Kumaraswamy(torch.tensor(2.0), torch.tensor(5.0))
print(k, k.support, f"mean {k.mean.item():.4f} var {k.variance.item():.5f}",
      f"mode {k.mode.item():.4f} entropy {k.entropy().item():.4f}")
print(f"Beta mean {target.mean.item():.4f} var {target.variance.item():.5f}")
params = torch.zeros(2, requires_grad=True)
opt = torch.optim.Adam([params], lr=0.05)
for _ in range(100):
    q = Kumaraswamy(*torch.nn.functional.softplus(params).add(0.5).unbind())
    x = q.rsample((128,)).clamp(1e-6, 1 - 1e-6)
    kl = (q.log_prob(x) - target.log_prob(x)).mean()
    opt.zero_grad()
    kl.backward()
    opt.step()
a, b = torch.nn.functional.softplus(params).add(0.5).tolist()
print(f"fitted a={a:.3f} b={b:.3f}  MC KL {kl.item():.4f}")
q = Kumaraswamy(torch.tensor(a), torch.tensor(b))
print(f"surrogate mean {q.mean.item():.4f} (Beta {target.mean.item():.4f})")
grid = torch.tensor([0.1, 0.3, 0.6])
print("densities:", [f"{v:.4f}" for v in q.log_prob(grid).exp()],
      [f"{v:.4f}" for v in target.log_prob(grid).exp()])
print("cdf:", [f"{v:.4f}" for v in q.cdf(grid)])

# --- 4. LogisticNormal over simplex weights ---------------------------------------------------
print("== LogisticNormal")
ln = LogisticNormal(torch.zeros(3), torch.ones(3))
print(ln, ln.batch_shape, ln.event_shape, ln.support)
w = ln.sample((4,))
show("weights", w)
print("rows sum to one:", torch.allclose(w.sum(-1), torch.ones(4)))
print(f"log_prob {[round(v, 4) for v in ln.log_prob(w).tolist()]}")
observed = torch.tensor([[0.5, 0.2, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1], [0.6, 0.1, 0.2, 0.1]])
loc = torch.zeros(3, requires_grad=True)
opt = torch.optim.Adam([loc], lr=0.1)
for _ in range(50):
    nll = -LogisticNormal(loc, torch.full((3,), 0.5)).log_prob(observed).sum()
    opt.zero_grad()
    nll.backward()
    opt.step()
print(f"fitted loc {[round(v, 3) for v in loc.tolist()]}  nll {nll.item():.4f}")
single = LogisticNormal(0.0, 1.0)
print(single, single.batch_shape, single.event_shape, tuple(single.sample((2,)).shape))

# --- 5. Generalized Pareto tail fit by maximum likelihood ---------------------------------------
print("== GeneralizedPareto")
gp_true = GeneralizedPareto(torch.tensor(0.0), torch.tensor(2.0), torch.tensor(0.3))
exceed = gp_true.sample((400,))
print(gp_true, gp_true.support)
print(f"true mean {gp_true.mean.item():.4f} var {gp_true.variance.item():.4f}",
      f"entropy {gp_true.entropy().item():.4f}")
log_scale = torch.tensor(0.0, requires_grad=True)
xi = torch.tensor(0.1, requires_grad=True)
opt = torch.optim.Adam([log_scale, xi], lr=0.05)
for step in range(150):
    nll = -GeneralizedPareto(0.0, log_scale.exp(), xi).log_prob(exceed).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step:3d}  nll {nll.item():.4f}")
fit = GeneralizedPareto(0.0, log_scale.exp().detach(), xi.detach())
print(f"fitted scale {fit.scale.item():.3f} xi {fit.concentration.item():.3f}")
q99 = fit.icdf(torch.tensor(0.99))
print(f"99% quantile {q99.item():.3f}  cdf there {fit.cdf(q99).item():.4f}")
print(f"P(X > 10) = {fit.log_survival_function(torch.tensor(10.0)).exp().item():.5f}")
bounded = GeneralizedPareto(0.0, 1.0, -0.5)
print(bounded.support, f"icdf(1) {bounded.icdf(torch.tensor(1.0)).item():.4f}")

# --- 6. F tests with FisherSnedecor -------------------------------------------------------------
print("== FisherSnedecor")
groups = [Normal(m, 1.0).sample((12,)) for m in (0.0, 0.3, 1.0)]
allv = torch.cat(groups)
grand = allv.mean()
between = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (len(groups) - 1)
within = sum(((g - g.mean()) ** 2).sum() for g in groups) / (len(allv) - len(groups))
F_stat = between / within
f_null = FisherSnedecor(torch.tensor(2.0), torch.tensor(33.0))
print(f_null, f"F = {F_stat.item():.4f}")
print(f"mean {f_null.mean.item():.4f} var {f_null.variance.item():.4f}",
      f"mode {f_null.mode.item():.4f}")
print(f"log density at F {f_null.log_prob(F_stat).item():.4f}")
null_draws = f_null.sample((3000,))
print(f"Monte Carlo p-value {(null_draws > F_stat).float().mean().item():.4f}")
df1 = torch.tensor([1.0, 5.0, 30.0], requires_grad=True)
f = FisherSnedecor(df1, torch.tensor(10.0))
lp = f.log_prob(torch.tensor(1.0)).sum()
lp.backward()
print(f"d log_prob / d df1 {[round(v, 5) for v in df1.grad.tolist()]}")
r = f.rsample()
print(f"rsample {[round(v, 4) for v in r.tolist()]} grad_fn {r.grad_fn.name()}")

# --- 7. exponential families ---------------------------------------------------------------
print("== ExponentialFamily")
for d in (Normal(0.0, 2.0), Gamma(3.0, 2.0), Beta(2.0, 3.0), Poisson(4.0), prior, f_null):
    print(type(d).__name__, isinstance(d, ExponentialFamily))
g = Gamma(torch.tensor(3.0), torch.tensor(2.0))
print(f"Gamma entropy {g.entropy().item():.5f} Bregman {ExponentialFamily.entropy(g).item():.5f}")
kl_pois = kl_divergence(Poisson(torch.tensor(4.0)), Poisson(torch.tensor(2.0)))
print(f"KL Poisson {kl_pois.item():.5f}")

# --- 8. typical mistakes -------------------------------------------------------------------
print("== mistakes")
mistakes = {
    "LKJ of dim 1": lambda: LKJCholesky(1, 1.0),
    "Wishart df too small": lambda: Wishart(torch.tensor(1.0), covariance_matrix=torch.eye(3)),
    "Wishart two scales": lambda: Wishart(torch.tensor(4.0), covariance_matrix=torch.eye(2),
                                          scale_tril=torch.eye(2)),
    "Wishart vector scale": lambda: Wishart(4.0, covariance_matrix=torch.ones(3)),
    "F cdf": lambda: FisherSnedecor(2.0, 3.0).cdf(torch.tensor(1.0)),
    "Poisson entropy": lambda: Poisson(torch.tensor(2.0)).entropy(),
    "KL across families": lambda: kl_divergence(prior, Gamma(torch.tensor(1.0), 1.0)),
    "KL Kumaraswamy vs Beta": lambda: kl_divergence(k, target),
    "InverseGamma bad rate": lambda: InverseGamma(1.0, torch.tensor([1.0, -2.0]),
                                                  validate_args=True),
    "Kumaraswamy outside [0,1]": lambda: Kumaraswamy(2.0, 3.0, validate_args=True).log_prob(
        torch.tensor(1.5)),
    "GP below loc": lambda: GeneralizedPareto(0.0, 1.0, 0.2, validate_args=True).log_prob(
        torch.tensor(-1.0)),
    "LogisticNormal wrong event": lambda: LogisticNormal(
        torch.zeros(2), torch.ones(2), validate_args=True).log_prob(torch.tensor([0.5, 0.5])),
    "LKJ not a factor": lambda: LKJCholesky(2, validate_args=True).log_prob(
        torch.tensor([[1.0, 0.0], [0.9, 0.9]])),
}
for name, call in mistakes.items():
    try:
        call()
        print(f"{name}: no error")
    except Exception as e:  # noqa: BLE001 - printing what a user would see
        print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else repr(e)}")
print(f"done ({math.pi:.2f})")
