"""Actor-critic RL in pure torch: a vectorised pendulum written with tensors (sin, cos, atan2,
clamp, remainder), a PPO agent with a tanh-squashed, rescaled Normal policy (Independent,
TransformedDistribution, TanhTransform, AffineTransform, a learned log_std), GAE as a reversed loop
and with flip / cumprod, clipped surrogate and value losses, randperm minibatches, Adam(eps=1e-5),
clip_grad_norm_, explained variance, approximate KL, a SAC-style rsample step and a vmapped
ensemble; then a DQN (a circular replay buffer, gather, smooth_l1_loss, deepcopy / Polyak /
foreach-lerp target networks, epsilon-greedy acting through torch.compile), Categorical
kl_divergence / entropy, and RL mistakes, including validation torch.compile switched off."""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (
    AffineTransform,
    Categorical,
    Independent,
    Normal,
    TanhTransform,
    TransformedDistribution,
    kl_divergence,
)

torch.manual_seed(0)
N_ENVS, T, MAX_TORQUE, DT = 8, 16, 2.0, 0.05


# ---------------------------------------------------------------- a batch of pendulums
def reset(n):
    theta = torch.rand(n) * 2 * math.pi - math.pi
    return torch.stack([theta, torch.rand(n) * 2 - 1], dim=1)


def observe(state):
    theta, omega = state.unbind(-1)
    return torch.stack([torch.cos(theta), torch.sin(theta), omega / 8.0], dim=-1)


def env_step(state, torque):
    theta, omega = state[:, 0], state[:, 1]
    torque = torch.clamp(torque, -MAX_TORQUE, MAX_TORQUE)
    wrapped = torch.remainder(theta + math.pi, 2 * math.pi) - math.pi
    cost = wrapped.pow(2) + 0.1 * omega.pow(2) + 0.001 * torque.pow(2)
    omega = (omega + (3 * 9.81 / 2 * torch.sin(theta) + 3.0 * torque) * DT).clamp(-8.0, 8.0)
    return torch.stack([theta + omega * DT, omega], dim=1), -cost


s = reset(N_ENVS)
print("obs", observe(s).shape, observe(s).dtype, torch.atan2(s[:3, 0].sin(), s[:3, 0].cos()))


# ---------------------------------------------------------------- PPO agent
def layer_init(layer, gain=math.sqrt(2)):
    nn.init.orthogonal_(layer.weight, gain=gain)
    nn.init.constant_(layer.bias, 0.0)
    return layer


