"""Gradient-free optimisation as practitioners write it: OpenAI-style evolution strategies with
antithetic sampling and centred-rank fitness shaping (on Rastrigin and on a small policy network
flattened with parameters_to_vector, its whole population rolled out at once with
functional_call + vmap over stack_module_state), textbook CMA-ES (weighted recombination,
evolution paths, rank-one and rank-mu updates, eigh, cholesky, MultivariateNormal), the
cross-entropy method, simulated annealing, a genetic algorithm on bit strings, a comparison with
Adam on the same objective, Generator state for reproducibility, and typical mistakes."""

import copy
import math

import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal
from torch.func import functional_call, stack_module_state, vmap
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)


def show(name, t, digits=5):
    vals = ", ".join(f"{v:.{digits}g}" for v in t.flatten().tolist())
    print(f"{name}: [{vals}]")


# -- test functions, batched over the rows of a population --------------------------------
def rastrigin(x):
    return 10 * x.shape[-1] + (x * x - 10 * torch.cos(2 * math.pi * x)).sum(-1)


def rosenbrock(x):
    return (100 * (x[..., 1:] - x[..., :-1] ** 2) ** 2 + (1 - x[..., :-1]) ** 2).sum(-1)


def centred_ranks(f):
    """Rank-transform fitness to [-0.5, 0.5] (Salimans et al. 2017)."""
    ranks = f.argsort().argsort().to(f.dtype)
    return ranks / (f.numel() - 1) - 0.5


print("== test functions ==")
pts = torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, -1.5, 2.0]])
show("rastrigin", rastrigin(pts))
show("rosenbrock", rosenbrock(pts))
f = torch.tensor([3.0, -1.0, 7.0, 0.5, 2.0])
show("centred ranks", centred_ranks(f))
lin = torch.linspace(-0.5, 0.5, 5)
show("linspace ranks", lin[f.argsort().argsort()])
print(
    "argsort dtype:",
    f.argsort().dtype,
    "stable:",
    torch.tensor([1, 0, 1, 0]).argsort(stable=True).tolist(),
)

# -- OpenAI-ES with antithetic sampling on Rastrigin (10-D) --------------------------------
print("== OpenAI-ES on Rastrigin ==")
gen = torch.Generator().manual_seed(42)
theta = torch.full((10,), 2.5)
sigma, lr, half = 0.1, 0.05, 20
with torch.no_grad():
    for it in range(60):
        eps = torch.randn(half, 10, generator=gen)
        eps = torch.cat([eps, -eps])
        fit = -rastrigin(theta + sigma * eps)
        shaped = centred_ranks(fit)
        grad_est = (shaped[:, None] * eps).sum(0) / (eps.shape[0] * sigma)
        theta += lr * grad_est
        if it % 20 == 19:
            print(
                f"iter {it + 1}: f(theta)={rastrigin(theta).item():.4f}"
                f" best={-fit.max().item():.4f} |grad|={grad_est.norm().item():.4f}"
            )
print("theta requires_grad:", theta.requires_grad, "dtype:", theta.dtype)


# -- a tiny cart-pole-like linear system controlled by a small network ---------------------
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, s):
        return self.scale * torch.tanh(self.fc2(torch.tanh(self.fc1(s))))


DT = 0.05
A = torch.eye(4) + DT * torch.tensor(
    [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 15.0, 0.0]]
)
B = DT * torch.tensor([0.0, 1.0, 0.0, -1.5])
S0 = torch.tensor([[0.1, 0.0, 0.05, 0.0], [-0.2, 0.1, -0.05, 0.0], [0.0, -0.1, 0.1, 0.05]])


def rollout(policy_fn, steps=40):
    """Return the mean quadratic cost over a batch of start states (lower is better)."""
    s = S0
    cost = torch.zeros(())
    for _ in range(steps):
        u = policy_fn(s).squeeze(-1)
        cost = cost + (s * s).sum(-1).mean() + 0.01 * (u * u).mean()
        s = s @ A.T + u[:, None] * B
    return cost / steps


