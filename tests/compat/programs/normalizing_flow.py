"""A RealNVP normalizing flow on hand-made two-moons data (affine coupling layers with
alternating binary masks and their log-determinants, a MultivariateNormal base), followed by
a tour of torch.distributions: transformed, mixture, simplex and heavy-tailed distributions,
their moments, cdf / icdf, supports, expand, kl_divergence, Gumbel-softmax relaxations and
the argument / sample validation errors real code runs into."""

import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (
    AffineTransform,
    Beta,
    Categorical,
    ComposeTransform,
    Dirichlet,
    Gamma,
    Independent,
    Laplace,
    LogNormal,
    MixtureSameFamily,
    MultivariateNormal,
    Normal,
    OneHotCategorical,
    RelaxedOneHotCategorical,
    SigmoidTransform,
    StudentT,
    TransformedDistribution,
    Uniform,
    biject_to,
    constraints,
    kl_divergence,
    transform_to,
)

torch.manual_seed(0)


# ---------------------------------------------------------------- two moons, by hand
def two_moons(n, noise=0.08):
    half = n // 2
    theta = torch.rand(half) * math.pi
    upper = torch.stack([torch.cos(theta), torch.sin(theta)], dim=1)
    theta = torch.rand(n - half) * math.pi
    lower = torch.stack([1.0 - torch.cos(theta), 0.5 - torch.sin(theta)], dim=1)
    x = torch.cat([upper, lower]) + noise * torch.randn(n, 2)
    y = torch.cat([torch.zeros(half, dtype=torch.long), torch.ones(n - half, dtype=torch.long)])
    return (x - x.mean(0)) / x.std(0), y


data, labels = two_moons(256)
print("data", data.shape, data.dtype, "labels", torch.bincount(labels).tolist())
print("centered", bool(data.mean(0).abs().max() < 1e-6),
      "std", data.std(0, unbiased=True).round(decimals=3))


# ---------------------------------------------------------------- RealNVP
class Coupling(nn.Module):
    """y = x_a + (1 - mask) * (x * exp(s(x_a)) + t(x_a)), with x_a = mask * x."""

    def __init__(self, mask, hidden=32):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, 4))
        self.scale = nn.Parameter(torch.zeros(2))
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, x):
        xa = x * self.mask
        s, t = self.net(xa).chunk(2, dim=-1)
        s = torch.tanh(s) * self.scale.exp()
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        y = xa + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(-1)

    def inverse(self, y):
        ya = y * self.mask
        s, t = self.net(ya).chunk(2, dim=-1)
        s = torch.tanh(s) * self.scale.exp() * (1 - self.mask)
        t = t * (1 - self.mask)
        x = ya + (1 - self.mask) * (y - t) * torch.exp(-s)
        return x, -s.sum(-1)


class RealNVP(nn.Module):
    def __init__(self, n_layers=4, hidden=32):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0])
                 for i in range(n_layers)]
        self.layers = nn.ModuleList(Coupling(m, hidden) for m in masks)
        self.register_buffer("loc", torch.zeros(2))
        self.register_buffer("tril", torch.eye(2))

    @property
    def base(self):
        return MultivariateNormal(self.loc, scale_tril=self.tril)

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det

    def log_prob(self, x):
        z, log_det = self(x)
        return self.base.log_prob(z) + log_det

    def sample(self, n):
        z = self.base.sample((n,))
        for layer in reversed(self.layers):
            z, _ = layer.inverse(z)
        return z


flow = RealNVP()
print(flow.layers[0])
print("parameters", sum(p.numel() for p in flow.parameters()),
      "buffers", [n for n, _ in flow.named_buffers()])
print("base", flow.base, flow.base.batch_shape, flow.base.event_shape)
print("initial nll", f"{-flow.log_prob(data).mean().item():.4f}")

