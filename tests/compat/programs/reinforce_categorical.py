"""Policy gradient (REINFORCE with a running baseline) on a tiny corridor world, with the
policy a torch.distributions.Categorical over three actions."""

import torch
from torch import nn, optim
from torch.distributions import Categorical

torch.manual_seed(7)

LENGTH, HORIZON = 4, 10  # states 0..3, the goal at 3; actions: left, stay, right


def step(state: int, action: int):
    nxt = min(max(state + action - 1, 0), LENGTH - 1)
    reward = 1.0 if nxt == LENGTH - 1 else -0.1
    return nxt, reward, nxt == LENGTH - 1


def features(state: int):
    return nn.functional.one_hot(torch.tensor(state), LENGTH).float()


policy = nn.Sequential(nn.Linear(LENGTH, 16), nn.ReLU(), nn.Linear(16, 3))
opt = optim.Adam(policy.parameters(), lr=0.05)
gamma, baseline = 0.95, 0.0

for episode in range(60):
    state, log_probs, rewards, entropies = 0, [], [], []
    for _ in range(HORIZON):
        dist = Categorical(logits=policy(features(state)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        entropies.append(dist.entropy())
        state, reward, done = step(state, action.item())
        rewards.append(reward)
        if done:
            break
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        returns.insert(0, g)
    returns = torch.tensor(returns)
    baseline = 0.9 * baseline + 0.1 * returns.mean().item()
    loss = -(torch.stack(log_probs) * (returns - baseline)).sum() \
        - 0.01 * torch.stack(entropies).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if episode % 6 == 0 or episode == 59:
        print(f"episode {episode:2d}  steps {len(rewards):2d}  return {returns[0].item():.4f}  "
              f"loss {loss.item():.4f}")

with torch.no_grad():
    probs = torch.stack([Categorical(logits=policy(features(s))).probs for s in range(LENGTH)])
    print("policy", probs)
    batch = Categorical(logits=policy(torch.eye(LENGTH)))
    print(batch.batch_shape, batch.event_shape, batch.sample((4,)))
    print("greedy", batch.probs.argmax(-1), "entropy", batch.entropy())
    print(batch.log_prob(torch.tensor([2, 2, 2, 1])))
