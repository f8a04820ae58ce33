"""Deep Q-learning with replay: a grid world and a batch of cart-poles written in torch ops, a
circular replay buffer of preallocated tensors, prioritized replay (a sum tree on tensors,
cumsum / searchsorted / multinomial sampling, importance weights), epsilon-greedy and Boltzmann
(Categorical) exploration, DQN and Double-DQN targets, a dueling head, n-step returns, Huber
losses, gradient clipping, target networks (deepcopy, load_state_dict, Polyak with _foreach_ ops
and lerp_), RMSprop(centered, momentum) and Adam(amsgrad), a C51 distributional head with its
projection, evaluation statistics, and the mistakes practitioners make."""

import collections
import copy
import io
import math
import random
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)


# ---------------------------------------------------------------- a batch of cart-poles
def cartpole_step(state, action, dt=0.02):
    x, x_dot, theta, theta_dot = state.unbind(-1)
    force = torch.where(action == 1, 10.0, -10.0)
    cos, sin = torch.cos(theta), torch.sin(theta)
    temp = (force + 0.05 * theta_dot.pow(2) * sin) / 1.1
    theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos.pow(2) / 1.1))
    x_acc = temp - 0.05 * theta_acc * cos / 1.1
    nxt = torch.stack([x + dt * x_dot, x_dot + dt * x_acc,
                       theta + dt * theta_dot, theta_dot + dt * theta_acc], dim=-1)
    done = (nxt[:, 0].abs() > 2.4) | (nxt[:, 2].abs() > 12 * 2 * math.pi / 360)
    return nxt, torch.ones_like(done, dtype=torch.float32), done


poles = torch.empty(6, 4).uniform_(-0.05, 0.05)
alive = torch.zeros(6, dtype=torch.long)
for _ in range(40):
    poles, reward, done = cartpole_step(poles, torch.randint(0, 2, (6,)))
    alive += (~done).long()
    poles = torch.where(done.unsqueeze(1), torch.empty(6, 4).uniform_(-0.05, 0.05), poles)
print("cartpole", poles.shape, poles.dtype, alive.tolist(), f"{poles.abs().max().item():.5f}")
print("pole angles", poles[:, 2])

# ---------------------------------------------------------------- a grid world
SIZE, N_ACTIONS, HORIZON = 4, 4, 20
MOVES = torch.tensor([[-1, 0], [1, 0], [0, -1], [0, 1]])
GOAL, PIT = torch.tensor([3, 3]), torch.tensor([1, 2])


def grid_step(pos, action):
    nxt = (pos + MOVES[action]).clamp(0, SIZE - 1)
    at_goal = (nxt == GOAL).all(-1)
    in_pit = (nxt == PIT).all(-1)
    reward = torch.where(at_goal, 1.0, torch.where(in_pit, -1.0, -0.04))
    return nxt, reward, at_goal | in_pit


def encode(pos):
    return F.one_hot(pos[..., 0] * SIZE + pos[..., 1], SIZE * SIZE).float()


p, r, d = grid_step(torch.tensor([[3, 2], [0, 2], [0, 0]]), torch.tensor([3, 1, 0]))
print("grid", p.tolist(), r, d, encode(p).shape, encode(p).argmax(-1))


# ---------------------------------------------------------------- a circular replay buffer
class ReplayBuffer:
    def __init__(self, capacity, obs_dim):
        self.obs = torch.zeros(capacity, obs_dim)
        self.next_obs = torch.zeros(capacity, obs_dim)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity)
        self.dones = torch.zeros(capacity, dtype=torch.bool)
        self.capacity, self.ptr, self.size = capacity, 0, 0

    def add(self, obs, action, reward, next_obs, done):
        self.obs[self.ptr] = obs
        self.next_obs[self.ptr] = next_obs
        self.actions[self.ptr] = action
        self.rewards[self.ptr] = reward
        self.dones[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def add_batch(self, obs, actions, rewards, next_obs, dones):
        idx = (self.ptr + torch.arange(len(actions))) % self.capacity
        self.obs[idx], self.next_obs[idx] = obs, next_obs
        self.actions[idx], self.rewards[idx], self.dones[idx] = actions, rewards, dones
        self.ptr = int((self.ptr + len(actions)) % self.capacity)
        self.size = min(self.size + len(actions), self.capacity)

    def sample(self, batch_size):
        idx = torch.randint(0, self.size, (batch_size,))
        return (self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx],
                self.dones[idx].float(), idx)


