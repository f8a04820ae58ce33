"""PPO for continuous control as CleanRL writes it, on a vectorised 2-D point-mass environment
written with torch ops: layer_init (orthogonal_ with calculate_gain, constant_), a Gaussian policy
with a state-independent log_std Parameter (Normal(...).log_prob(a).sum(-1)) and a squashed one
(Independent + TransformedDistribution with TanhTransform(cache_size=1) and AffineTransform),
a Welford running observation normaliser, reward scaling by a running return std, episode resets
with torch.where on dones, GAE in a reversed Python loop, advantage normalisation, randperm
minibatches, clipped surrogate / value losses, approx-KL, clip fraction, clip_grad_norm_, Adam
with linear lr annealing, a state_dict round trip through a temporary file, and the usual
mistakes."""

import math
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import (
    AffineTransform,
    Independent,
    Normal,
    TanhTransform,
    TransformedDistribution,
)

torch.manual_seed(1)
N_ENVS, N_STEPS, OBS_DIM, ACT_DIM, MAX_LEN = 4, 32, 4, 2, 20
GAMMA, LAM, CLIP, ENT_COEF, VF_COEF, LR = 0.99, 0.95, 0.2, 0.01, 0.5, 3e-4
N_UPDATES, N_EPOCHS, N_MINI = 3, 3, 4
BATCH = N_ENVS * N_STEPS
MINIBATCH = BATCH // N_MINI


# ---------------------------------------------------------------- a batch of point masses
class PointMass:
    """Push a unit mass in the plane towards the origin; the force is clipped to [-1, 1]."""

    def __init__(self, n, seed):
        self.gen = torch.Generator().manual_seed(seed)
        self.n = n
        self.pos = torch.zeros(n, 2)
        self.vel = torch.zeros(n, 2)
        self.t = torch.zeros(n, dtype=torch.long)

    def _spawn(self, k):
        return torch.rand(k, 2, generator=self.gen) * 4 - 2

    def reset(self):
        self.pos, self.vel = self._spawn(self.n), torch.zeros(self.n, 2)
        self.t.zero_()
        return self.obs()

    def obs(self):
        return torch.cat([self.pos, self.vel], dim=1)

    def step(self, action):
        force = torch.clamp(action, -1.0, 1.0)
        self.vel = 0.9 * self.vel + 0.1 * force
        self.pos = self.pos + 0.1 * self.vel
        dist = torch.linalg.vector_norm(self.pos, dim=1)
        reward = -dist - 0.01 * force.pow(2).sum(1)
        self.t += 1
        done = (self.t >= MAX_LEN) | (dist < 0.1)
        fresh = self._spawn(self.n)
        self.pos = torch.where(done.unsqueeze(1), fresh, self.pos)
        self.vel = torch.where(done.unsqueeze(1), torch.zeros_like(self.vel), self.vel)
        self.t = torch.where(done, torch.zeros_like(self.t), self.t)
        return self.obs(), reward, done


class RunningMeanStd:
    """Welford-style merge of batch moments, as gym's NormalizeObservation keeps them."""

    def __init__(self, shape, epsilon=1e-4):
        self.mean = torch.zeros(shape, dtype=torch.float64)
        self.var = torch.ones(shape, dtype=torch.float64)
        self.count = epsilon

    def update(self, x):
        x = x.double()
        b_mean, b_var, b_count = x.mean(0), torch.var(x, dim=0, unbiased=False), x.shape[0]
        delta = b_mean - self.mean
        tot = self.count + b_count
        self.mean = self.mean + delta * b_count / tot
        m2 = self.var * self.count + b_var * b_count + delta.pow(2) * self.count * b_count / tot
        self.var = m2 / tot
        self.count = tot

    def normalize(self, x):
        return ((x - self.mean) / torch.sqrt(self.var + 1e-8)).float().clamp(-10.0, 10.0)


env = PointMass(N_ENVS, seed=7)
obs_rms, ret_rms = RunningMeanStd((OBS_DIM,)), RunningMeanStd(())
print("gain", nn.init.calculate_gain("tanh"), nn.init.calculate_gain("relu"),
      nn.init.calculate_gain("leaky_relu", 0.2), nn.init.calculate_gain("linear"))


# ---------------------------------------------------------------- agent
def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(OBS_DIM, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, 1), std=1.0))
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(OBS_DIM, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, ACT_DIM), std=0.01))
        self.actor_logstd = nn.Parameter(torch.zeros(1, ACT_DIM))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        action_mean = self.actor_mean(x)
        action_std = torch.exp(self.actor_logstd.expand_as(action_mean))
        probs = Normal(action_mean, action_std)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)


agent = Agent()
optimizer = torch.optim.Adam(agent.parameters(), lr=LR, eps=1e-5)
w = agent.actor_mean[2].weight
print("orthogonal", torch.allclose(w @ w.T, 2.0 * torch.eye(32), atol=1e-5),
      f"{agent.actor_mean[4].weight.norm().item():.5f}", agent.critic[4].bias)
