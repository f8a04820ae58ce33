"""word2vec skip-gram with negative sampling on a tiny generated corpus: two embedding
tables, log-sigmoid scores of true context words against words drawn from the unigram
distribution raised to 3/4, Adam; then nearest neighbours by cosine similarity."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

topics = {
    "animals": "cat dog horse cow sheep goat".split(),
    "food": "bread cheese apple pear soup rice".split(),
    "weather": "rain snow wind sun cloud storm".split(),
}
verbs = "sees likes wants finds".split()
words = sorted({w for ws in topics.values() for w in ws} | set(verbs) | {"the"})
index = {w: i for i, w in enumerate(words)}
print(len(words), words[:8])

corpus = []
names = list(topics)
for _ in range(400):
    topic = topics[names[torch.randint(0, 3, (1,)).item()]]
    a, b = torch.randint(0, 6, (2,)).tolist()
    verb = verbs[torch.randint(0, 4, (1,)).item()]
    corpus += ["the", topic[a], verb, "the", topic[b]]
ids = torch.tensor([index[w] for w in corpus])
counts = torch.bincount(ids, minlength=len(words)).float()
noise = counts.pow(0.75)
noise = noise / noise.sum()
print(len(corpus), counts[:6].tolist(), f"{noise.max().item():.4f}")

window = 3
centres, contexts = [], []
for offset in range(-window, window + 1):
    if offset == 0:
        continue
    lo, hi = max(0, -offset), len(ids) - max(0, offset)
    centres.append(ids[lo:hi])
    contexts.append(ids[lo + offset:hi + offset])
centres, contexts = torch.cat(centres), torch.cat(contexts)
print(centres.shape, contexts[:5].tolist())


class SkipGram(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.inp = nn.Embedding(vocab, dim)
        self.out = nn.Embedding(vocab, dim)
        nn.init.uniform_(self.inp.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.out.weight)

    def forward(self, centre, context, negatives):
        v = self.inp(centre)                               # (B, D)
        pos = (v * self.out(context)).sum(-1)              # (B,)
        neg = torch.bmm(self.out(negatives), v.unsqueeze(2)).squeeze(2)  # (B, K)
        return -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(-1)).mean()


model = SkipGram(len(words), 16)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(1, 9):
    perm = torch.randperm(len(centres))
    total = 0.0
    for start in range(0, len(perm), 256):
        batch = perm[start:start + 256]
        negatives = torch.multinomial(noise, len(batch) * 5, replacement=True).view(-1, 5)
        optimizer.zero_grad()
        loss = model(centres[batch], contexts[batch], negatives)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(batch)
    print(f"epoch {epoch} loss {total / len(perm):.4f}")

emb = F.normalize(model.inp.weight.detach(), dim=1)
for word in ("cat", "rain", "bread", "sees"):
    sims = emb @ emb[index[word]]
    best = sims.topk(4).indices[1:].tolist()
    print(word, "->", [words[i] for i in best], f"{sims[best[0]].item():.3f}")