torch.manual_seed(1)
policy = Policy()
n_params = sum(p.numel() for p in policy.parameters())
flat = parameters_to_vector(policy.parameters())
print("== ES on a policy network ==")
print(
    "params:",
    n_params,
    "flat:",
    tuple(flat.shape),
    flat.dtype,
    "grad_fn:",
    type(flat.grad_fn).__name__,
)
with torch.no_grad():
    print(f"initial cost: {rollout(policy).item():.5g}")

# one population built the slow way: a module per member, stacked for vmap
gen = torch.Generator().manual_seed(7)
eps = torch.randn(4, n_params, generator=gen)
members = []
for e in eps:
    m = copy.deepcopy(policy)
    vector_to_parameters(flat.detach() + 0.05 * e, m.parameters())
    members.append(m)
params, buffers = stack_module_state(members)
print("stacked:", [(k, tuple(v.shape)) for k, v in params.items()], list(buffers))
print(
    "stacked requires_grad:",
    params["fc1.weight"].requires_grad,
    "buffer:",
    buffers["scale"].tolist(),
)
base = copy.deepcopy(policy).to("meta")


def member_cost(p, b):
    return rollout(lambda s: functional_call(base, (p, b), (s,)))


with torch.no_grad():
    costs_vmap = vmap(member_cost)(params, buffers)
    costs_loop = torch.stack([rollout(m) for m in members])
show("vmap costs", costs_vmap)
print("vmap == loop:", torch.allclose(costs_vmap, costs_loop, rtol=1e-5, atol=1e-7))

# the fast way: split a (pop, n_params) matrix into stacked parameter tensors
shapes = [(k, v.shape) for k, v in policy.named_parameters()]


def unflatten(pop):
    out, i = {}, 0
    for k, shp in shapes:
        n = math.prod(shp)
        out[k] = pop[:, i : i + n].reshape(pop.shape[0], *shp)
        i += n
    return out


stacked = unflatten(flat.detach() + 0.05 * eps)
print("unflatten matches:", all(torch.equal(stacked[k], params[k]) for k in stacked))
bufs = {"scale": buffers["scale"]}
theta = flat.detach().clone()
sigma, lr, half = 0.05, 0.1, 12
with torch.no_grad():
    for it in range(30):
        e = torch.randn(half, n_params, generator=gen)
        e = torch.cat([e, -e])
        pop_bufs = {"scale": torch.full((2 * half,), 2.0)}
        c = vmap(member_cost)(unflatten(theta + sigma * e), pop_bufs)
        shaped = centred_ranks(-c)
        theta += lr / (2 * half * sigma) * (shaped @ e)
        if it % 10 == 9:
            vector_to_parameters(theta, policy.parameters())
            print(
                f"ES iter {it + 1}: cost={rollout(policy).item():.5g}"
                f" pop mean={c.mean().item():.5g}"
            )
del bufs

# the same objective with autograd and Adam, for comparison
torch.manual_seed(1)
policy_adam = Policy()
opt = torch.optim.Adam(policy_adam.parameters(), lr=0.01)
for step in range(30):
    opt.zero_grad()
    loss = rollout(policy_adam)
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"Adam step {step + 1}: cost={loss.item():.5g} grad_fn={type(loss.grad_fn).__name__}")
gnorm = parameters_to_vector([p.grad for p in policy_adam.parameters()]).norm()
print(f"final grad norm: {gnorm.item():.5g}")

