"""A character-level GPT trained for a few hundred steps on text the program writes itself."""

import math
import random

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(1337)

# -- the data: sentences from a small grammar, so there is structure to learn --------
rng = random.Random(7)
subjects = ["the cat", "a dog", "my friend", "the old king", "she", "he"]
verbs = ["sees", "likes", "finds", "draws", "wants"]
objects = ["the moon", "a red ball", "some bread", "the sea", "two birds"]
text = " ".join(
    f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}." for _ in range(400)
)
chars = sorted(set(text))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}


def encode(s):
    return [stoi[c] for c in s]


def decode(ids):
    return "".join(itos[i] for i in ids)


data = torch.tensor(encode(text), dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
print(f"{len(text)} characters, vocabulary {vocab_size}: {''.join(chars)!r}")
print(data[:24])

# -- model and training settings -----------------------------------------------------
BATCH, CONTEXT, WIDTH, HEADS, LAYERS = 12, 24, 32, 4, 2
STEPS, EVAL_EVERY, EVAL_BATCHES = 300, 100, 4
DROPOUT, LR = 0.1, 3e-3


def sample_batch(split):
    """BATCH random windows of CONTEXT characters and the same windows shifted by one."""
    source = train_data if split == "train" else val_data
    starts = torch.randint(len(source) - CONTEXT, (BATCH,))
    x = torch.stack([source[s:s + CONTEXT] for s in starts])
    y = torch.stack([source[s + 1:s + 1 + CONTEXT] for s in starts])
    return x, y


class SelfAttention(nn.Module):
    """Multi-head causal self-attention; `fused` uses scaled_dot_product_attention,
    otherwise the scores are masked and normalised by hand."""

    def __init__(self, fused: bool):
        super().__init__()
        self.fused = fused
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=not fused)
        self.out = nn.Linear(WIDTH, WIDTH)
        self.drop = nn.Dropout(DROPOUT)
        future = torch.triu(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool), diagonal=1)
        self.register_buffer("future", future, persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (t.reshape(B, T, HEADS, C // HEADS).transpose(1, 2)
                   for t in self.qkv(x).chunk(3, dim=-1))
        if self.fused:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(C // HEADS)
            scores = scores.masked_fill(self.future[:T, :T], float("-inf"))
            y = self.drop(scores.softmax(dim=-1)) @ v
        return self.drop(self.out(y.transpose(1, 2).reshape(B, T, C)))


class Block(nn.Module):
    def __init__(self, fused: bool):
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH)
        self.attn = SelfAttention(fused)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(),
                                 nn.Linear(4 * WIDTH, WIDTH), nn.Dropout(DROPOUT))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class CharGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, WIDTH)
        self.positions = nn.Parameter(torch.zeros(CONTEXT, WIDTH))
        self.blocks = nn.ModuleList([Block(fused=i % 2 == 1) for i in range(LAYERS)])
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, vocab_size, bias=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets=None):
        x = self.tokens(idx) + self.positions[: idx.shape[1]]
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())

    @torch.no_grad()
    def sample(self, prompt, n):
        idx = prompt
        for _ in range(n):
            logits, _ = self(idx[:, -CONTEXT:])
            nxt = torch.multinomial(F.softmax(logits[:, -1], dim=-1), num_samples=1)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


@torch.no_grad()
def mean_loss(model, split):
    model.eval()
    total = sum(model(*sample_batch(split))[1].item() for _ in range(EVAL_BATCHES))
    model.train()
    return total / EVAL_BATCHES


model = CharGPT()
print(sum(p.numel() for p in model.parameters()), "parameters")
print(model.blocks[1])
matrices = [p for p in model.parameters() if p.dim() >= 2]
others = [p for p in model.parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1},
                               {"params": others, "weight_decay": 0.0}],
                              lr=LR, betas=(0.9, 0.95))
print(f"loss before training {model(*sample_batch('train'))[1].item():.4f} "
      f"(a uniform guess scores {math.log(vocab_size):.4f})")

for step in range(STEPS + 1):
    if step % EVAL_EVERY == 0:
        print(f"step {step}: train {mean_loss(model, 'train'):.4f}, "
              f"val {mean_loss(model, 'val'):.4f}")
    if step == STEPS:
        break
    x, y = sample_batch("train")
    _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if step % 50 == 0:
        print(f"  step {step:3d}  loss {loss.item():.4f}  grad norm {norm.item():.4f}")

model.eval()
prompt = torch.tensor([encode("the ")], dtype=torch.long)
print(repr(decode(model.sample(prompt, 60)[0].tolist())))