buf = ReplayBuffer(10, 3)
for i in range(13):
    buf.add(torch.full((3,), float(i)), i % 3, i * 0.5, torch.full((3,), i + 1.0), i % 4 == 0)
print("buffer", buf.ptr, buf.size, buf.obs[:, 0].tolist(), buf.dones.sum().item())
buf.add_batch(torch.ones(4, 3) * 20, torch.tensor([0, 1, 2, 0]), torch.arange(4.0),
              torch.ones(4, 3) * 21, torch.tensor([False, True, False, False]))
print("after batch", buf.ptr, buf.size, buf.actions.tolist(), buf.rewards)
o, a, r, o2, dn, idx = buf.sample(5)
print("sampled", idx.tolist(), a.tolist(), r, dn, o.shape, o2[:, 0])


# the tutorial's replay memory: a deque of namedtuples, batched with zip(*...)
random.seed(3)
Transition = collections.namedtuple("Transition", "state action reward next_state done")
memory = collections.deque(maxlen=50)
for i in range(60):
    memory.append(Transition(np.full(3, i, np.float32), i % 2, i / 10, np.full(3, i + 1.0,
                                                                              np.float32),
                             i % 3 == 0))
tb = Transition(*zip(*random.sample(memory, 8)))
states = torch.from_numpy(np.stack(tb.state))
acts = torch.tensor(tb.action).unsqueeze(1)
rews = torch.tensor(tb.reward, dtype=torch.float32)
dones = torch.tensor(tb.done)
print("deque batch", states[:, 0], acts.T, rews, dones, states.dtype, dones.dtype)
print("masked bootstrap", rews + 0.99 * (~dones) * rews, torch.where(dones, 0, rews),
      1 - dones.float())
print("one-hot actions", torch.zeros(8, 2).scatter_(1, acts, 1.0).sum(0),
      F.one_hot(acts.squeeze(1), 2).sum(0))


