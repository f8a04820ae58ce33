"""A GRU encoder-decoder learning to reverse short digit sequences, trained with teacher
forcing (the decoder reads the true previous token half of the time) and decoded
greedily, as the PyTorch seq2seq tutorial does."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)

SOS, EOS, VOCAB, LENGTH = 10, 11, 12, 5


def make_pairs(n: int):
    src = torch.randint(0, 10, (n, LENGTH))
    tgt = torch.cat([src.flip(1), torch.full((n, 1), EOS)], dim=1)
    return src, tgt


class Encoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)

    def forward(self, src):
        outputs, h = self.gru(self.embedding(src))
        return outputs, h


class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def step(self, token, h):
        output, h = self.gru(F.relu(self.embedding(token).unsqueeze(1)), h)
        return F.log_softmax(self.out(output.squeeze(1)), dim=-1), h


hidden = 24
encoder, decoder = Encoder(hidden), Decoder(hidden)
params = list(encoder.parameters()) + list(decoder.parameters())
optimizer = torch.optim.Adam(params, lr=0.01)
src, tgt = make_pairs(256)
print(src[:2].tolist(), tgt[:2].tolist())
print(encoder)
print(decoder)


def run_batch(src, tgt, teacher_forcing):
    _, h = encoder(src)
    token = torch.full((src.shape[0],), SOS)
    loss = 0.0
    for t in range(tgt.shape[1]):
        logp, h = decoder.step(token, h)
        loss = loss + F.nll_loss(logp, tgt[:, t])
        token = tgt[:, t] if teacher_forcing else logp.argmax(-1)
    return loss / tgt.shape[1]


for step in range(1, 151):
    batch = torch.randint(0, len(src), (32,))
    teacher = random.random() < 0.5
    optimizer.zero_grad()
    loss = run_batch(src[batch], tgt[batch], teacher)
    loss.backward()
    nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
    if step % 25 == 0:
        print(f"step {step:3d} teacher={teacher!s:5s} nll {loss.item():.4f}")

with torch.no_grad():
    test_src, test_tgt = make_pairs(64)
    _, h = encoder(test_src)
    token = torch.full((64,), SOS)
    decoded = []
    for _ in range(LENGTH + 1):
        logp, h = decoder.step(token, h)
        token = logp.argmax(-1)
        decoded.append(token)
    decoded = torch.stack(decoded, 1)
    exact = (decoded == test_tgt).all(1).sum().item()
    per_token = (decoded == test_tgt).float().mean().item()
print(f"{exact} of 64 reversed exactly; token accuracy {per_token:.4f}")
print(test_src[:3].tolist(), decoded[:3].tolist())
