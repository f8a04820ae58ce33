"""Random number generation and reproducibility as training code handles it: global and
per-Generator seeding, state save/restore (get_state/set_state, get_rng_state/set_rng_state,
torch.save of a state), fork_rng, every sampler with generator=, the in-place samplers,
reproducible data splitting/shuffling, dropout masks, nn.init with generator=, and
torch.distributions sampling under a seed, plus the usual mistakes."""

import io

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import Beta, Categorical, Dirichlet, Gamma, MultivariateNormal, Normal
from torch.utils.data import DataLoader, RandomSampler, TensorDataset, random_split


def show(name, t):
    vals = ", ".join(f"{v:.4f}" for v in t.flatten().tolist()[:6])
    print(f"{name}: {tuple(t.shape)} {t.dtype} [{vals}]")


def err(fn):
    try:
        fn()
        print("no error")
    except Exception as e:  # noqa: BLE001
        print(type(e).__name__ + ":", str(e).splitlines()[0])


# --- global seeding ---
torch.manual_seed(1234)
print("initial_seed", torch.initial_seed())
a = torch.rand(3)
torch.manual_seed(1234)
print("same after reseed", torch.equal(a, torch.rand(3)))
show("rand", a)
show("randn", torch.randn(2, 3))
print("randint", torch.randint(3, 10, (6,)).tolist(), torch.randint(5, (2, 2)).dtype)
print("randint int8", torch.randint(-5, 5, (4,), dtype=torch.int8))
print("randperm", torch.randperm(8).tolist())

# --- rng state round trip in the middle of a stream ---
state = torch.get_rng_state()
print("state", state.dtype, state.shape)
x1 = torch.randn(4)
torch.set_rng_state(state)
x2 = torch.randn(4)
print("resume equal", torch.equal(x1, x2))

# --- fork_rng ---
before = torch.get_rng_state()
with torch.random.fork_rng(devices=[]):
    torch.manual_seed(99)
    show("forked", torch.rand(2))
print("fork restored", torch.equal(before, torch.get_rng_state()))
with torch.random.fork_rng(enabled=False):
    torch.rand(1)
print("fork disabled advanced", not torch.equal(before, torch.get_rng_state()))

# --- Generator objects ---
g = torch.Generator()
print("gen device", g.device, g.manual_seed(7) is g, g.initial_seed())
s = g.get_state()
u1 = torch.rand(3, generator=g)
g.set_state(s)
u2 = torch.rand(3, generator=g)
print("gen resume", torch.equal(u1, u2))
g2 = torch.Generator().manual_seed(7)
print("two gens equal", torch.equal(torch.rand(3, generator=g2), u1))
if hasattr(g, "clone_state"):
    c = g.clone_state()
    print("clone_state", torch.equal(torch.rand(2, generator=c), torch.rand(2, generator=g)))
g.manual_seed(2024)
show("randn g f64", torch.randn(2, 2, generator=g, dtype=torch.float64))
show("randn g f16", torch.randn(5, generator=g, dtype=torch.float16))
show("randn g bf16", torch.randn(5, generator=g, dtype=torch.bfloat16))
z = torch.randn(3, generator=g, dtype=torch.complex64)
print("complex", z.dtype, [f"{v.real:.4f}{v.imag:+.4f}j" for v in z.tolist()])
print("randint g", torch.randint(0, 100, (5,), generator=g).tolist())
print("randint g int16", torch.randint(-3, 3, (5,), generator=g, dtype=torch.int16).tolist())
print("randperm g", torch.randperm(10, generator=g).tolist())
probs = torch.tensor([0.1, 0.2, 0.3, 0.4])
print("multinomial repl", torch.multinomial(probs, 8, replacement=True, generator=g).tolist())
print("multinomial norepl", torch.multinomial(probs, 4, generator=g).tolist())
print("multinomial 2d", torch.multinomial(torch.tensor([[1.0, 0, 3], [0, 2, 2]]), 2,
                                          generator=g).tolist())
print("bernoulli", torch.bernoulli(torch.tensor([0.1, 0.5, 0.9, 0.5, 0.3]), generator=g).tolist())
show("normal tensors", torch.normal(torch.arange(4.0), torch.tensor([0.1, 1.0, 2.0, 0.5]),
                                    generator=g))
show("normal scalar std", torch.normal(torch.zeros(3), 2.0, generator=g))
show("normal floats", torch.normal(1.0, 0.5, size=(3,), generator=g))
print("poisson", torch.poisson(torch.tensor([0.5, 2.0, 10.0, 40.0]), generator=g).tolist())

# --- in-place samplers ---
t = torch.empty(5)
show("uniform_", t.uniform_(-2, 2, generator=g))
show("normal_", t.normal_(3.0, 0.1, generator=g))
print("bernoulli_ f", t.bernoulli_(0.3, generator=g).tolist())
print("bernoulli_ p", t.bernoulli_(torch.full((5,), 0.7), generator=g).tolist())
show("exponential_", t.exponential_(2.0, generator=g))
print("geometric_", t.geometric_(0.3, generator=g).tolist())
show("log_normal_", t.log_normal_(0.0, 0.5, generator=g))
show("cauchy_", t.cauchy_(0.0, 1.0, generator=g))
print("random_ from/to", torch.empty(6, dtype=torch.int64).random_(10, 20, generator=g).tolist())
print("random_ to", torch.empty(6, dtype=torch.int32).random_(5, generator=g).tolist())
print("random_ f32", torch.empty(3).random_(generator=g).tolist())