print("n params", sum(p.numel() for p in agent.parameters()),
      [n for n, _ in agent.named_parameters()][-3:])

obs_buf = torch.zeros((N_STEPS, N_ENVS, OBS_DIM))
act_buf = torch.zeros((N_STEPS, N_ENVS, ACT_DIM))
logp_buf = torch.zeros((N_STEPS, N_ENVS))
rew_buf = torch.zeros((N_STEPS, N_ENVS))
done_buf = torch.zeros((N_STEPS, N_ENVS))
val_buf = torch.zeros((N_STEPS, N_ENVS))

raw_obs = env.reset()
obs_rms.update(raw_obs)
next_obs = obs_rms.normalize(raw_obs)
next_done = torch.zeros(N_ENVS)
disc_ret = torch.zeros(N_ENVS, dtype=torch.float64)
ep_ret, finished = torch.zeros(N_ENVS), []

for update in range(1, N_UPDATES + 1):
    frac = 1.0 - (update - 1.0) / N_UPDATES
    optimizer.param_groups[0]["lr"] = frac * LR
    for step in range(N_STEPS):
        obs_buf[step] = next_obs
        done_buf[step] = next_done
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(next_obs)
            val_buf[step] = value.flatten()
        act_buf[step] = action
        logp_buf[step] = logprob
        raw_obs, reward, done = env.step(action)
        ep_ret += reward
        for i in torch.nonzero(done).flatten().tolist():
            finished.append(ep_ret[i].item())
        ep_ret = torch.where(done, torch.zeros_like(ep_ret), ep_ret)
        disc_ret = disc_ret * GAMMA * (~done).double() + reward.double()
        ret_rms.update(disc_ret)
        rew_buf[step] = (reward / torch.sqrt(ret_rms.var + 1e-8)).float().clamp(-10, 10)
        obs_rms.update(raw_obs)
        next_obs, next_done = obs_rms.normalize(raw_obs), done.float()

    with torch.no_grad():
        next_value = agent.get_value(next_obs).reshape(1, -1)
        advantages = torch.zeros_like(rew_buf)
        lastgaelam = 0
        for t in reversed(range(N_STEPS)):
            if t == N_STEPS - 1:
                nextnonterminal = 1.0 - next_done
                nextvalues = next_value
            else:
                nextnonterminal = 1.0 - done_buf[t + 1]
                nextvalues = val_buf[t + 1]
            delta = rew_buf[t] + GAMMA * nextvalues * nextnonterminal - val_buf[t]
            advantages[t] = lastgaelam = delta + GAMMA * LAM * nextnonterminal * lastgaelam
        returns = advantages + val_buf

    b_obs = obs_buf.reshape((-1, OBS_DIM))
    b_logprobs = logp_buf.reshape(-1)
    b_actions = act_buf.reshape((-1, ACT_DIM))
    b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
    b_values = val_buf.reshape(-1)
    if update == 1:
        print("batch", b_obs.shape, b_actions.shape, b_logprobs.dtype, lastgaelam.shape,
              f"dones {int(done_buf.sum().item())}")
        print("obs rms", obs_rms.mean.float(), obs_rms.var.float(), f"{obs_rms.count:.4f}")
        print("adv", advantages[0], returns[-1])

    clipfracs = []
    for _epoch in range(N_EPOCHS):
        b_inds = torch.randperm(BATCH)
        for start in range(0, BATCH, MINIBATCH):
            mb_inds = b_inds[start:start + MINIBATCH]
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                b_obs[mb_inds], b_actions[mb_inds])
            logratio = newlogprob - b_logprobs[mb_inds]
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > CLIP).float().mean().item()]
            mb_adv = b_advantages[mb_inds]
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss1 = -mb_adv * ratio
            pg_loss2 = -mb_adv * torch.clamp(ratio, 1 - CLIP, 1 + CLIP)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            newvalue = newvalue.view(-1)
            v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
            v_clipped = b_values[mb_inds] + torch.clamp(
                newvalue - b_values[mb_inds], -CLIP, CLIP)
            v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
            v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ENT_COEF * entropy_loss + v_loss * VF_COEF
            optimizer.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimizer.step()

    y_pred, y_true = b_values.numpy(), b_returns.numpy()
    var_y = np.var(y_true)
    explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
    mean_ret = sum(finished) / max(len(finished), 1)
    # (approx-KL cancels nearly equal numbers: printed to 3 digits, its float32 exp's last bit
    # is not the point)
    print(f"update {update} lr {optimizer.param_groups[0]['lr']:.3e} pg {pg_loss.item():.5f} "
          f"v {v_loss.item():.5f} ent {entropy_loss.item():.5f} "
          f"kl {old_approx_kl.item():.3e}/{approx_kl.item():.2e} "
          f"clipfrac {np.mean(clipfracs):.4f} norm {grad_norm.item():.4f} "
          f"ev {explained_var:.4f} episodes {len(finished)} mean_return {mean_ret:.4f}")

