"""A small Transformer text classifier: encoder layers with padding masks, a standalone
multi-head attention, an EmbeddingBag baseline, a weighted sampler, AdamW with warmup."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler

torch.manual_seed(0)
VOCAB, PAD, MAXLEN, CLASSES = 50, 0, 12, 3

lengths = torch.randint(3, MAXLEN + 1, (96,))
tokens = torch.randint(1, VOCAB, (96, MAXLEN))
mask = torch.arange(MAXLEN)[None, :] >= lengths[:, None]
tokens = tokens.masked_fill(mask, PAD)
labels = (tokens.sum(1) + lengths) % CLASSES
print("label counts", torch.bincount(labels, minlength=CLASSES).tolist())


class PositionalEncoding(nn.Module):
    def __init__(self, d, maxlen):
        super().__init__()
        pos = torch.arange(maxlen).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(maxlen, d)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Classifier(nn.Module):
    def __init__(self, d=32, heads=4, layers=2, norm_first=False):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d, padding_idx=PAD)
        self.pos = PositionalEncoding(d, MAXLEN)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=64, dropout=0.1,
                                           batch_first=True, norm_first=norm_first,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x):
        pad = x == PAD
        h = self.encoder(self.pos(self.embed(x) * math.sqrt(self.embed.embedding_dim)),
                         src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


model = Classifier()
print("parameters", sum(p.numel() for p in model.parameters()))
print([n for n, _ in model.named_parameters()][:8])
weights = 1.0 / torch.bincount(labels, minlength=CLASSES).float()
sampler = WeightedRandomSampler(weights[labels], num_samples=96, replacement=True,
                                generator=torch.Generator().manual_seed(1))
loader = DataLoader(TensorDataset(tokens, labels), batch_size=16, sampler=sampler)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 5))
for epoch in range(3):
    model.train()
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        total += loss.item()
    model.eval()
    with torch.no_grad():
        acc = (model(tokens).argmax(1) == labels).float().mean().item()
    print(f"epoch {epoch} loss {total / len(loader):.4f} norm {norm:.4f} "
          f"lr {sched.get_last_lr()[0]:.5f} acc {acc:.4f}")

# a pre-norm encoder in eval mode, and the attention weights of a standalone layer
pre = Classifier(norm_first=True).eval()
with torch.no_grad():
    print("pre-norm logits", pre(tokens[:2]))
mha = nn.MultiheadAttention(16, 2, batch_first=True)
q = torch.randn(2, 4, 16)
kv = torch.randn(2, 5, 16)
out, w = mha(q, kv, kv, key_padding_mask=torch.tensor([[False] * 4 + [True], [False] * 5]))
print("mha", out.shape, w.shape, (w.sum(-1) - 1).abs().max() < 1e-6)
print("weights row", w[0, 0])
out2, w2 = mha(q, kv, kv, average_attn_weights=False)
print("per-head", w2.shape, w2[1, 1, 0])
causal = nn.Transformer.generate_square_subsequent_mask(4)
print("causal", causal)
out3, _ = mha(q, q, q, attn_mask=causal, need_weights=False)
print("causal out", out3[0, 0, :4])
out3.sum().backward()
print("in_proj grad", mha.in_proj_weight.grad.norm())

# bag-of-words baseline
bag = nn.EmbeddingBag(VOCAB, 8, mode="mean", padding_idx=PAD)
flat = tokens[:4].flatten()
offsets = torch.arange(0, 4 * MAXLEN, MAXLEN)
print("bag", bag(flat, offsets).shape, bag(tokens[:4])[:, :3])
sbag = nn.EmbeddingBag(VOCAB, 4, mode="sum")
print("sum bag", sbag(torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4]),
                      per_sample_weights=torch.linspace(0.1, 0.8, 8)))
mbag = nn.EmbeddingBag(VOCAB, 4, mode="max")
r = mbag(torch.tensor([[1, 2, 3], [4, 5, 6]]))
r.sum().backward()
print("max bag", r, mbag.weight.grad.nonzero().shape)