opt = torch.optim.Adam(flow.parameters(), lr=5e-3, betas=(0.9, 0.99), weight_decay=1e-5)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=60, gamma=0.5)
gen = torch.Generator().manual_seed(3)
for step in range(150):
    idx = torch.randperm(256, generator=gen)[:64]
    loss = -flow.log_prob(data[idx]).mean()
    opt.zero_grad()
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(flow.parameters(), max_norm=5.0)
    opt.step()
    sched.step()
    if step % 30 == 0 or step == 149:
        print(f"step {step:3d}  nll {loss.item():.3f}  grad {gnorm.item():.2f}  "
              f"lr {sched.get_last_lr()[0]:.5f}")

with torch.no_grad():
    nll = -flow.log_prob(data).mean().item()
    print(f"final nll {nll:.3f}")
    z, ld = flow(data[:4])
    xr = z
    for layer in reversed(flow.layers):
        xr, _ = layer.inverse(xr)
    print("inverse error below 1e-5:", bool((xr - data[:4]).abs().max() < 1e-5))
    print("log det of first points", [round(v, 2) for v in ld.tolist()])
    samples = flow.sample(500)
    print("samples", samples.shape, "in moons box", int(((samples.abs() < 3).all(1)).sum()))
    print("sample mean", [round(v, 2) for v in samples.mean(0).tolist()])

# the analytic log-determinant against autograd's Jacobian of one coupling layer
layer = flow.layers[1]
pts = data[:3]
jac = torch.func.vmap(torch.func.jacrev(lambda v: layer(v[None])[0][0]))(pts)
sign, logabs = torch.linalg.slogdet(jac)
print("jacobian", jac.shape, "signs", sign.tolist(), "differentiable", jac.requires_grad)
print("log-det matches:", torch.allclose(logabs, layer(pts)[1], atol=1e-5))
jac_ref = torch.autograd.functional.jacobian(lambda v: layer(v[None])[0][0], pts[0],
                                             create_graph=True)
print("functional jacobian agrees:", torch.allclose(jac_ref, jac[0]), jac_ref.requires_grad)

# state_dict round trip through a buffer
buf = io.BytesIO()
torch.save(flow.state_dict(), buf)
buf.seek(0)
restored = RealNVP()
state = torch.load(buf, weights_only=True)
print("state keys", list(state)[:5], len(state))
print(restored.load_state_dict(state))
with torch.no_grad():
    print("restored matches:", torch.equal(restored.log_prob(data[:8]), flow.log_prob(data[:8])))
try:
    restored.load_state_dict({k: v for k, v in state.items() if "mask" not in k})
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])
print(restored.load_state_dict({k: v for k, v in state.items() if k != "tril"}, strict=False))

# ---------------------------------------------------------------- multivariate normals
cov = torch.tensor([[2.0, 0.6], [0.6, 1.0]])
mvn = MultivariateNormal(torch.tensor([0.5, -1.0]), covariance_matrix=cov)
print(mvn)
print("scale_tril", mvn.scale_tril)
print("precision", mvn.precision_matrix)
print("entropy", round(mvn.entropy().item(), 4), "mean", mvn.mean, "variance", mvn.variance)
pts = torch.tensor([[0.0, 0.0], [1.0, -1.0], [0.5, -1.0]])
print("log_prob", mvn.log_prob(pts))
mvn2 = MultivariateNormal(torch.zeros(2), scale_tril=torch.linalg.cholesky(cov))
print("same log_prob via scale_tril",
      torch.allclose(mvn2.log_prob(pts - mvn.mean), mvn.log_prob(pts)))
batched = MultivariateNormal(torch.zeros(3, 2), covariance_matrix=cov)
print("batched", batched.batch_shape, batched.event_shape, batched.rsample((4,)).shape)
print("kl mvn", kl_divergence(mvn, MultivariateNormal(torch.zeros(2), torch.eye(2))))
print("mvn sample", mvn.sample((3,)))

