"""Reinforcement learning in MLX's own API, on two tiny environments written here with mx arrays.

A gridworld (a transition table built by `mx.clip` and `mx.stack`, rewards set by `.at[]`,
one-hot observations) and a cart-pole-like linear system (`x' = A x + B u` from `mx.array`
of lists, alive while the pole stays up), both batched over environments. Around them, the
pieces policy-gradient code is made of: actions drawn by `mx.random.categorical` (axis,
num_samples, keys from `mx.random.split`), log-probabilities by `nn.log_softmax` and
`mx.take_along_axis`, entropies, discounted returns three ways (a reversed Python loop,
negative-step slicing, `mx.cumsum(reverse=True)`), generalised advantage estimation and
advantage normalisation (`mx.mean` / `mx.std` / `mx.var` with ddof). Then three learners as
mlx-examples would write them: REINFORCE with a learned baseline on the cart-pole (two models,
two `nn.value_and_grad`, Adam with `clip_grad_norm`, a Huber value loss), PPO's clipped
objective with an actor-critic on the gridworld (a compiled update step with
`inputs=state, outputs=state`, checked against the eager one on the same batch), and an
epsilon-greedy DQN on the gridworld with a replay buffer of mx arrays and a Polyak-averaged
target network (`tree_map`). Last, the mistakes users make. The same file runs on MLX and,
via `python -m ember.run policy_gradient.py`, on ember.
"""

from functools import partial

from mlx.utils import tree_flatten, tree_map

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


def fmt(v):
    """Nested lists of numbers with 4 decimals (booleans and integers as they are)."""
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def show(name, x):
    """One line per array: name, shape, dtype and values."""
    print(f"{name}: {tuple(x.shape)} {x.dtype} {fmt(x.tolist())}")


class GridWorld:
    """A size x size grid: start in the top-left cell, goal in the bottom-right one, a pit
    in the middle; actions up / right / down / left (walls keep the agent in place).
    Each step costs 0.04, the goal pays 1 and the pit costs 1; both end the episode, and
    a finished environment starts again from the start cell."""

    ARROWS = "^>v<"

    def __init__(self, size=4):
        self.size = size
        self.n = size * size
        cells = mx.arange(self.n)
        rows, cols = cells // size, cells % size
        moves = [(-1, 0), (0, 1), (1, 0), (0, -1)]
        nexts = [mx.clip(rows + dr, 0, size - 1) * size + mx.clip(cols + dc, 0, size - 1)
                 for dr, dc in moves]
        self.table = mx.stack(nexts, axis=1).astype(mx.int32)
        self.goal, self.pit = self.n - 1, size + 1
        self.reward = mx.full((self.n,), -0.04).at[self.goal].add(1.04).at[self.pit].add(-0.96)
        self.terminal = mx.zeros((self.n,), dtype=mx.bool_)
        self.terminal[self.goal] = True
        self.terminal[self.pit] = True

    def reset(self, batch):
        return mx.zeros((batch,), dtype=mx.int32)

    def observe(self, states):
        return (states[:, None] == mx.arange(self.n)).astype(mx.float32)

    def step(self, states, actions):
        nxt = self.table[states, actions]
        done = self.terminal[nxt]
        return mx.where(done, 0, nxt), self.reward[nxt], done


class CartPole:
    """A linearised cart-pole: state (x, v, theta, omega), two actions pushing left or
    right, `s' = s A^T + u B`; 1 reward per step while |theta| < 0.4 and |x| < 2.4."""

    def __init__(self, dt=0.1):
        self.A = mx.array([[1.0, dt, 0.0, 0.0], [0.0, 1.0, -0.5 * dt, 0.0],
                           [0.0, 0.0, 1.0, dt], [0.0, 0.0, 2.0 * dt, 1.0]])
        self.B = mx.array([0.0, dt, 0.0, -1.5 * dt])

    def reset(self, batch, key):
        return mx.random.uniform(-0.05, 0.05, (batch, 4), key=key)

    def step(self, states, actions):
        force = actions.astype(mx.float32) * 2 - 1
        nxt = states @ self.A.T + force[:, None] * self.B
        alive = (mx.abs(nxt[:, 2]) < 0.4) & (mx.abs(nxt[:, 0]) < 2.4)
        return nxt, alive