class ActorCritic(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.body = nn.Sequential(layer_init(nn.Linear(3, hidden)), nn.Tanh(),
                                  layer_init(nn.Linear(hidden, hidden)), nn.Tanh())
        self.mu = layer_init(nn.Linear(hidden, 1), gain=0.01)
        self.value = layer_init(nn.Linear(hidden, 1), gain=1.0)
        self.log_std = nn.Parameter(torch.full((1,), -0.5))

    def dist(self, obs):
        h = self.body(obs)
        base = Independent(Normal(self.mu(h), self.log_std.exp().expand(1)), 1)
        squash = [TanhTransform(cache_size=1), AffineTransform(0.0, MAX_TORQUE)]
        return TransformedDistribution(base, squash), self.value(h).squeeze(-1)


agent = ActorCritic()
opt = torch.optim.Adam(agent.parameters(), lr=3e-3, eps=1e-5)
w = agent.body[2].weight
print("params", nn.utils.parameters_to_vector(agent.parameters()).shape, list(dict(
    agent.named_parameters()))[-1], torch.allclose(w @ w.T, 2 * torch.eye(32), atol=1e-4))
print("init", w[0, :3], agent.mu.weight.norm())


def gae_loop(rewards, values, last_value, dones, gamma=0.99, lam=0.95):
    adv, last = torch.zeros_like(rewards), torch.zeros(rewards.shape[1])
    for t in reversed(range(rewards.shape[0])):
        nxt = last_value if t == rewards.shape[0] - 1 else values[t + 1]
        delta = rewards[t] + gamma * nxt * (1 - dones[t]) - values[t]
        adv[t] = last = delta + gamma * lam * (1 - dones[t]) * last
    return adv


def gae_flip(rewards, values, last_value, gamma=0.99, lam=0.95):
    nxt = torch.cat([values[1:], last_value[None]], dim=0)
    deltas = rewards + gamma * nxt - values
    disc = torch.cumprod(torch.full((rewards.shape[0], 1), gamma * lam), dim=0) / (gamma * lam)
    weighted = torch.flip(deltas * disc, dims=[0]).cumsum(0).flip(0)
    return weighted / disc


for update in range(4):
    state, steps = reset(N_ENVS), []
    with torch.no_grad():
        for _ in range(T):
            obs = observe(state)
            d, v = agent.dist(obs)
            a = d.sample()
            state, r = env_step(state, a.squeeze(-1))
            steps.append((obs, a, d.log_prob(a), 0.1 * r, v))
        last_v = agent.dist(observe(state))[1]
    obs_b, act_b, logp_b, rew_b, val_b = (torch.stack(x) for x in zip(*steps))
    adv = gae_loop(rew_b, val_b, last_v, torch.zeros(T, N_ENVS))
    adv2 = gae_flip(rew_b, val_b, last_v)
    ret = adv + val_b
    opt.param_groups[0]["lr"] = 3e-3 * (1.0 - update / 4)
    if update == 0:
        print("rollout", obs_b.shape, act_b.shape, logp_b.shape, bool(act_b.abs().max() < 2))
        print("gae agree", torch.allclose(adv, adv2, atol=1e-4), "adv[0,:3]", adv[0, :3])
        print("returns", torch.std_mean(ret, unbiased=True), (ret / ret.std()).std(correction=0),
              torch.quantile(ret.flatten(), torch.tensor([0.25, 0.5, 0.75])))
    obs_f, act_f, logp_f, adv_f, ret_f, val_f = (
        x.flatten(0, 1) for x in (obs_b, act_b, logp_b, adv, ret, val_b))
    adv_f = (adv_f - adv_f.mean()) / (adv_f.std(unbiased=True) + 1e-8)
    for _epoch in range(2):
        for idx in torch.randperm(T * N_ENVS).split(32):
            d, v = agent.dist(obs_f[idx])
            logp = d.log_prob(act_f[idx])
            ratio = torch.exp(logp - logp_f[idx])
            surr = torch.min(ratio * adv_f[idx], torch.clamp(ratio, 0.8, 1.2) * adv_f[idx])
            v_clip = val_f[idx] + (v - val_f[idx]).clamp(-0.2, 0.2)
            v_loss = 0.5 * torch.max((v - ret_f[idx]) ** 2, (v_clip - ret_f[idx]) ** 2).mean()
            loss = -surr.mean() + 0.5 * v_loss - 0.001 * d.base_dist.entropy().mean()
            opt.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(agent.parameters(), max_norm=0.5, foreach=True)
            opt.step()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - torch.log(ratio)).mean()
        ev = 1 - torch.var(ret_f - val_f) / torch.var(ret_f)
        clipfrac = ((ratio - 1).abs() > 0.2).float().mean()
    print(f"update {update} return {rew_b.sum(0).mean().item():.3f} loss {loss.item():.4f} "
          f"v_loss {v_loss.item():.3f} norm {norm.item():.4f} kl {approx_kl.item():.5f} "
          f"ev {ev.item():.4f} clip {clipfrac.item():.3f}")

print("log_std", agent.log_std.data, agent.log_std.grad.shape, norm.dtype,
      "step", opt.state_dict()["state"][0]["step"], opt.param_groups[0]["lr"])
print("inf-norm", nn.utils.clip_grad_norm_(agent.parameters(), 1.0, norm_type=float("inf")))
with torch.no_grad():
    d, v = agent.dist(observe(reset(4)))
    x, base = d.rsample((2,)), d.base_dist
    print("rsample", x.shape, d.batch_shape, d.event_shape, base.mean.squeeze(-1))
    print("log_prob", d.log_prob(x[0]), "support", d.support)
    print("kl", kl_divergence(base, Independent(Normal(0.0, torch.ones(4, 1)), 1)),
          base.entropy()[:2], base.base_dist.cdf(torch.zeros(4, 1)).squeeze(1))

# SAC-style actor step: the reparameterised action's log-prob reuses TanhTransform's cache
obs = observe(reset(N_ENVS))
d, _ = agent.dist(obs)
a = d.rsample()
logp = d.log_prob(a)
actor_loss = (0.2 * logp - agent.value(agent.body(torch.cat([obs[:, :2], a / 8], 1)))).mean()
agent.zero_grad()
actor_loss.backward()
print("sac", a.requires_grad, logp.grad_fn is not None, f"{actor_loss.item():.4f}",
      f"{agent.log_std.grad.item():.4f}", agent.mu.weight.grad.abs().sum() > 0)
# an ensemble of policies scored at once: vmap runs the distributions' validation too
mus = torch.tensor([[0.0, 0.5], [1.0, -0.5], [0.2, 0.2]])
std = agent.log_std.detach().exp()
print("ensemble", torch.vmap(lambda m: Independent(Normal(m, std), 1).log_prob(0 * m))(mus))