# ---------------------------------------------------------------- Independent / transforms
diag = Independent(Normal(torch.zeros(3, 2), torch.ones(3, 2)), reinterpreted_batch_ndims=1)
print(diag, diag.batch_shape, diag.event_shape)
print("diag log_prob", diag.log_prob(torch.zeros(3, 2)), "entropy", diag.entropy())
logit_normal = TransformedDistribution(Normal(0.0, 1.5), [SigmoidTransform()])
print("logit-normal support", logit_normal.support)
v = torch.tensor([0.1, 0.5, 0.9])
print("logit-normal log_prob", logit_normal.log_prob(v))
squash = ComposeTransform([AffineTransform(loc=1.0, scale=2.0), SigmoidTransform(),
                           AffineTransform(loc=-1.0, scale=2.0)])
print("compose", squash)
u = torch.tensor([-2.0, 0.0, 0.3])
y = squash(u)
print("forward", y, "inverse", squash.inv(y).round(decimals=4))
print("log|det J|", squash.log_abs_det_jacobian(u, y))
td = TransformedDistribution(Normal(torch.zeros(2), torch.ones(2)), squash)
print("td shapes", td.batch_shape, td.event_shape, "support", td.support)
print("td sample", td.sample((2,)))
print("td log_prob", td.log_prob(torch.tensor([0.2, -0.7])))
print("affine cdf", TransformedDistribution(Normal(0.0, 1.0),
                                           AffineTransform(2.0, 3.0)).cdf(torch.tensor([2.0, 5.0])))

try:
    _ = logit_normal.mean
except NotImplementedError as e:
    print("no closed-form mean:", repr(e))

# ---------------------------------------------------------------- mixture of Gaussians
mix = Categorical(logits=torch.tensor([0.0, 1.0, -1.0]))
comp = Independent(Normal(torch.tensor([[-2.0, 0.0], [0.0, 2.0], [2.0, 0.0]]),
                          torch.tensor([[0.5, 0.5], [1.0, 0.3], [0.4, 0.8]])), 1)
gmm = MixtureSameFamily(mix, comp)
print(gmm.batch_shape, gmm.event_shape)
print("gmm mean", gmm.mean, "variance", gmm.variance)
print("gmm log_prob", gmm.log_prob(torch.tensor([[0.0, 0.0], [2.0, 0.5]])))
gs = gmm.sample((1000,))
print("gmm sample mean", [round(v, 2) for v in gs.mean(0).tolist()])
uni_mix = MixtureSameFamily(Categorical(probs=torch.tensor([0.3, 0.7])),
                            Normal(torch.tensor([-1.0, 1.0]), torch.tensor([0.5, 0.5])))
print("1d mixture cdf", uni_mix.cdf(torch.tensor([-1.0, 0.0, 1.0])))

# ---------------------------------------------------------------- simplex and positive
dirichlet = Dirichlet(torch.tensor([[0.5, 1.0, 2.0], [3.0, 3.0, 3.0]]))
d = dirichlet.sample()
print("dirichlet", d, d.sum(-1))
print("dirichlet mean", dirichlet.mean, "entropy", dirichlet.entropy())
print("dirichlet log_prob", dirichlet.log_prob(torch.tensor([0.2, 0.3, 0.5])))
print("dirichlet support", dirichlet.support, dirichlet.event_shape)
beta = Beta(torch.tensor([2.0, 0.5]), torch.tensor([5.0, 0.5]))
print("beta", beta.sample((3,)), beta.mean, beta.variance)
print("beta entropy", beta.entropy(), "log_prob", beta.log_prob(torch.tensor([0.3, 0.01])))
gamma = Gamma(concentration=torch.tensor([1.0, 4.0]), rate=torch.tensor([2.0, 0.5]))
print("gamma", gamma.rsample((2,)), gamma.mean, gamma.variance, gamma.entropy())
print("gamma cdf", gamma.cdf(torch.tensor([0.5, 8.0])))
conc = torch.tensor([2.0, 0.5], requires_grad=True)
Gamma(conc, torch.tensor(1.0)).rsample((3,)).sum().backward()
print("gamma pathwise grad", conc.grad)
lognormal = LogNormal(torch.tensor(0.0), torch.tensor(0.5))
print("lognormal", lognormal.mean, lognormal.variance, lognormal.entropy(),
      lognormal.log_prob(torch.tensor([0.5, 1.0, 2.0])))