# -- CMA-ES on Rosenbrock (textbook form, float64) ------------------------------------------
print("== CMA-ES on Rosenbrock ==")
torch.set_default_dtype(torch.float64)
n = 4
lam = 4 + int(3 * math.log(n))
mu = lam // 2
w = math.log(mu + 0.5) - torch.log(torch.arange(1, mu + 1, dtype=torch.float64))
w = w / w.sum()
mueff = (w.sum() ** 2 / (w**2).sum()).item()
cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
cs = (mueff + 2) / (n + mueff + 5)
c1 = 2 / ((n + 1.3) ** 2 + mueff)
cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))
damps = 1 + 2 * max(0.0, math.sqrt((mueff - 1) / (n + 1)) - 1) + cs
chiN = n**0.5 * (1 - 1 / (4 * n) + 1 / (21 * n * n))
print(f"lambda={lam} mu={mu} mueff={mueff:.5f} cc={cc:.5f} cs={cs:.5f} c1={c1:.5f} cmu={cmu:.5f}")
show("weights", w)
gen = torch.Generator().manual_seed(3)
mean = torch.zeros(n)
sig = 0.5
C = torch.eye(n)
pc = torch.zeros(n)
ps = torch.zeros(n)
with torch.no_grad():
    for g in range(120):
        evals, Bm = torch.linalg.eigh(C)
        D = evals.clamp_min(1e-20).sqrt()
        z = torch.randn(lam, n, generator=gen)
        sqrtC = Bm @ torch.diag(D) @ Bm.T  # symmetric root: eigenvector signs cancel
        y = z @ sqrtC
        x = mean + sig * y
        fx = rosenbrock(x)
        order = fx.argsort()
        y_sel = y[order[:mu]]
        y_w = w @ y_sel
        mean = mean + sig * y_w
        invsqrtC = Bm @ torch.diag(1 / D) @ Bm.T
        ps = (1 - cs) * ps + math.sqrt(cs * (2 - cs) * mueff) * (invsqrtC @ y_w)
        hsig = float(
            ps.norm() / math.sqrt(1 - (1 - cs) ** (2 * (g + 1))) / chiN < 1.4 + 2 / (n + 1)
        )
        pc = (1 - cc) * pc + hsig * math.sqrt(cc * (2 - cc) * mueff) * y_w
        rank_one = torch.outer(pc, pc)
        rank_mu = (w[:, None, None] * torch.einsum("ki,kj->kij", y_sel, y_sel)).sum(0)
        C = (1 - c1 - cmu) * C + c1 * (rank_one + (1 - hsig) * cc * (2 - cc) * C) + cmu * rank_mu
        C = torch.triu(C) + torch.triu(C, 1).T
        sig = sig * math.exp((cs / damps) * (ps.norm().item() / chiN - 1))
        if g % 30 == 29:
            print(
                f"gen {g + 1}: best={fx.min().item():.5g} f(mean)={rosenbrock(mean).item():.5g}"
                f" sigma={sig:.4g} cond={(evals.max() / evals.min()).item():.4g}"
            )
show("mean", mean, 4)
L = torch.linalg.cholesky(C)
print("cholesky lower:", torch.allclose(L, L.tril()), "recon:", torch.allclose(L @ L.T, C))

# MultivariateNormal with the three parameterisations of the final search distribution
cov = sig**2 * C
d_cov = MultivariateNormal(mean, covariance_matrix=cov)
d_tril = MultivariateNormal(mean, scale_tril=torch.linalg.cholesky(cov))
d_prec = MultivariateNormal(mean, precision_matrix=torch.linalg.inv(cov))
probe = mean + 0.01 * torch.arange(n)
for name, d in [("covariance", d_cov), ("scale_tril", d_tril), ("precision", d_prec)]:
    print(
        f"MVN[{name}]: log_prob={d.log_prob(probe).item():.6g} entropy={d.entropy().item():.6g}"
        f" batch={tuple(d.batch_shape)} event={tuple(d.event_shape)}"
    )
