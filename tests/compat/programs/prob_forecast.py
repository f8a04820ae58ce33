"""Probabilistic time-series forecasting with torch.distributions.

A small GRU forecaster emits distribution parameters (softplus scales, constraints mapped with
transform_to / biject_to) and is trained by negative log-likelihood under StudentT, Normal,
LogNormal, NegativeBinomial (counts), LowRankMultivariateNormal (several series) and a
MixtureSameFamily of Normals. It then computes quantile forecasts (icdf and Monte-Carlo
torch.quantile), the CRPS of a Normal in closed form and by samples, the pinball loss,
kl_divergence pairs, TransformedDistribution with Affine/Exp/Sigmoid/Compose transforms,
expand / batch_shape / event_shape / support / arg_constraints, validate_args switches, and
typical user mistakes caught with try/except.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import (
    AffineTransform,
    Categorical,
    ComposeTransform,
    Distribution,
    ExpTransform,
    Independent,
    LogNormal,
    LowRankMultivariateNormal,
    MixtureSameFamily,
    NegativeBinomial,
    Normal,
    SigmoidTransform,
    StudentT,
    TransformedDistribution,
    biject_to,
    constraints,
    kl_divergence,
    transform_to,
)

torch.manual_seed(0)

# --- synthetic data: 3 series with a shared seasonal pattern plus noise, and counts ---
T, S, W = 64, 3, 8
t = torch.arange(T, dtype=torch.float32)
season = torch.sin(2 * math.pi * t / 12)
series = season[:, None] * torch.tensor([1.0, 0.5, -0.8]) + 0.3 * torch.randn(T, S)
counts = torch.poisson(3.0 + 2.0 * (season + 1.0))
print("series", series.shape, series.dtype, "counts", counts.shape, counts.sum().item())


def windows(x, w):
    xs = x.unfold(0, w + 1, 1)  # (T - w, S, w + 1)
    return xs[..., :w].permute(0, 2, 1), xs[..., w]


inp, target = windows(series, W)
print("windows", inp.shape, target.shape)


class Forecaster(nn.Module):
    def __init__(self, n_in, n_params, hidden=16):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_params)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def fit(model, make_dist, y, steps=40, lr=0.02, x=inp):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        d = make_dist(model(x))
        loss = -d.log_prob(y).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


# --- StudentT on series 0 ---
torch.manual_seed(1)
m_t = Forecaster(S, 3)


def student(p):
    return StudentT(2.0 + F.softplus(p[:, 0]), p[:, 1], F.softplus(p[:, 2]) + 1e-3)


print(f"studentT nll {fit(m_t, student, target[:, 0]):.4f}")

# --- Normal with the scale mapped through transform_to(constraints.positive) ---
torch.manual_seed(2)
m_n = Forecaster(S, 2)
to_pos = transform_to(constraints.positive)


def normal(p):
    return Normal(p[:, 0], to_pos(p[:, 1]))


print(f"normal nll {fit(m_n, normal, target[:, 0]):.4f}", type(to_pos).__name__)
with torch.no_grad():
    d = normal(m_n(inp[-4:]))
    print("normal mean", d.mean, "stddev", d.stddev)
    qs = torch.tensor([0.1, 0.5, 0.9])
    q = d.icdf(qs[:, None])
    print("icdf quantiles", q.shape, q[:, 0])
    print("cdf of median", d.cdf(q[1]))
    print("entropy", d.entropy())

# --- LogNormal on exp(series) ---
torch.manual_seed(3)
m_ln = Forecaster(S, 2)
nll = fit(m_ln, lambda p: LogNormal(p[:, 0], F.softplus(p[:, 1])), target[:, 1].exp())
print(f"lognormal nll {nll:.4f}")
ln = LogNormal(torch.tensor([0.0, 0.5]), torch.tensor([0.5, 0.25]))
print("lognormal mean", ln.mean, "var", ln.variance, "mode", ln.mode)

# --- NegativeBinomial on counts ---
cin, ctarget = windows(counts[:, None], W)
torch.manual_seed(4)
m_nb = Forecaster(1, 2)


def negbin(p):
    return NegativeBinomial(total_count=F.softplus(p[:, 0]) + 0.1, logits=p[:, 1])


print(f"negbin nll {fit(m_nb, negbin, ctarget[:, 0], x=cin / 10):.4f}")
with torch.no_grad():
    nb = negbin(m_nb(cin[-3:] / 10))
    print("negbin mean", nb.mean, "variance", nb.variance, "mode", nb.mode)

# --- LowRankMultivariateNormal over the 3 series jointly ---
torch.manual_seed(5)
m_lr = Forecaster(S, S + S * 2 + S)


def lowrank(p):
    loc = p[:, :S]
    factor = p[:, S : 3 * S].reshape(-1, S, 2) * 0.3
    diag = F.softplus(p[:, 3 * S :]) + 1e-2
    return LowRankMultivariateNormal(loc, factor, diag)


print(f"lowrank nll {fit(m_lr, lowrank, target):.4f}")
with torch.no_grad():
    lr_d = lowrank(m_lr(inp[:2]))
    print("lowrank", lr_d.batch_shape, lr_d.event_shape, lr_d.covariance_matrix.shape)
    print("lowrank variance", lr_d.variance[0], "entropy", lr_d.entropy())

# --- Mixture of 3 Normals ---
torch.manual_seed(6)
m_mix = Forecaster(S, 9)


def mixture(p):
    mix = Categorical(logits=p[:, :3])
    comp = Normal(p[:, 3:6], F.softplus(p[:, 6:9]) + 1e-2)
    return MixtureSameFamily(mix, comp)


print(f"mixture nll {fit(m_mix, mixture, target[:, 2]):.4f}")
with torch.no_grad():
    mx = mixture(m_mix(inp[:3]))
    print("mixture mean", mx.mean, "variance", mx.variance)
    print("mixture cdf at mean", mx.cdf(mx.mean), mx.log_prob(mx.mean).shape)

# --- samples, Monte-Carlo quantiles, CRPS and pinball ---
torch.manual_seed(7)
base = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
x = base.rsample((2000,))
print("rsample", x.shape, x.requires_grad, base.sample().shape)
mc_q = torch.quantile(x, torch.tensor([0.1, 0.5, 0.9]), dim=0)
print("mc quantiles", mc_q.shape)
print("icdf quantiles", base.icdf(torch.tensor([[0.1], [0.5], [0.9]])))
y = torch.tensor([0.3, 0.2])
z = (y - base.loc) / base.scale
pdf = torch.exp(-0.5 * z**2) / math.sqrt(2 * math.pi)
crps = base.scale * (z * (2 * torch.special.ndtr(z) - 1) + 2 * pdf - 1 / math.sqrt(math.pi))
print("crps closed", crps)
print("tail probs", torch.special.ndtr(torch.tensor([-7.0, -2.5, 0.0, 1.5])))
print(
    "log tail",
    torch.special.log_ndtr(torch.tensor([-7.0, -2.5])),
    torch.special.ndtri(torch.tensor([0.05, 0.95])),
)
crps_mc = (x - y).abs().mean(0) - 0.5 * (x[:1000] - x[1000:]).abs().mean(0)
print("crps mc", crps_mc.shape)


def pinball(q_pred, y, taus):
    diff = y - q_pred
    return torch.maximum(taus * diff, (taus - 1) * diff).mean()


taus = torch.tensor([0.1, 0.5, 0.9])[:, None]
print(f"pinball {pinball(base.icdf(taus.expand(3, 2)), y, taus):.4f}")

# --- kl divergences ---
p, qn = Normal(0.0, 1.0), Normal(torch.tensor([0.5, -1.0]), torch.tensor([2.0, 0.5]))
print("kl normal", kl_divergence(p, qn))
ip = Independent(Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
iq = Independent(Normal(torch.full((2, 3), 0.2), torch.full((2, 3), 1.5)), 1)
print("kl independent", kl_divergence(ip, iq), ip.batch_shape, ip.event_shape)
torch.manual_seed(8)
mix1 = MixtureSameFamily(
    Categorical(torch.tensor([0.3, 0.7])), Normal(torch.tensor([-1.0, 1.0]), torch.ones(2))
)
s = mix1.sample((4000,))
print(f"kl mixture mc {(mix1.log_prob(s) - p.log_prob(s)).mean():.2f}")

# --- transformed distributions ---
tr = ComposeTransform([AffineTransform(0.5, 2.0), ExpTransform()])
td = TransformedDistribution(Normal(0.0, 0.3), tr)
v = torch.tensor([0.5, 2.0, 5.0])
print("compose log_prob", td.log_prob(v), td.support)
sig = TransformedDistribution(Normal(torch.zeros(2), torch.ones(2)), [SigmoidTransform()])
print("sigmoid cdf", sig.cdf(torch.tensor([0.25, 0.75])), sig.icdf(torch.tensor([0.2, 0.6])))
bij = biject_to(constraints.interval(0.0, 2.0))
print("biject interval", bij(torch.tensor([-1.0, 0.0, 3.0])), bij.inv(torch.tensor([0.5])))
print("unit interval", type(biject_to(constraints.unit_interval)).__name__)

simplex = transform_to(constraints.simplex)
w = simplex(torch.tensor([[0.2, -0.4], [1.0, 0.0]]))
print("simplex", w, w.sum(-1), simplex.event_dim, type(simplex).__name__)
chol = transform_to(constraints.lower_cholesky)(torch.tensor([[0.5, 9.0], [0.3, -0.2]]))
print("lower cholesky", chol)
aff = AffineTransform(torch.tensor([1.0, -1.0]), torch.tensor([2.0, 0.5]), event_dim=1)
print("affine ladj", aff.log_abs_det_jacobian(torch.zeros(2), aff(torch.zeros(2))), aff.sign)
exp_t = ExpTransform()
print("exp inverse", exp_t.inv(torch.tensor([1.5, 4.0])), exp_t.inv.inv is exp_t, exp_t.bijective)
ln2 = TransformedDistribution(
    Normal(torch.tensor([0.0, 0.5]), torch.tensor([0.5, 0.25])), ExpTransform()
)
print(
    "lognormal via transform",
    ln2.log_prob(torch.tensor([1.0, 2.0])),
    ln.log_prob(torch.tensor([1.0, 2.0])),
)
print("kl lognormal", kl_divergence(ln, LogNormal(torch.zeros(2), torch.ones(2))))
lr1 = LowRankMultivariateNormal(torch.zeros(3), torch.full((3, 1), 0.5), torch.ones(3))
lr2 = LowRankMultivariateNormal(
    torch.ones(3), torch.tensor([[0.2], [0.1], [0.0]]), torch.full((3,), 2.0)
)
print("kl lowrank", kl_divergence(lr1, lr2), lr1.log_prob(torch.tensor([0.1, -0.2, 0.3])))
print(
    "studentT stats",
    StudentT(torch.tensor([1.5, 3.0, 5.0])).variance,
    StudentT(4.0, 1.0, 2.0).entropy(),
)
print(
    "normal perplexity",
    Normal(0.0, 2.0).perplexity(),
    Normal(0.0, 2.0).log_prob(torch.tensor([0.0, 1.0])),
)
ind = Independent(Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
print("independent", ind.entropy(), ind.log_prob(torch.ones(2, 3)), ind.mean.shape, ind.support)

# --- shapes, supports, expand ---
e = Normal(torch.zeros(3), 1.0).expand((2, 3))
print("expand", e.batch_shape, e.event_shape, e.sample((4,)).shape)
print("arg constraints", sorted(StudentT.arg_constraints), StudentT(3.0).support)
print("negbin support", NegativeBinomial(2.0, probs=0.3).support)
print("mixture shapes", mx.batch_shape, mx.event_shape, mx.expand((2, 3)).batch_shape)
print(
    "lowrank expand", lr1.expand((4,)).sample().shape, lr1.support, lr1.arg_constraints["cov_diag"]
)
torch.manual_seed(9)
print(
    "seeded",
    Normal(0.0, 1.0).sample((3,)),
    StudentT(3.0).rsample((2,)),
    NegativeBinomial(3.0, 0.4).sample((4,)),
)


# --- mistakes ---
def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", out)
    except Exception as err:
        print(label, type(err).__name__, (str(err).splitlines() or [""])[0])


attempt("negative scale", lambda: Normal(0.0, torch.tensor(-1.0), validate_args=True))
attempt(
    "outside support", lambda: LogNormal(0.0, 1.0, validate_args=True).log_prob(torch.tensor(-1.0))
)
attempt("studentT icdf", lambda: StudentT(3.0).icdf(torch.tensor(0.5)))
attempt(
    "mixture batch",
    lambda: MixtureSameFamily(
        Categorical(logits=torch.zeros(2, 3)), Normal(torch.zeros(4, 3), 1.0)
    ),
)
attempt(
    "lowrank shape",
    lambda: LowRankMultivariateNormal(torch.zeros(3), torch.ones(2, 1), torch.ones(3)),
)
attempt("kl unregistered", lambda: kl_divergence(Normal(0.0, 1.0), mix1))
attempt("studentT cdf", lambda: StudentT(3.0).cdf(torch.tensor(0.5)))
attempt(
    "nb probs range", lambda: NegativeBinomial(2.0, probs=torch.tensor(1.5), validate_args=True)
)
attempt(
    "mixture not categorical",
    lambda: MixtureSameFamily(Normal(0.0, 1.0), Normal(torch.zeros(3), 1.0)),
)
attempt(
    "count negative",
    lambda: NegativeBinomial(2.0, 0.3, validate_args=True).log_prob(torch.tensor(-1.0)),
)
Distribution.set_default_validate_args(False)
attempt("no validation", lambda: Normal(0.0, torch.tensor(-1.0)).scale)
attempt(
    "no validation lp", lambda: round(LogNormal(0.0, 1.0).log_prob(torch.tensor(2.0)).item(), 4)
)
Distribution.set_default_validate_args(True)
attempt("validation back", lambda: Normal(0.0, torch.tensor(-1.0)))
attempt("bad default", lambda: Distribution.set_default_validate_args("yes"))