class MLP(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = nn.tanh(layer(x))
        return self.layers[-1](x)


def log_prob(logits, actions):
    """log pi(a | s) of the taken actions, and the policy's entropy per row."""
    logp = nn.log_softmax(logits, axis=-1)
    taken = mx.take_along_axis(logp, actions[..., None], axis=-1).squeeze(-1)
    entropy = -(mx.exp(logp) * logp).sum(axis=-1)
    return taken, entropy


def discounted_loop(rewards, dones, gamma):
    """Returns by the reversed scan: G_t = r_t + gamma (1 - done_t) G_{t+1}."""
    ret = mx.zeros_like(rewards[0])
    out = []
    for t in reversed(range(rewards.shape[0])):
        ret = rewards[t] + gamma * ret * (1 - dones[t])
        out.append(ret)
    return mx.stack(out[::-1])


def gae(rewards, values, last_value, dones, gamma, lam):
    """Generalised advantage estimation, and the returns it implies (advantages + values)."""
    next_values = mx.concatenate([values[1:], last_value[None]], axis=0)
    deltas = rewards + gamma * next_values * (1 - dones) - values
    adv = mx.zeros_like(last_value)
    out = []
    for t in range(rewards.shape[0] - 1, -1, -1):
        adv = deltas[t] + gamma * lam * (1 - dones[t]) * adv
        out.append(adv)
    advantages = mx.stack(out[::-1])
    return advantages, advantages + values


def normalise(adv):
    return (adv - mx.mean(adv)) / (mx.std(adv) + 1e-8)


def sampling():
    print("== sampling")
    key = mx.random.key(3)
    k1, k2, k3 = mx.random.split(key, 3)
    show("split keys", mx.random.split(key))
    logits = mx.array([[2.0, 0.0, -1.0], [0.0, 0.0, 0.0], [-3.0, 1.0, 1.0]])
    show("one draw per row", mx.random.categorical(logits, key=k1))
    draws = mx.random.categorical(logits, axis=-1, num_samples=2000, key=k2)
    print("draws", draws.shape, draws.dtype)
    freq = (draws[..., None] == mx.arange(3)).astype(mx.float32).mean(axis=1)
    show("frequencies", freq)
    show("softmax", mx.softmax(logits, axis=-1))
    show("over axis 0", mx.random.categorical(logits, axis=0, num_samples=4, key=k3))
    show("shape=(2, 3)", mx.random.categorical(logits, shape=(2, 3), key=k3))
    actions = mx.array([0, 2, 1])
    taken, entropy = log_prob(logits, actions)
    show("log pi(a|s)", taken)
    show("entropy", entropy)
    show("log(3)", mx.log(mx.array(3.0)))
    show("logsumexp", mx.logsumexp(logits, axis=1))
    print("== action masks")
    mask = mx.array([[True, False, True], [True, True, True], [False, True, True]])
    masked = mx.where(mask, logits, -1e9)
    show("masked probabilities", mx.softmax(masked, axis=-1))
    draws = mx.random.categorical(masked, num_samples=500, key=k1)
    print("only legal actions drawn:", mx.take_along_axis(mask, draws, axis=1).all().item())
    logp = nn.log_softmax(mx.where(mask, logits, float("-inf")), axis=-1)
    print("entropy with -inf logits:", -(mx.exp(logp) * logp).sum(axis=-1))
    show("entropy under the mask", -mx.where(mask, mx.exp(logp) * logp, 0.0).sum(axis=-1))
    print("exp at the float32 edges:", mx.exp(mx.array([-88.5, -87.0, 88.0, 88.5])))
    print("ratio of a clipped log-ratio:", mx.exp(mx.clip(mx.array([100.0, -100.0]), -20, 20)))
    print("sigmoid:", mx.sigmoid(mx.array([-90.0, -88.0, 0.0])))
    print("softplus:", nn.softplus(mx.array([-90.0, 0.0, 90.0])))
    print("softmax far below the max:", mx.softmax(mx.array([0.0, -87.0, -90.0])))


def returns_and_advantages():
    print("== returns")
    rewards = mx.array([1.0, 0.0, -0.5, 2.0, 1.0, 0.0, 0.5, 1.0])
    gamma = 0.9
    no_dones = mx.zeros_like(rewards)
    loop = discounted_loop(rewards[:, None], no_dones[:, None], gamma).squeeze(1)
    powers = gamma ** mx.arange(rewards.size, dtype=mx.float32)
    by_cumsum = mx.cumsum(rewards * powers, reverse=True) / powers
    flipped = mx.cumsum((rewards * powers)[::-1])[::-1] / powers
    show("loop", loop)
    show("cumsum reverse", by_cumsum)
    print("agree:", mx.allclose(loop, by_cumsum).item(), mx.allclose(flipped, by_cumsum).item())
    show("every other, backwards", rewards[-1::-2])
    show("cumprod reverse", mx.cumprod(mx.full((4,), gamma), reverse=True))
    show("cumsum exclusive", mx.cumsum(rewards[:4], inclusive=False))
    dones = mx.array([0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    show("returns with dones", discounted_loop(rewards, dones, gamma))
    print("== advantages")
    values = mx.array([0.5, 0.4, 0.1, 1.0, 0.8, 0.2, 0.6, 0.9])
    batch = mx.stack([rewards, rewards[::-1]], axis=1)
    vals = mx.stack([values, values[::-1]], axis=1)
    done2 = mx.stack([dones, dones[::-1]], axis=1)
    adv, ret = gae(batch, vals, mx.array([0.7, 0.3]), done2, 0.99, 0.95)
    show("gae", adv.T)
    show("gae returns", ret[:3])
    lam1, _ = gae(batch, vals, mx.array([0.7, 0.3]), done2, 0.99, 1.0)
    mc = discounted_loop(batch, done2, 0.99)
    print("lambda=1 without bootstrap is return - value:",
          mx.allclose(lam1[:5], (mc - vals)[:5], atol=1e-5).item())
    flat = adv.flatten()
    print(f"mean {mx.mean(flat).item():.5f} var {mx.var(flat).item():.5f} "
          f"var ddof=1 {mx.var(flat, ddof=1).item():.5f} std {mx.std(flat).item():.5f} "
          f"std ddof=1 {mx.std(flat, ddof=1).item():.5f}")
    normed = normalise(adv)
    print(f"normalised: mean {abs(normed.mean().item()) < 1e-6} std {normed.std().item():.4f}")
    show("per-env std", mx.std(adv, axis=0, ddof=1, keepdims=True))


def environments():
    print("== gridworld")
    env = GridWorld()
    show("table row 0 and 5", env.table[mx.array([0, 5])])
    show("rewards", env.reward.reshape(4, 4))
    show("terminal", env.terminal.reshape(4, 4).astype(mx.int32))
    states = mx.array([0, 1, 4, 14, 11], dtype=mx.int32)
    actions = mx.array([1, 2, 2, 1, 2], dtype=mx.int32)
    nxt, r, done = env.step(states, actions)
    show("next", nxt)
    show("reward", r)
    show("done", done)
    show("observe", env.observe(mx.array([3], dtype=mx.int32)))
    print("== cart-pole")
    pole = CartPole()
    s = pole.reset(3, mx.random.key(1))
    show("start", s)
    for t in range(3):
        s, alive = pole.step(s, mx.array([t % 2, 1, 0]))
    show("after 3 steps", s)
    show("alive", alive)
    power = mx.eye(4)
    for _ in range(10):
        power = power @ pole.A
    show("A^10 row 2", power[2])


def rollout_cartpole(policy, pole, key, batch, horizon):
    """States, actions and alive masks of `batch` episodes of at most `horizon` steps."""
    key, sub = mx.random.split(key)
    s = pole.reset(batch, sub)
    alive = mx.ones((batch,), dtype=mx.bool_)
    obs, acts, masks = [], [], []
    for _ in range(horizon):
        key, sub = mx.random.split(key)
        a = mx.random.categorical(policy(s), key=sub)
        obs.append(s)
        acts.append(a)
        masks.append(alive.astype(mx.float32))
        s, still = pole.step(s, a)
        alive = alive & still
    return mx.stack(obs), mx.stack(acts), mx.stack(masks), key


def reinforce():
    print("== REINFORCE with a baseline (cart-pole)")
    mx.random.seed(0)
    pole = CartPole()
    policy, baseline = MLP([4, 16, 2]), MLP([4, 16, 1])
    mx.eval(policy.parameters(), baseline.parameters())
    pi_opt, v_opt = optim.Adam(learning_rate=2e-2), optim.Adam(learning_rate=1e-2)

    def policy_loss(model, obs, acts, masks, adv):
        taken, entropy = log_prob(model(obs), acts)
        n = masks.sum()
        return -(taken * adv * masks).sum() / n - 0.01 * (entropy * masks).sum() / n

    def value_loss(model, obs, returns, masks):
        pred = model(obs).squeeze(-1)
        per_step = nn.losses.huber_loss(pred, returns, delta=1.0, reduction="none")
        return (per_step * masks).sum() / masks.sum()

    pi_grad = nn.value_and_grad(policy, policy_loss)
    v_grad = nn.value_and_grad(baseline, value_loss)
    key = mx.random.key(11)
    for it in range(12):
        obs, acts, masks, key = rollout_cartpole(policy, pole, key, 16, 25)
        returns = discounted_loop(masks, mx.zeros_like(masks), 0.95) * masks
        adv = mx.stop_gradient(returns - baseline(obs).squeeze(-1))
        adv = (adv - adv.mean()) / (mx.std(adv, ddof=1) + 1e-8)
        pl, g = pi_grad(policy, obs, acts, masks, adv)
        g, norm = optim.clip_grad_norm(g, max_norm=1.0)
        pi_opt.update(policy, g)
        vl, vg = v_grad(baseline, obs, returns, masks)
        vg, vnorm = optim.clip_grad_norm(vg, max_norm=5.0)
        v_opt.update(baseline, vg)
        mx.eval(policy.parameters(), baseline.parameters(), pi_opt.state, v_opt.state)
        if it % 3 == 0 or it == 11:
            length = masks.sum(axis=0).mean().item()
            print(f"  iter {it:2d}: mean length {length:6.3f} policy loss {pl.item():.5f} "
                  f"grad norm {norm.item():.4f} value loss {vl.item():.5f} "
                  f"value grad norm {vnorm.item():.4f}")
    clipped, total = optim.clip_grad_norm({"w": mx.array([3.0, 4.0])}, max_norm=1.0)
    show("clip_grad_norm of [3, 4]", clipped["w"])
    print("total norm", total.item())
    print("smooth_l1 == huber for beta=delta=1:",
          mx.allclose(nn.losses.smooth_l1_loss(mx.array([0.2, 3.0]), mx.zeros(2)),
                      nn.losses.huber_loss(mx.array([0.2, 3.0]), mx.zeros(2), reduction="mean"))
          .item())
    show("smooth_l1 beta=0.5", nn.losses.smooth_l1_loss(
        mx.array([0.2, 3.0, -1.0]), mx.zeros(3), beta=0.5, reduction="none"))
    show("huber delta=2", nn.losses.huber_loss(
        mx.array([0.2, 3.0, -1.0]), mx.zeros(3), delta=2.0, reduction="none"))


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, actions, hidden=32):
        super().__init__()
        self.actor = MLP([obs_dim, hidden, actions])
        self.critic = MLP([obs_dim, hidden, 1])

    def __call__(self, obs):
        return self.actor(obs), self.critic(obs).squeeze(-1)


def ppo_loss(model, obs, acts, old_logp, adv, returns, clip_eps=0.2):
    logits, values = model(obs)
    logp, entropy = log_prob(logits, acts)
    ratio = mx.exp(logp - old_logp)
    surrogate = mx.minimum(ratio * adv, mx.clip(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    value = nn.losses.smooth_l1_loss(values, returns, beta=1.0)
    return -surrogate.mean() + 0.5 * value - 0.01 * entropy.mean()


def rollout_grid(model, env, states, key, horizon):
    obs, acts, logps, vals, rews, dones = [], [], [], [], [], []
    for _ in range(horizon):
        key, sub = mx.random.split(key)
        o = env.observe(states)
        logits, v = model(o)
        a = mx.random.categorical(logits, key=sub)
        lp, _ = log_prob(logits, a)
        states, r, d = env.step(states, a)
        for lst, x in zip((obs, acts, logps, vals, rews, dones), (o, a, lp, v, r, d)):
            lst.append(x)
    _, last_v = model(env.observe(states))
    batch = [mx.stack(x) for x in (obs, acts, logps, vals, rews, dones)]
    return batch, last_v, states, key


def ppo():
    print("== PPO actor-critic (gridworld)")
    mx.random.seed(1)
    env = GridWorld()
    model = ActorCritic(env.n, 4)
    mx.eval(model.parameters())
    optimizer = optim.Adam(learning_rate=1e-2)
    loss_and_grad = nn.value_and_grad(model, ppo_loss)

    def update(obs, acts, old_logp, adv, returns):
        loss, grads = loss_and_grad(model, obs, acts, old_logp, adv, returns)
        grads, _ = optim.clip_grad_norm(grads, max_norm=0.5)
        optimizer.update(model, grads)
        return loss

    state = [model.state, optimizer.state]
    compiled = partial(mx.compile, inputs=state, outputs=state)(update)
    states, key = env.reset(16), mx.random.key(5)
    for it in range(8):
        batch, last_v, states, key = rollout_grid(model, env, states, key, 12)
        obs, acts, logps, vals, rews, dones = batch
        adv, returns = gae(rews, vals, last_v, dones.astype(mx.float32), 0.95, 0.9)
        adv = normalise(adv)
        flat = [x.reshape(-1, *x.shape[2:]) for x in (obs, acts, logps, adv, returns)]
        flat = [mx.stop_gradient(x) for x in flat]
        losses = []
        for _ in range(2):
            key, sub = mx.random.split(key)
            perm = mx.random.permutation(flat[1].size, key=sub)
            for start in range(0, perm.size, 96):
                ids = perm[start:start + 96]
                losses.append(compiled(*[x[ids] for x in flat]))
                mx.eval(state)
        logits, _ = model(flat[0])
        new_logp, _ = log_prob(logits, flat[1])
        log_ratio = new_logp - flat[2]
        approx_kl = ((mx.exp(log_ratio) - 1) - log_ratio).mean()
        clip_frac = (mx.abs(mx.exp(log_ratio) - 1) > 0.2).astype(mx.float32).mean()
        if it % 2 == 1:
            print(f"  iter {it}: episodes {dones.sum().item():3d} reward/step "
                  f"{rews.mean().item():.5f} loss {losses[-1].item():.5f} "
                  f"approx kl {approx_kl.item():.5f} clip fraction {clip_frac.item():.4f}")
    print("== compiled and eager PPO updates on one batch")
    results = []
    for use_compile in (False, True):
        mx.random.seed(2)
        model = ActorCritic(env.n, 4)
        optimizer = optim.Adam(learning_rate=1e-2)
        loss_and_grad = nn.value_and_grad(model, ppo_loss)
        state = [model.state, optimizer.state]
        step = partial(mx.compile, inputs=state, outputs=state)(update) if use_compile else update
        losses = []
        for _ in range(4):
            losses.append(step(*flat).item())
            mx.eval(state)
        print("  compiled" if use_compile else "  eager   ", " ".join(f"{v:.5f}" for v in losses))
        results.append(losses)
    print("same losses:", all(abs(a - b) < 1e-5 for a, b in zip(*results)))


class ReplayBuffer:
    """Transitions in preallocated mx arrays, written in place by slice assignment and
    sampled with `mx.random.randint`."""

    def __init__(self, capacity):
        self.capacity, self.size, self.pos = capacity, 0, 0
        self.states = mx.zeros((capacity,), dtype=mx.int32)
        self.actions = mx.zeros((capacity,), dtype=mx.int32)
        self.rewards = mx.zeros((capacity,))
        self.next_states = mx.zeros((capacity,), dtype=mx.int32)
        self.dones = mx.zeros((capacity,))

    def add(self, s, a, r, s2, d):
        n = s.size
        end = self.pos + n
        self.states[self.pos:end] = s
        self.actions[self.pos:end] = a
        self.rewards[self.pos:end] = r
        self.next_states[self.pos:end] = s2
        self.dones[self.pos:end] = d
        self.pos = end % self.capacity
        self.size = min(self.size + n, self.capacity)

    def sample(self, batch, key):
        ids = mx.random.randint(0, self.size, (batch,), key=key)
        return ids, (self.states[ids], self.actions[ids], self.rewards[ids],
                     self.next_states[ids], self.dones[ids])


def dqn():
    print("== DQN (gridworld)")
    mx.random.seed(3)
    env = GridWorld()
    q_net, target = MLP([env.n, 32, 4]), MLP([env.n, 32, 4])
    target.update(q_net.parameters())
    mx.eval(q_net.parameters(), target.parameters())
    optimizer = optim.Adam(learning_rate=5e-3)
    buffer = ReplayBuffer(256)
    gamma, tau = 0.9, 0.1

    def td_loss(model, s, a, r, s2, d):
        q = mx.take_along_axis(model(env.observe(s)), a[:, None], axis=1).squeeze(1)
        best_next = mx.max(target(env.observe(s2)), axis=1)
        y = mx.stop_gradient(r + gamma * (1 - d) * best_next)
        return nn.losses.huber_loss(q, y, reduction="mean")

    loss_and_grad = nn.value_and_grad(q_net, td_loss)
    states, key = env.reset(8), mx.random.key(9)
    print("argmax dtype", mx.argmax(q_net(env.observe(states)), axis=1).dtype,
          "randint dtype", mx.random.randint(0, 4, (2,), key=key).dtype)
    for it in range(40):
        eps = max(0.1, 1.0 - it / 25)
        key, k_explore, k_action, k_sample = mx.random.split(key, 4)
        greedy = mx.argmax(q_net(env.observe(states)), axis=1)
        explore = mx.random.uniform(shape=(8,), key=k_explore) < eps
        actions = mx.where(explore, mx.random.randint(0, 4, (8,), key=k_action), greedy)
        nxt, r, done = env.step(states, actions)
        buffer.add(states, actions, r, mx.where(done, env.goal, nxt), done)
        states = nxt
        if it == 0:
            print("action dtype", actions.dtype, "buffer", buffer.size, buffer.pos)
        if buffer.size >= 32:
            ids, batch = buffer.sample(32, k_sample)
            loss, grads = loss_and_grad(q_net, *batch)
            optimizer.update(q_net, grads)
            target.update(tree_map(lambda t, o: (1 - tau) * t + tau * o,
                                   target.parameters(), q_net.parameters()))
            mx.eval(q_net.parameters(), target.parameters(), optimizer.state)
            if it % 8 == 7:
                gap = max(mx.abs(a - b).max().item() for (_, a), (_, b) in
                          zip(tree_flatten(q_net.parameters()), tree_flatten(target.parameters())))
                print(f"  step {it:2d}: eps {eps:.2f} buffer {buffer.size:3d} loss "
                      f"{loss.item():.5f} target gap {gap:.4f} first ids {ids[:4].tolist()}")
    q = q_net(env.observe(mx.arange(env.n)))
    show("max Q (rows)", mx.max(q, axis=1).reshape(4, 4)[:2])
    show("buffer rewards sum", buffer.rewards.sum())
    show("buffer done count", buffer.dones.sum())


def mistakes():
    print("== mistakes")
    logits = mx.zeros((4, 3))
    acts = mx.array([0, 1, 2, 1])
    cases = [
        lambda: mx.random.categorical(logits, shape=(4,), num_samples=2),
        lambda: mx.random.categorical(logits, shape=(3,)),
        lambda: mx.take_along_axis(logits, acts, axis=1),
        lambda: mx.take_along_axis(logits, acts[:, None], axis=2),
        lambda: mx.cumsum(acts, axis=1),
        lambda: mx.clip(logits),
        lambda: mx.random.randint(0, 4, (3,), dtype=mx.float32),
        lambda: nn.losses.huber_loss(mx.zeros(4), mx.zeros((4, 2))),
        lambda: nn.losses.smooth_l1_loss(mx.zeros(4), mx.zeros(3)),
        lambda: logits[mx.array([0.5])],
        lambda: mx.argmax(logits, axis=2),
        lambda: mx.max(logits, axis=(0, 0)),
        lambda: mx.var(logits, axis=3),
        lambda: mx.random.split(mx.random.key(0), num=0).shape,
        lambda: mx.grad(lambda x: x * 2)(mx.ones(3)),
        lambda: nn.value_and_grad(MLP([2, 1]), lambda m, x: m(x))(MLP([2, 1]), mx.ones((2, 2))),
        lambda: logits.at[acts].add(mx.ones((4, 4))),
        lambda: mx.minimum(logits, mx.zeros((2, 3))),
    ]
    for case in cases:
        try:
            print("  ok", case())
        except Exception as e:  # noqa: BLE001  (printing what was raised is the point)
            print(f"  {type(e).__name__}: {e}")


def main():
    sampling()
    returns_and_advantages()
    environments()
    reinforce()
    ppo()
    dqn()
    mistakes()


if __name__ == "__main__":
    main()