torch.manual_seed(5)
samp = d_cov.sample((2000,))
print(
    "sample shape:",
    tuple(samp.shape),
    "mean err:",
    f"{(samp.mean(0) - mean).abs().max().item():.3g}",
)
torch.manual_seed(5)
samp2 = d_tril.rsample((3,))
torch.manual_seed(5)
print("sample reproducible:", torch.allclose(samp2, d_cov.sample((3,))))
show("variance", d_cov.variance, 5)
torch.set_default_dtype(torch.float32)

# -- ES gradient estimates fed to torch.optim (as OpenAI's ES does), versus autograd ---------
print("== ES + Adam vs autograd + Adam on Rosenbrock ==")
for mode in ("es", "autograd"):
    xy = nn.Parameter(torch.tensor([-1.5, 2.0], dtype=torch.float64))
    opt = torch.optim.Adam([xy], lr=0.02)
    gen = torch.Generator().manual_seed(21)
    for _ in range(150):
        opt.zero_grad()
        if mode == "es":
            with torch.no_grad():
                e = torch.randn(25, 2, generator=gen, dtype=torch.float64)
                e = torch.cat([e, -e])
                fv = rosenbrock(xy + 0.05 * e)
                xy.grad = (centred_ranks(fv)[:, None] * e).mean(0) / 0.05
        else:
            rosenbrock(xy).backward()
        torch.nn.utils.clip_grad_norm_([xy], max_norm=10.0)
        opt.step()
    with torch.no_grad():
        print(
            f"{mode}: x={xy[0].item():.4f} y={xy[1].item():.4f} f={rosenbrock(xy).item():.5g}"
            f" step={opt.state[xy]['step'].item():.0f}"
        )

# natural evolution strategies: the search gradient by the score function and autograd
print("== NES with a diagonal Gaussian ==")
torch.manual_seed(4)
loc = torch.full((3,), 1.5, requires_grad=True)
log_std = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([loc, log_std], lr=0.05)
for step in range(40):
    dist = torch.distributions.Independent(torch.distributions.Normal(loc, log_std.exp()), 1)
    with torch.no_grad():
        samples = dist.sample((32,))
        utility = centred_ranks(-rastrigin(samples))
    loss = -(dist.log_prob(samples) * utility).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(
            f"NES step {step + 1}: f(loc)={rastrigin(loc.detach()).item():.4f}"
            f" std={log_std.exp().mean().item():.4f} entropy={dist.entropy().item():.4f}"
        )
print(
    "sample requires_grad:",
    samples.requires_grad,
    "log_prob grad_fn:",
    type(dist.log_prob(samples).grad_fn).__name__,
)
bm = MultivariateNormal(torch.zeros(5, 2), torch.eye(2).expand(5, 2, 2) * 0.5)
lp = bm.log_prob(torch.ones(7, 1, 2))
print(
    "batched MVN:",
    tuple(bm.batch_shape),
    "log_prob shape:",
    tuple(lp.shape),
    f"value={lp[0, 0].item():.5f}",
)

# -- the cross-entropy method on Rastrigin (5-D) ---------------------------------------------
print("== cross-entropy method ==")
gen = torch.Generator().manual_seed(11)
mu_c = torch.full((5,), 3.0)
std_c = torch.full((5,), 2.0)
n_elite = 10
with torch.no_grad():
    for it in range(25):
        pop = mu_c + std_c * torch.randn(50, 5, generator=gen)
        scores = -rastrigin(pop)
        top = torch.topk(scores, n_elite)
        elite = pop[top.indices]
        mu_c = elite.mean(0)
        std_c = elite.std(0, unbiased=False) + 0.01
        if it % 8 == 7:
            print(
                f"CEM iter {it + 1}: best={-top.values[0].item():.4f}"
                f" f(mu)={rastrigin(mu_c).item():.4f} std={std_c.mean().item():.4f}"
            )