print("lognormal support", lognormal.support, "sample", lognormal.sample((4,)))

# ---------------------------------------------------------------- heavy tails
laplace = Laplace(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
print(laplace)
print("laplace", laplace.rsample((3,)), laplace.entropy(), laplace.variance)
print("laplace cdf/icdf", laplace.cdf(torch.tensor([0.5, 0.5])),
      laplace.icdf(torch.tensor([0.25, 0.9])))
student = StudentT(df=torch.tensor([1.0, 3.0, 30.0]))
print("student", student.mean, student.variance, student.entropy())
print("student log_prob", student.log_prob(torch.tensor(1.5)))
print("student sample", student.sample((2,)))
uniform = Uniform(torch.tensor([0.0, -1.0]), torch.tensor([1.0, 3.0]))
print(uniform, uniform.support)
print("uniform", uniform.mean, uniform.stddev, uniform.entropy(),
      uniform.cdf(torch.tensor([0.25, 0.0])), uniform.icdf(torch.tensor([0.5, 0.25])))
print("uniform sample", uniform.sample((3,)))

# ---------------------------------------------------------------- expand
ex = Normal(torch.tensor(0.0), torch.tensor(1.0)).expand(torch.Size([2, 3]))
print("expanded", ex.batch_shape, ex.sample().shape, ex.log_prob(torch.zeros(2, 3)).sum())
exg = Gamma(torch.tensor([2.0]), torch.tensor([1.0])).expand([4])
print("expanded gamma", exg.batch_shape, exg.mean)
exb = beta.expand([3, 2])
print("expanded beta", exb.batch_shape, exb.event_shape, exb.concentration1.shape)
exm = mvn.expand([5])
print("expanded mvn", exm.batch_shape, exm.event_shape, exm.loc.shape)
try:
    beta.expand([3])
except Exception as e:
    print(type(e).__name__)

# ---------------------------------------------------------------- kl divergences
p, q = Normal(0.0, 1.0), Normal(1.0, 2.0)
print("kl normal", round(kl_divergence(p, q).item(), 5), round(kl_divergence(q, p).item(), 5))
print("kl beta", kl_divergence(Beta(torch.tensor(2.0), torch.tensor(3.0)),
                               Beta(torch.tensor(1.0), torch.tensor(1.0))))
print("kl gamma", kl_divergence(Gamma(torch.tensor(2.0), torch.tensor(1.0)),
                                Gamma(torch.tensor(3.0), torch.tensor(2.0))))
print("kl dirichlet", kl_divergence(dirichlet, Dirichlet(torch.ones(3))))
print("kl laplace", kl_divergence(Laplace(0.0, 1.0), Laplace(1.0, 2.0)))
print("kl categorical", kl_divergence(mix, Categorical(probs=torch.ones(3) / 3)))
print("kl uniform", kl_divergence(Uniform(0.0, 1.0), Uniform(-1.0, 2.0)))
print("kl uniform/normal", kl_divergence(Uniform(0.0, 1.0), Normal(0.0, 1.0)))
print("kl onehot", kl_divergence(OneHotCategorical(logits=torch.tensor([0.0, 1.0])),
                                 OneHotCategorical(probs=torch.tensor([0.5, 0.5]))))
print("kl out of support", kl_divergence(Uniform(0.0, 3.0), Uniform(0.0, 1.0)))
try:
    kl_divergence(StudentT(3.0), Normal(0.0, 1.0))
except NotImplementedError as e:
    print("NotImplementedError", e)

# ---------------------------------------------------------------- categorical relaxations
onehot = OneHotCategorical(probs=torch.tensor([0.1, 0.2, 0.7]))
print(onehot, onehot.event_shape, onehot.support)
oh = onehot.sample((5,))
print("one-hot samples", oh, onehot.log_prob(oh))
print("one-hot entropy", onehot.entropy(), "mean", onehot.mean,
      "enumerate", onehot.enumerate_support())
relaxed = RelaxedOneHotCategorical(torch.tensor(0.5), logits=torch.tensor([0.0, 1.0, 2.0]))
r = relaxed.rsample((3,))
print("relaxed", r, r.sum(-1), relaxed.temperature)
print("relaxed log_prob", relaxed.log_prob(r))
logits = torch.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]], requires_grad=True)
soft = F.gumbel_softmax(logits, tau=0.7)
hard = F.gumbel_softmax(logits, tau=0.7, hard=True)
print("gumbel soft", soft)
print("gumbel hard", hard, hard.grad_fn is not None)
(hard * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("gumbel hard grad", logits.grad)

# ---------------------------------------------------------------- constraints and validation
print(constraints.positive, constraints.simplex, constraints.unit_interval,
      constraints.real_vector, constraints.interval(0.0, 2.0))
print("positive check", constraints.positive.check(torch.tensor([1.0, 0.0, -1.0])))
print("simplex check", constraints.simplex.check(torch.tensor([[0.2, 0.8], [0.5, 0.6]])))
print("lower cholesky", constraints.lower_cholesky.check(torch.tensor([[1.0, 0.0], [2.0, 3.0]])))
print("positive definite", constraints.positive_definite.check(cov))
print("integer interval", constraints.integer_interval(0, 3).check(torch.tensor([0.0, 1.5, 3.0])))
print("arg constraints", Beta.arg_constraints, Laplace.arg_constraints)
to_positive = biject_to(constraints.positive)
raw = torch.tensor([-1.0, 0.0, 2.0])
print(to_positive, to_positive(raw), transform_to(constraints.simplex)(raw))
print("cat constraint", constraints.cat([constraints.real, constraints.positive],
                                        lengths=[1, 2]).check(torch.tensor([-1.0, 2.0, -3.0])))
for make in [lambda: Normal(0.0, -1.0),
             lambda: Beta(torch.tensor(0.0), torch.tensor(1.0)),
             lambda: Dirichlet(torch.tensor([1.0, -0.5])),
             lambda: Categorical(probs=torch.tensor([0.5, -0.2, 0.7])),
             lambda: MultivariateNormal(torch.zeros(2), covariance_matrix=torch.tensor(
                 [[1.0, 2.0], [2.0, 1.0]])),
             lambda: StudentT(df=torch.tensor(0.0)),
             lambda: Uniform(1.0, 0.0),
             lambda: MultivariateNormal(torch.zeros(2))]:
    try:
        make()
        print("no error")
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, str(e).splitlines()[0][:90])
try:
    Beta(torch.tensor(2.0), torch.tensor(2.0)).log_prob(torch.tensor(1.5))
except ValueError as e:
    print("ValueError", str(e).splitlines()[0][:100])
try:
    onehot.log_prob(torch.tensor([0.0, 1.0, 1.0]))
except ValueError as e:
    print("ValueError", str(e).splitlines()[0][:100])
print("unvalidated", Normal(0.0, -1.0, validate_args=False).scale)
print("unvalidated beta log_prob", Beta(torch.tensor(2.0), torch.tensor(2.0),
                                        validate_args=False).log_prob(torch.tensor(0.5)))
try:
    MixtureSameFamily(Categorical(logits=torch.zeros(2)), Normal(torch.zeros(3), torch.ones(3)))
except ValueError as e:
    print("ValueError", e)
try:
    Normal(0.0, 1.0).cdf(torch.tensor(0.0)) + StudentT(2.0).cdf(torch.tensor(0.0))
except NotImplementedError as e:
    print("NotImplementedError", repr(e))