# ---------------------------------------------------------------- DQN on a discretised pendulum
TORQUES = torch.tensor([-2.0, 0.0, 2.0])
q_net = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 3))
target = copy.deepcopy(q_net)
q_act = torch.compile(q_net, backend="eager")  # acting only; training runs q_net itself
q_opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
CAP = 64  # a circular replay buffer of preallocated tensors
buf_s, buf_a = torch.zeros(CAP, 3), torch.zeros(CAP, dtype=torch.long)
buf_r, buf_s2, buf_d = torch.zeros(CAP), torch.zeros(CAP, 3), torch.zeros(CAP)
ptr, size, state, eps, gamma = 0, 0, reset(N_ENVS), 1.0, 0.98

for it in range(30):
    obs = observe(state)
    with torch.no_grad():
        greedy = q_act(obs).argmax(dim=1)
    action = torch.where(torch.rand(N_ENVS) < eps, torch.randint(0, 3, (N_ENVS,)), greedy)
    state, r = env_step(state, TORQUES[action])
    done = (it % 10 == 9) * torch.ones(N_ENVS)
    slots = (ptr + torch.arange(N_ENVS)) % CAP
    buf_s[slots], buf_a[slots], buf_r[slots] = obs, action, r
    buf_s2[slots], buf_d[slots] = observe(state), done
    ptr, size = (ptr + N_ENVS) % CAP, min(size + N_ENVS, CAP)
    eps = max(0.1, eps * 0.9)
    if size >= 32:
        b = torch.randint(0, size, (32,))
        q = q_net(buf_s[b]).gather(1, buf_a[b].unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            y = buf_r[b] + gamma * target(buf_s2[b]).max(dim=1).values * (1 - buf_d[b])
        loss = F.smooth_l1_loss(q, y, beta=1.0)
        q_opt.zero_grad()
        loss.backward()
        q_opt.step()
        with torch.no_grad():
            for p_t, p in zip(target.parameters(), q_net.parameters()):
                p_t.mul_(0.95).add_(p, alpha=0.05)
        if it % 5 == 0:
            print(f"dqn it {it:2d} ptr {ptr:2d} size {size} eps {eps:.3f} loss {loss.item():.4f}")
    if it == 19:
        target.load_state_dict(copy.deepcopy(q_net.state_dict()))
        with torch.no_grad():
            torch._foreach_lerp_(list(target.parameters()), list(q_net.parameters()), 0.5)

with torch.inference_mode():
    qv = q_net(observe(reset(3)))
    print("q values", qv, "actions", qv.argmax(1), TORQUES[qv.argmax(1)])
    print(qv.max(dim=1), qv.is_inference())
    print("bins", torch.bucketize(torch.tensor([-1.7, -0.2, 0.9, 2.0]), torch.tensor([-1.0, 1.0])))
    picks = torch.multinomial((buf_r.abs() + 1e-2) ** 0.6, 6, replacement=True)  # prioritised
    print("prioritised", picks, F.one_hot(buf_a[picks], 3).sum(0))
    p, q = Categorical(logits=qv), Categorical(logits=qv / 2)
    print("kl", kl_divergence(p, q), p.entropy(), p.enumerate_support(expand=False).shape)
    print("probs", p.probs[0], p.logits[0], p.sample((2,)).shape, p.mode, p.perplexity())

# ---------------------------------------------------------------- mistakes
def mistake(fn):
    try:
        fn()
    except (ValueError, RuntimeError, NotImplementedError) as e:
        print(type(e).__name__, str(e).split("\n")[0])


tanh_dist = TransformedDistribution(Normal(0.0, 1.0), [TanhTransform()], validate_args=True)
mistake(lambda: tanh_dist.log_prob(torch.tensor(1.5)))
# torch.compile turned the distributions' default validation off: only validate_args=True checks
print("no check after compile", Normal(torch.zeros(2), torch.tensor([1.0, -0.5])).scale)
mistake(lambda: Normal(torch.zeros(2), torch.tensor([1.0, -0.5]), validate_args=True))
table = torch.arange(12.0).reshape(4, 3)
print("int32 index", table.gather(1, torch.tensor([[2], [0], [1], [2]], dtype=torch.int32)).T)
mistake(lambda: table.gather(1, torch.zeros(4, 1)))
unnormalised = Categorical(probs=torch.tensor([0.5, 0.3, 0.1]), validate_args=True)
print("renormalised", unnormalised.probs, unnormalised.logits)
mistake(lambda: Categorical(probs=torch.tensor([0.5, -0.3, 0.8]), validate_args=True))
mistake(lambda: Categorical(logits=qv, validate_args=True).log_prob(torch.tensor([0, 3, 1])))
mistake(lambda: qv.add_(1.0))
mistake(lambda: q_net(qv).sum().backward())
mistake(lambda: TransformedDistribution(Normal(0.0, 1.0), [TanhTransform()]).mean)
for p_ in q_net.parameters():
    p_.grad = torch.full_like(p_, float("nan"))
mistake(lambda: nn.utils.clip_grad_norm_(q_net.parameters(), 1.0, error_if_nonfinite=True))