show("elite std unbiased", elite.std(0, unbiased=True), 4)
show("elite std correction=0", elite.std(0, correction=0), 4)
show("elite var correction=2", elite.var(0, correction=2), 4)
vm = torch.var_mean(elite, dim=0, correction=1)
show("var_mean var", vm[0], 4)
show("var_mean mean", vm[1], 5)
x_req = elite.clone().requires_grad_()
sd, mn = torch.std_mean(x_req, dim=0)
print("std_mean grad_fn:", type(sd.grad_fn).__name__, type(mn.grad_fn).__name__)
(sd.sum() + mn.sum()).backward()
print(f"std_mean grad sum: {x_req.grad.sum().item():.4f}")
print(
    "topk sorted:",
    top.values[:3].tolist() == sorted(top.values[:3].tolist(), reverse=True),
    "indices dtype:",
    top.indices.dtype,
)

# -- simulated annealing on 2-D Rastrigin, 16 chains at once ---------------------------------
print("== simulated annealing ==")
gen = torch.Generator().manual_seed(5)
xs = torch.rand(16, 2, generator=gen) * 10 - 5
fs = rastrigin(xs)
best_x, best_f = xs.clone(), fs.clone()
accepted = 0
with torch.no_grad():
    for k in range(300):
        temp = 10.0 * 0.98**k
        cand = xs + 0.3 * torch.randn(16, 2, generator=gen)
        fc = rastrigin(cand)
        accept = (fc < fs) | (torch.rand(16, generator=gen) < torch.exp((fs - fc) / temp))
        xs = torch.where(accept[:, None], cand, xs)
        fs = torch.where(accept, fc, fs)
        better = fs < best_f
        best_x[better] = xs[better]
        best_f = torch.minimum(best_f, fs)
        accepted += int(accept.sum())
print(f"accepted {accepted} of {300 * 16}; best f={best_f.min().item():.4f}")
print("chains below 2.0:", int((best_f < 2.0).sum()), "argmin:", best_f.argmin().item())
show("best x", best_x[best_f.argmin()], 4)

# -- a genetic algorithm on bit strings -------------------------------------------------------
print("== genetic algorithm ==")
gen = torch.Generator().manual_seed(9)
L_bits, P = 32, 24
target = torch.randint(0, 2, (L_bits,), generator=gen).bool()
popb = torch.randint(0, 2, (P, L_bits), generator=gen, dtype=torch.bool)
print("pop dtype:", popb.dtype, "shape:", tuple(popb.shape))


def fitness(bits):
    return (bits == target).sum(-1)


for g in range(40):
    fit = fitness(popb)
    # tournament: draw 3 distinct contestants per slot (no replacement), keep the fittest
    weights = torch.ones(P).expand(2 * P, P)
    contestants = torch.multinomial(weights, 3, replacement=False, generator=gen)
    winners = contestants.gather(1, fit[contestants].argmax(1, keepdim=True)).squeeze(1)
    parents = popb[winners].view(2, P, L_bits)
    mask = torch.rand(P, L_bits, generator=gen) < 0.5
    children = torch.where(mask, parents[0], parents[1])
    flip = torch.rand(P, L_bits, generator=gen) < 1.0 / L_bits
    children = children ^ flip
    elite_i = fit.argmax()
    children[0] = popb[elite_i]
    popb = children
    if g % 10 == 9:
        fit = fitness(popb)
        print(
            f"GA gen {g + 1}: best={fit.max().item()} mean={fit.float().mean().item():.4f}"
            f" dtype={fit.dtype}"
        )
# fitness-proportional selection with replacement, and one-point crossover by a mask
fit = fitness(popb).float()
picks = torch.multinomial(fit / fit.sum(), 8, replacement=True, generator=gen)
print("roulette picks:", picks.tolist())
cut = torch.randint(1, L_bits, (4, 1), generator=gen)
one_point = torch.arange(L_bits) < cut
kids = torch.where(one_point, popb[:4], popb[4:8])
print("cut points:", cut.flatten().tolist(), "kid bits:", kids.sum(1).tolist())
print(
    "xor count:",
    (popb[0] ^ target).sum().item(),
    "any/all:",
    bool(popb.any()),
    bool(popb.all(1).any()),
)
print("packed:", (popb[:3].long() * (2 ** torch.arange(8).repeat(4))).sum(1).tolist())