print("log_std", agent.actor_logstd.data, agent.actor_logstd.grad,
      optimizer.state_dict()["param_groups"][0]["eps"])

# ---------------------------------------------------------------- minibatches by split
idx = torch.randperm(10)
print("split", [c.tolist() for c in idx.split(4)], [c.shape[0] for c in torch.split(idx, [3, 7])])
obs_t = torch.randn(100, OBS_DIM, dtype=torch.float64) * 3 + 1
print("welford vs var", torch.var(obs_t, dim=0, correction=0).float(),
      torch.var(obs_t, 0, unbiased=True).float(), obs_t.var(0, correction=1).float())

# ---------------------------------------------------------------- bounded actions
with torch.no_grad():
    mu = agent.actor_mean(next_obs)
    std = agent.actor_logstd.exp().expand_as(mu)
    low, high = torch.tensor([-1.0, -2.0]), torch.tensor([1.0, 2.0])
    squashed = TransformedDistribution(
        Independent(Normal(mu, std), 1),
        [TanhTransform(cache_size=1),
         AffineTransform(loc=(high + low) / 2, scale=(high - low) / 2)])
    a = squashed.sample()
    print("squashed", squashed.batch_shape, squashed.event_shape, a.shape,
          bool((a.abs() <= high).all()))
    # the log-det correction by hand: log N(u) - sum log(1 - tanh(u)^2) - sum log(scale)
    u = torch.atanh(a / high)
    by_hand = Normal(mu, std).log_prob(u).sum(-1) - torch.log(1 - torch.tanh(u).pow(2)).sum(-1) \
        - torch.log(high).sum()
    print("logp", squashed.log_prob(a), torch.allclose(squashed.log_prob(a), by_hand, atol=1e-3))
    ar = squashed.rsample((3,))
    print("rsample", ar.shape, squashed.log_prob(ar).shape)
    t = TanhTransform(cache_size=1)
    y = t(torch.tensor([0.5, 3.0]))
    print("cache", t.inv(y), t.log_abs_det_jacobian(torch.tensor([0.5, 3.0]), y))

# ---------------------------------------------------------------- save / load
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "ppo.pt")
    torch.save({"agent": agent.state_dict(), "optim": optimizer.state_dict(),
                "obs_rms": (obs_rms.mean, obs_rms.var, obs_rms.count)}, path)
    ckpt = torch.load(path)
    clone = Agent()
    missing = clone.load_state_dict(ckpt["agent"])
    opt2 = torch.optim.Adam(clone.parameters(), lr=LR, eps=1e-5)
    opt2.load_state_dict(ckpt["optim"])
    print("load", missing, sorted(ckpt["agent"].keys())[:3], ckpt["obs_rms"][2] > 0)
    with torch.no_grad():
        x = torch.randn(3, OBS_DIM)
        print("same", torch.equal(clone.get_value(x), agent.get_value(x)),
              opt2.param_groups[0]["lr"], opt2.state_dict()["state"][0]["step"])


# ---------------------------------------------------------------- mistakes
def mistake(fn):
    try:
        out = fn()
        print("no error", out)
    except (ValueError, RuntimeError, TypeError) as e:
        print(type(e).__name__, str(e).split("\n")[0][:120])


squash_checked = TransformedDistribution(Normal(0.0, 1.0), [TanhTransform()], validate_args=True)
mistake(lambda: squash_checked.log_prob(torch.tensor([0.3, 1.0])))
mistake(lambda: Normal(torch.zeros(2), torch.tensor([1.0, -0.1]), validate_args=True))
mistake(lambda: Normal(torch.zeros(2), torch.tensor([1.0, 0.0]), validate_args=True))
mistake(lambda: Normal(0.0, torch.tensor(float("nan")), validate_args=True))
print("no cache inverse", TanhTransform().inv(torch.tensor([-1.0, 0.0, 1.0])))
print("unchecked logp", TransformedDistribution(Normal(0.0, 1.0), [TanhTransform()]).log_prob(
    torch.tensor([1.0, -1.0, 0.999999])))
mistake(lambda: TanhTransform(cache_size=2))
mistake(lambda: Normal(torch.zeros(3), torch.ones(2)))
mistake(lambda: agent.get_action_and_value(torch.zeros(2, OBS_DIM + 1)))
mistake(lambda: Independent(Normal(torch.zeros(3), torch.ones(3)), 2))
mistake(lambda: nn.init.calculate_gain("swish"))
mistake(lambda: nn.init.orthogonal_(torch.empty(3)))
mistake(lambda: torch.randperm(5).split(0))
print("math", math.isclose(nn.init.calculate_gain("tanh"), 5 / 3))