# ---------------------------------------------------------------- prioritized replay
class SumTree:
    """A binary sum tree on one tensor: leaves at [capacity, 2 * capacity)."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.tree = torch.zeros(2 * capacity, dtype=torch.float64)

    def update(self, idx, priority):
        pos = idx + self.capacity
        self.tree[pos] = priority
        pos = pos // 2
        while pos >= 1:
            self.tree[pos] = self.tree[2 * pos] + self.tree[2 * pos + 1]
            pos //= 2

    def total(self):
        return self.tree[1].item()

    def find(self, values):
        pos = torch.ones_like(values, dtype=torch.long)
        values = values.clone()
        while (pos < self.capacity).any():
            left = self.tree[2 * pos]
            go_right = values > left
            values = torch.where(go_right, values - left, values)
            pos = 2 * pos + go_right.long()
        return pos - self.capacity


tree = SumTree(8)
prios = torch.tensor([0.5, 1.0, 2.0, 0.1, 3.0, 0.4, 1.5, 0.25], dtype=torch.float64)
for i, pr in enumerate(prios):
    tree.update(i, pr)
print("tree total", f"{tree.total():.4f}", tree.tree[1:8])
print("tree find", tree.find(torch.tensor([0.0, 0.6, 3.4, 3.55, 6.0, 8.74], dtype=torch.float64)))

alpha, beta = 0.6, 0.4
scaled = prios.float().pow(alpha)
probs = scaled / scaled.sum()
cdf = torch.cumsum(probs, dim=0)
u = (torch.arange(6) + torch.rand(6)) / 6
strat = torch.searchsorted(cdf, u).clamp(max=len(prios) - 1)
print("stratified", strat, torch.searchsorted(cdf, u, right=True).clamp(max=7), cdf)
draw = torch.multinomial(probs, 12, replacement=True)
weights = (len(prios) * probs[draw]).pow(-beta)
weights = weights / weights.max()
print("per draw", draw.tolist(), torch.bincount(draw, minlength=8).tolist())
print("is weights", weights)
new_td = torch.tensor([0.3, -1.2, 0.05, 2.0])
prios[draw[:4]] = new_td.abs().double() + 1e-6
print("new priorities", prios)
floors = [prios[:4].clone(), prios[4:].clone()]
torch._foreach_maximum_(floors, [torch.full((4,), 0.3, dtype=torch.float64)] * 2)
torch._foreach_minimum_(floors, 1.5)
print("clamped priorities", floors, torch._foreach_maximum(floors, 1.0)[1])


# ---------------------------------------------------------------- Q networks
class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_actions))

    def forward(self, x):
        return self.net(x)


class DuelingQNet(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.value = nn.Linear(hidden, 1)
        self.adv = nn.Linear(hidden, n_actions)

    def forward(self, x):
        h = self.body(x)
        adv = self.adv(h)
        return self.value(h) + adv - adv.mean(dim=1, keepdim=True)


def epsilon_greedy(q_net, obs, eps):
    explore = torch.rand(obs.shape[0]) < eps
    with torch.no_grad():
        greedy = q_net(obs).argmax(dim=1)
    return torch.where(explore, torch.randint(0, N_ACTIONS, (obs.shape[0],)), greedy)


def dqn_targets(target_net, rewards, next_obs, dones, gamma):
    with torch.no_grad():
        next_q = target_net(next_obs).max(dim=1).values
        return rewards + gamma * (1 - dones) * next_q


def double_dqn_targets(online, target_net, rewards, next_obs, dones, gamma):
    with torch.no_grad():
        best = online(next_obs).argmax(dim=1, keepdim=True)
        next_q = target_net(next_obs).gather(1, best).squeeze(1)
        return rewards + gamma * (1 - dones) * next_q


@torch.no_grad()
def polyak(target, online, tau):
    t_params, o_params = list(target.parameters()), list(online.parameters())
    torch._foreach_mul_(t_params, 1 - tau)
    torch._foreach_add_(t_params, o_params, alpha=tau)


def evaluate(q_net, episodes=8):
    pos = torch.zeros(episodes, 2, dtype=torch.long)
    total = torch.zeros(episodes)
    steps = torch.zeros(episodes, dtype=torch.long)
    running = torch.ones(episodes, dtype=torch.bool)
    for _ in range(HORIZON):
        with torch.no_grad():
            act = q_net(encode(pos)).argmax(1)
        nxt, rew, done = grid_step(pos, act)
        total += rew * running
        steps += running.long()
        pos = torch.where(running.unsqueeze(1), nxt, pos)
        running &= ~done
    return total, steps


def train(name, q_net, optimizer, double, use_per, steps=240, batch=32, gamma=0.9):
    torch.manual_seed(1)
    target = copy.deepcopy(q_net)
    for p_ in target.parameters():
        p_.requires_grad_(False)
    buf = ReplayBuffer(200, SIZE * SIZE)
    prio = torch.ones(200)
    pos = torch.zeros(4, 2, dtype=torch.long)
    losses, grad_norms = [], []
    for step in range(steps):
        eps = max(0.05, 1.0 - step / 150)
        obs = encode(pos)
        act = epsilon_greedy(q_net, obs, eps)
        nxt, rew, done = grid_step(pos, act)
        prio[(buf.ptr + torch.arange(4)) % 200] = prio[:max(buf.size, 1)].max()
        buf.add_batch(obs, act, rew, encode(nxt), done)
        pos = torch.where(done.unsqueeze(1), torch.zeros_like(nxt), nxt)
        if buf.size < 32:
            continue
        if use_per:
            p_a = prio[:buf.size].pow(0.6)
            p_a = p_a / p_a.sum()
            idx = torch.multinomial(p_a, batch, replacement=True)
            w = (buf.size * p_a[idx]).pow(-0.4)
            w = w / w.max()
            o, a, r, o2, dn = (buf.obs[idx], buf.actions[idx], buf.rewards[idx],
                               buf.next_obs[idx], buf.dones[idx].float())
        else:
            o, a, r, o2, dn, idx = buf.sample(batch)
            w = torch.ones(batch)
        q = q_net(o).gather(1, a.unsqueeze(1)).squeeze(1)
        if double:
            y = double_dqn_targets(q_net, target, r, o2, dn, gamma)
        else:
            y = dqn_targets(target, r, o2, dn, gamma)
        td = F.huber_loss(q, y, reduction="none", delta=1.0)
        loss = (w * td).mean()
        optimizer.zero_grad()
        loss.backward()
        grad_norms.append(nn.utils.clip_grad_norm_(q_net.parameters(), 5.0, foreach=True).item())
        optimizer.step()
        if use_per:
            prio[idx] = (q - y).detach().abs() + 1e-3
        losses.append(loss.item())
        if step % 10 == 0:
            if double:
                polyak(target, q_net, 0.5)
            else:
                target.load_state_dict(q_net.state_dict())
    total, n = evaluate(q_net)
    print(f"{name}: loss first {losses[0]:.4f} last10 {sum(losses[-10:]) / 10:.4f} "
          f"max grad norm {max(grad_norms):.4f} updates {len(losses)}")
    print(f"  eval return mean {total.mean().item():.4f} std {total.std().item():.4f} "
          f"steps {n.tolist()}")
    with torch.no_grad():
        q_all = q_net(torch.eye(SIZE * SIZE))
    print("  greedy policy", q_all.argmax(1).view(SIZE, SIZE).tolist())
    print("  V(start)", f"{q_all[0].max().item():.4f}", "V(next to goal)",
          f"{q_all[SIZE * SIZE - 2].max().item():.4f}")
    return q_net, target


torch.manual_seed(2)
net = QNet(SIZE * SIZE, N_ACTIONS)
train("dqn rmsprop", net, torch.optim.RMSprop(net.parameters(), lr=1e-2, alpha=0.95,
                                              centered=True, momentum=0.5), False, False)
torch.manual_seed(2)
duel = DuelingQNet(SIZE * SIZE, N_ACTIONS)
duel, duel_target = train("double dueling per adam", duel,
                          torch.optim.Adam(duel.parameters(), lr=1e-2, amsgrad=True), True, True,
                          steps=180)
# right after a hard update the networks agree: the loss between them and its gradients
# (on both sides, as in a symmetric consistency loss) are zero
hard = copy.deepcopy(net)
hard.load_state_dict(net.state_dict())
for fn in (F.mse_loss, F.smooth_l1_loss, F.huber_loss):
    q_on = net(torch.eye(SIZE * SIZE)[:2]).detach().requires_grad_()
    q_tg = hard(torch.eye(SIZE * SIZE)[:2]).detach().requires_grad_()
    gap_loss = fn(q_on, q_tg)
    gap_loss.backward()
    print(fn.__name__, gap_loss.item(), gap_loss.grad_fn.name(), q_on.grad[0], q_tg.grad[1])
q_on = torch.tensor([[0.5, 1.25], [2.0, -1.0]], requires_grad=True)
q_tg = torch.tensor([[0.5, 0.0], [2.5, -1.0]], requires_grad=True)
F.huber_loss(q_on, q_tg, delta=0.5, reduction="sum").backward()
print("huber grads", q_on.grad, q_tg.grad)
print("dueling keys", list(duel.state_dict().keys()))
print("td max", duel(torch.eye(SIZE * SIZE)[:3]).max(dim=1))
print("target requires grad", [p_.requires_grad for p_ in duel_target.parameters()][:2])

# a checkpoint (model, optimizer with its amsgrad state, counters) through memory
ckpt_opt = torch.optim.Adam(duel.parameters(), lr=1e-3, amsgrad=True)
duel(torch.eye(SIZE * SIZE)).max(1).values.sum().backward()
ckpt_opt.step()
stream = io.BytesIO()
torch.save({"model": duel.state_dict(), "optim": ckpt_opt.state_dict(), "step": 180, "eps": 0.05},
           stream)
stream.seek(0)
ckpt = torch.load(stream, weights_only=True)
restored = DuelingQNet(SIZE * SIZE, N_ACTIONS)
print("restore", restored.load_state_dict(ckpt["model"]), ckpt["step"], ckpt["eps"],
      sorted(ckpt["optim"]["state"][0]), ckpt["optim"]["state"][0]["step"])
opt_back = torch.optim.Adam(restored.parameters(), lr=5e-3, amsgrad=True)
opt_back.load_state_dict(ckpt["optim"])
print("optimizer back", opt_back.param_groups[0]["lr"], opt_back.param_groups[0]["amsgrad"],
      opt_back.state[restored.adv.bias]["max_exp_avg_sq"])
with torch.inference_mode():
    q_inf = restored(torch.eye(SIZE * SIZE)[:4])
print("inference", q_inf.requires_grad, q_inf.is_inference(), q_inf.argmax(1),
      all(torch.equal(a_, b_) for a_, b_ in zip(restored.parameters(), duel.parameters())))
try:
    q_inf.sum().backward()
except RuntimeError as e:
    print("inference backward:", e)

# lerp_ polyak and a foreach clip
with torch.no_grad():
    for tp, op in zip(duel_target.parameters(), duel.parameters()):
        tp.lerp_(op, 0.1)
gap = sum((tp - op).abs().sum() for tp, op in zip(duel_target.parameters(), duel.parameters()))
print("target gap", f"{gap.item():.4f}")
loss = duel(torch.eye(SIZE * SIZE)).pow(2).sum()
loss.backward()
nn.utils.clip_grad_value_(duel.parameters(), 0.05, foreach=True)
print("clipped grads", duel.adv.bias.grad, duel.value.weight.grad.abs().max().item())
duel.zero_grad(set_to_none=True)
print("grad after zero_grad", duel.adv.bias.grad)


# ---------------------------------------------------------------- n-step returns
gamma = 0.99
rewards = torch.tensor([1.0, 0.0, -0.5, 2.0, 1.0])
disc = torch.pow(gamma, torch.arange(len(rewards), dtype=torch.float32))
print("n-step return", f"{(disc * rewards).sum().item():.5f}", disc)
rtg = torch.flip(torch.cumsum(torch.flip(rewards * disc, [0]), 0), [0]) / disc
print("reward to go", rtg)
traj = torch.tensor([[0.5, 1.0, 0.0, -1.0, 0.25, 0.0, 2.0, 1.0]])
windows = traj.unfold(1, 3, 1)
print("3-step", (windows * torch.pow(gamma, torch.arange(3.0))).sum(-1))


# ---------------------------------------------------------------- C51 distributional head
N_ATOMS, V_MIN, V_MAX = 11, -2.0, 2.0
support = torch.linspace(V_MIN, V_MAX, N_ATOMS)
delta_z = (V_MAX - V_MIN) / (N_ATOMS - 1)
torch.manual_seed(3)
c51 = nn.Linear(SIZE * SIZE, N_ACTIONS * N_ATOMS)
obs = encode(torch.tensor([[0, 0], [2, 3], [3, 2]]))
dist = F.softmax(c51(obs).view(-1, N_ACTIONS, N_ATOMS), dim=-1)
q_vals = (dist * support).sum(-1)
print("c51 q", q_vals, q_vals.argmax(1))


def project(next_dist, rewards, dones, gamma):
    batch = rewards.shape[0]
    tz = (rewards.unsqueeze(1) + gamma * (1 - dones).unsqueeze(1) * support).clamp(V_MIN, V_MAX)
    b = (tz - V_MIN) / delta_z
    lo, hi = b.floor().long(), b.ceil().long()
    lo[(hi > 0) & (lo == hi)] -= 1
    hi[(lo < N_ATOMS - 1) & (lo == hi)] += 1
    offset = (torch.arange(batch) * N_ATOMS).unsqueeze(1).expand(batch, N_ATOMS)
    proj = torch.zeros(batch * N_ATOMS)
    proj.index_add_(0, (lo + offset).view(-1), (next_dist * (hi.float() - b)).view(-1))
    proj.index_add_(0, (hi + offset).view(-1), (next_dist * (b - lo.float())).view(-1))
    return proj.view(batch, N_ATOMS)


with torch.no_grad():
    best = q_vals.argmax(1)
    nd = dist[torch.arange(3), best]
    target_dist = project(nd, torch.tensor([0.5, -1.0, 1.0]), torch.tensor([0.0, 0.0, 1.0]), 0.9)
print("projected sums", target_dist.sum(1), target_dist[2])
log_p = F.log_softmax(c51(obs).view(-1, N_ACTIONS, N_ATOMS), dim=-1)[torch.arange(3), best]
c51_loss = -(target_dist * log_p).sum(-1).mean()
c51_loss.backward()
print("c51 loss", f"{c51_loss.item():.5f}", c51.bias.grad.view(N_ACTIONS, N_ATOMS)[:, :3])

# ---------------------------------------------------------------- Boltzmann exploration
torch.manual_seed(4)
q_batch = torch.tensor([[1.0, 2.0, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0], [5.0, -1.0, 2.0, 4.9]])
for temp in (0.5, 1.0):
    boltz = Categorical(logits=q_batch / temp)
    acts = boltz.sample()
    print(f"T={temp}", acts.tolist(), boltz.log_prob(acts), boltz.entropy(), boltz.probs[0])
many = Categorical(logits=q_batch).sample((500,))
print("boltzmann counts", [torch.bincount(many[:, i], minlength=4).tolist() for i in range(3)])

# ---------------------------------------------------------------- evaluation statistics
returns = torch.randn(20) * 0.3 + 0.5
print("eval", f"mean {returns.mean().item():.4f} std {returns.std().item():.4f} "
      f"min {returns.min().item():.4f} max {returns.max().item():.4f} "
      f"median {returns.median().item():.4f}")
print("quantiles", torch.quantile(returns, torch.tensor([0.1, 0.5, 0.9])))
print("success rate", (returns > 0.5).float().mean().item(), torch.topk(returns, 3).indices)
sm = torch.stack([returns[i:i + 5].mean() for i in range(0, 20, 5)])
print("moving mean", sm, torch.std_mean(returns, unbiased=False))

# ---------------------------------------------------------------- typical mistakes
qs = torch.randn(4, 3, requires_grad=True)
picked = qs.gather(1, torch.tensor([[0], [1], [2], [0]], dtype=torch.int32))
print("int32 gather", picked.squeeze(1), picked.grad_fn.name(), picked.squeeze(1).grad_fn.name())
for what, call in [
        ("float index", lambda: qs.gather(1, torch.tensor([[0.0], [1.0], [2.0], [0.0]]))),
        ("index out of range", lambda: qs.gather(1, torch.tensor([[3], [0], [0], [0]]))),
        ("1-d index", lambda: qs.gather(1, torch.tensor([0, 1, 2, 0]))),
        ("negative beta", lambda: F.smooth_l1_loss(qs, qs.detach(), beta=-1.0)),
        ("zero delta", lambda: F.huber_loss(qs, qs.detach(), delta=0.0)),
        ("done mask shape", lambda: torch.where(torch.ones(5, dtype=torch.bool), qs[0], 0.0)),
        ("reward shape", lambda: torch.zeros(4).add_(torch.ones(3))),
        ("bootstrap shape", lambda: torch.zeros(4, 1).mul_(torch.ones(4, 3))),
        ("long buffer", lambda: torch.zeros(4, dtype=torch.long).add_(torch.ones(3))),
        ("polyak wrong net", lambda: torch._foreach_add_(list(QNet(16, 4).parameters()),
                                                         list(QNet(16, 2).parameters()))),
        ("lerp wrong net", lambda: torch._foreach_lerp_(list(QNet(16, 4).parameters()),
                                                        list(QNet(8, 4).parameters()), 0.1)),
        ("load wrong net", lambda: QNet(16, 4).load_state_dict(QNet(16, 2).state_dict())),
        ("missing keys", lambda: QNet(16, 4).load_state_dict({"net.0.weight": torch.zeros(32,
                                                                                         16)})),
]:
    try:
        with torch.no_grad():
            res = call()
        print(what, "->", res if isinstance(res, torch.Tensor) else type(res).__name__)
    except Exception as e:
        print(f"{what}: {type(e).__name__}: {str(e).splitlines()[0][:150]}")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    bad = F.smooth_l1_loss(torch.zeros(4, 1), torch.ones(4), beta=0.5)
for w_ in caught:
    print("warning:", w_.category.__name__, str(w_.message))
print("broadcast loss", f"{bad.item():.4f}", F.smooth_l1_loss(torch.zeros(4), torch.ones(4),
                                                            beta=0.5).item())
empty_q = torch.empty(0, 4)
print("empty batch", empty_q.argmax(dim=1), empty_q.max(dim=1).values.shape, empty_q.sum(1))
try:
    torch.empty(4, 0).argmax(dim=1)
except Exception as e:
    print("no actions argmax:", type(e).__name__, e)
try:
    torch.empty(4, 0).max(dim=1)
except Exception as e:
    print("no actions max:", type(e).__name__, e)
try:
    torch.empty(0).argmax()
except Exception as e:
    print("empty argmax all:", type(e).__name__, e)
try:
    torch.zeros(5).index_add_(0, torch.tensor([0, 1, 2]), torch.ones(2))
except Exception as e:
    print("index_add_ shape:", type(e).__name__, e)
net2 = QNet(2, 2)
net2(torch.tensor([[float("inf"), 1.0]])).sum().backward()
try:
    nn.utils.clip_grad_norm_(net2.parameters(), 1.0, error_if_nonfinite=True)
except Exception as e:
    print("nonfinite norm:", type(e).__name__, e)
print("nonfinite no error", nn.utils.clip_grad_norm_(net2.parameters(), 1.0))
try:
    torch.multinomial(torch.tensor([0.0, 0.0]), 2, replacement=True)
except Exception as e:
    print("zero probs:", type(e).__name__, e)
try:
    torch.multinomial(torch.tensor([0.5, 0.5]), 3, replacement=False)
except Exception as e:
    print("too many samples:", type(e).__name__, e)
try:
    Categorical(logits=torch.tensor([1.0, 2.0])).log_prob(torch.tensor(3))
except Exception as e:
    print("bad action:", type(e).__name__, str(e).split("\n")[0][:80])