# -- reproducibility with Generator state and fork_rng ----------------------------------------
print("== reproducibility ==")
g1 = torch.Generator().manual_seed(123)
state = g1.get_state()
a = torch.randn(3, generator=g1)
g1.set_state(state)
b = torch.randn(3, generator=g1)
print("set_state replays:", torch.equal(a, b), "state:", state.dtype, tuple(state.shape))
g2 = torch.Generator()
g2.set_state(state)
print("copied state equal:", torch.equal(torch.randn(3, generator=g2), a))
print("initial_seed:", g1.initial_seed(), "seed type:", type(g1.seed()).__name__)
torch.manual_seed(0)
before = torch.rand(2)
torch.manual_seed(0)
with torch.random.fork_rng():
    torch.manual_seed(99)
    inside = torch.rand(2)
after = torch.rand(2)
print(
    "fork_rng isolates:",
    torch.equal(before, after),
    "inside differs:",
    not torch.equal(inside, before),
)
show("after", after, 6)
rng = torch.get_rng_state()
x1 = torch.randint(0, 100, (5,))
torch.set_rng_state(rng)
print("global replay:", torch.equal(x1, torch.randint(0, 100, (5,))), x1.tolist())

# -- typical mistakes ---------------------------------------------------------------------------
print("== typical mistakes ==")


def attempt(label, fn):
    try:
        fn()
        print(f"{label}: no error")
    except Exception as exc:  # noqa: BLE001 - print what the user would see
        print(f"{label}: {type(exc).__name__}: {exc}")


small = nn.Linear(3, 2)
attempt(
    "vector_to_parameters wrong length",
    lambda: vector_to_parameters(torch.zeros(5), small.parameters()),
)
attempt(
    "vector_to_parameters not a tensor", lambda: vector_to_parameters([0.0] * 8, small.parameters())
)
attempt(
    "MVN non-PD covariance",
    lambda: MultivariateNormal(torch.zeros(2), torch.tensor([[1.0, 2.0], [2.0, 1.0]])),
)
attempt(
    "MVN two parameterisations",
    lambda: MultivariateNormal(
        torch.zeros(2), covariance_matrix=torch.eye(2), scale_tril=torch.eye(2)
    ),
)
attempt("MVN scalar loc", lambda: MultivariateNormal(torch.tensor(0.0), torch.eye(2)))
attempt("multinomial too many", lambda: torch.multinomial(torch.ones(4), 6, replacement=False))
attempt("multinomial negative", lambda: torch.multinomial(torch.tensor([0.5, -0.1]), 1))
attempt(
    "functional_call missing key",
    lambda: functional_call(
        small,
        {"weight": torch.zeros(2, 3), "bias": torch.zeros(2), "extra": torch.zeros(1)},
        (torch.ones(1, 3),),
        strict=True,
    ),
)
attempt(
    "stack_module_state differing", lambda: stack_module_state([nn.Linear(3, 2), nn.Linear(4, 2)])
)
attempt("cholesky not PD", lambda: torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])))
attempt("topk k too large", lambda: torch.topk(torch.zeros(3), 5))
attempt("set_state wrong type", lambda: torch.Generator().set_state(torch.zeros(5)))
attempt("seed passed as generator", lambda: torch.randn(3, generator=42))
attempt("seed passed to multinomial", lambda: torch.multinomial(torch.ones(3), 1, generator=42))
attempt("float seed", lambda: torch.Generator().manual_seed(0.5))
attempt(
    "functional_call repeated keys",
    lambda: functional_call(
        small, ({"weight": torch.zeros(2, 3)}, {"weight": torch.ones(2, 3)}), (torch.ones(1, 3),)
    ),
)