# --- *_like ---
torch.manual_seed(5)
base = torch.zeros(2, 3, dtype=torch.float64)
show("rand_like", torch.rand_like(base))
show("randn_like", torch.randn_like(base))
print("randint_like", torch.randint_like(base, 4).tolist(), torch.randint_like(base, 2, 9).dtype)

# --- checkpoint a state through torch.save ---
g.manual_seed(11)
torch.rand(7, generator=g)
buf = io.BytesIO()
torch.save({"cpu": torch.get_rng_state(), "gen": g.get_state()}, buf)
expect = torch.rand(4, generator=g)
buf.seek(0)
ck = torch.load(buf)
g3 = torch.Generator()
g3.set_state(ck["gen"])
print("checkpoint resume", torch.equal(torch.rand(4, generator=g3), expect))
torch.set_rng_state(ck["cpu"])

# --- data pipeline reproducibility ---
ds = TensorDataset(torch.arange(10.0), torch.arange(10))
train, val = random_split(ds, [7, 3], generator=torch.Generator().manual_seed(42))
print("split", train.indices, val.indices)
parts = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
print("fraction split", [list(p) for p in parts])
print("sampler", list(RandomSampler(range(6), generator=torch.Generator().manual_seed(3))))
print("sampler repl", list(RandomSampler(range(6), replacement=True, num_samples=4,
                                         generator=torch.Generator().manual_seed(3))))


def epoch_order(seed):
    loader = DataLoader(ds, batch_size=4, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    return [yb.tolist() for _ in range(2) for _, yb in loader]


print("loader", epoch_order(0))
print("loader reproducible", epoch_order(0) == epoch_order(0))

# --- dropout under a fixed seed ---
torch.manual_seed(0)
x = torch.ones(2, 8)
print("dropout", F.dropout(x, 0.5).tolist())
d2 = nn.Dropout2d(0.5)
print("dropout2d", d2(torch.ones(1, 4, 2, 2))[0, :, 0, 0].tolist())
d2.eval()
print("dropout2d eval", d2(torch.ones(1, 2, 1, 1)).flatten().tolist())
show("alpha_dropout", F.alpha_dropout(torch.linspace(-1, 1, 6), 0.3, training=True))
show("feature_alpha", F.feature_alpha_dropout(torch.ones(1, 3, 2), 0.5, training=True))

# --- nn.init with generator= ---
gi = torch.Generator().manual_seed(3)
w = torch.empty(3, 4)
show("init uniform_", nn.init.uniform_(w, -1, 1, generator=gi))
show("init normal_", nn.init.normal_(w, 0, 0.02, generator=gi))
show("init trunc_normal_", nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5, generator=gi))
show("init kaiming_uniform_", nn.init.kaiming_uniform_(w, a=5 ** 0.5, generator=gi))
show("init xavier_normal_", nn.init.xavier_normal_(w, gain=2.0, generator=gi))
q = nn.init.orthogonal_(torch.empty(3, 5), generator=gi)
print("orthogonal", torch.allclose(q @ q.T, torch.eye(3), atol=1e-5))
sp = nn.init.sparse_(torch.empty(6, 3), sparsity=0.5, generator=gi)
print("sparse zeros per column", (sp == 0).sum(0).tolist())

# --- distributions under a seed ---
torch.manual_seed(8)
show("Normal", Normal(torch.tensor([0.0, 5.0]), torch.tensor([1.0, 0.1])).sample((2,)))
print("Categorical", Categorical(logits=torch.tensor([0.0, 1.0, 2.0])).sample((8,)).tolist())
show("Gamma", Gamma(torch.tensor([0.5, 2.0, 9.0]), torch.tensor([1.0, 2.0, 0.5])).sample())
show("Beta", Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5])).sample((2,)))
show("Dirichlet", Dirichlet(torch.tensor([1.0, 2.0, 3.0])).sample())
mvn = MultivariateNormal(torch.zeros(2), torch.tensor([[2.0, 0.5], [0.5, 1.0]]))
show("MVN rsample", mvn.rsample((3,)))

# --- deterministic algorithms flag ---
torch.use_deterministic_algorithms(True)
print("deterministic", torch.are_deterministic_algorithms_enabled(),
      torch.is_deterministic_algorithms_warn_only_enabled())
torch.use_deterministic_algorithms(False)
print("deterministic off", torch.are_deterministic_algorithms_enabled())

# --- mistakes ---
err(lambda: torch.set_rng_state(torch.zeros(10, dtype=torch.uint8)))
err(lambda: torch.set_rng_state(torch.zeros(5056)))
err(lambda: torch.Generator().manual_seed(-1))
err(lambda: torch.Generator().manual_seed(2 ** 64))
err(lambda: torch.multinomial(probs, 5))
err(lambda: torch.randint(5, 5, (3,)))
err(lambda: torch.randint(7, 2, (3,)))
err(lambda: torch.randperm(-3))
err(lambda: torch.empty(3).bernoulli_(1.5))
err(lambda: torch.empty(3).bernoulli_(torch.tensor([0.2, -0.1, 0.5])))
err(lambda: torch.normal(torch.zeros(2), torch.tensor([1.0, -1.0])))
err(lambda: torch.normal(0.0, -2.0, size=(2,)))
err(lambda: torch.empty(2).uniform_(3, 1))
err(lambda: torch.rand(2, generator=torch.Generator(), dtype=torch.int64))
print("final", f"{torch.rand(1).item():.4f}", torch.initial_seed())
