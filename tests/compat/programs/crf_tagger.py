"""A BiLSTM-CRF named-entity tagger on synthetic tagged sentences (batched forward algorithm,
gold-path scores, Viterbi decoding, per-tag metrics and the usual packing mistakes)."""

import math

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "<START>", "<STOP>"]
T = len(TAGS)
START, STOP = T - 2, T - 1
PAD = 0
VOCAB = 40
IMPOSSIBLE = -10000.0

# ---------------------------------------------------------------- synthetic data
gen = torch.Generator().manual_seed(1234)


def make_sentence(length):
    """A tag sequence obeying BIO (I-X only after B-X or I-X), and words drawn from the tags."""
    tags = []
    for _ in range(length):
        r = torch.rand((), generator=gen).item()
        prev = tags[-1] if tags else 0
        if prev in (1, 2) and r < 0.5:
            tags.append(2)
        elif prev in (3, 4) and r < 0.5:
            tags.append(4)
        elif r < 0.15:
            tags.append(1)
        elif r < 0.3:
            tags.append(3)
        else:
            tags.append(0)
    tags = torch.tensor(tags)
    # each tag owns a band of the vocabulary, with a little noise
    base = torch.tensor([1, 11, 17, 23, 29])[tags]
    words = base + torch.randint(0, 6, (length,), generator=gen)
    noise = torch.rand(length, generator=gen) < 0.1
    words = torch.where(noise, torch.randint(1, VOCAB, (length,), generator=gen), words)
    return words, tags


lengths_all = torch.randint(3, 12, (96,), generator=gen)
data = [make_sentence(int(n)) for n in lengths_all]
print("sentences:", len(data), "tokens:", int(lengths_all.sum()),
      "max length:", int(lengths_all.max()))
all_tags = torch.cat([t for _, t in data])
print("tag counts:", torch.bincount(all_tags, minlength=5).tolist())


def batchify(items):
    """Pad words and tags to the longest sentence, sorted by decreasing length for packing."""
    items = sorted(items, key=lambda p: -len(p[0]))
    lengths = torch.tensor([len(w) for w, _ in items])
    L = int(lengths.max())
    words = torch.full((len(items), L), PAD, dtype=torch.long)
    tags = torch.zeros((len(items), L), dtype=torch.long)
    for i, (w, t) in enumerate(items):
        words[i, : len(w)] = w
        tags[i, : len(t)] = t
    return words, tags, lengths


def length_mask(lengths, L):
    return torch.arange(L)[None, :] < lengths[:, None]


train, test = data[:80], data[80:]
batches = [batchify(train[i : i + 16]) for i in range(0, len(train), 16)]
w0, t0, l0 = batches[0]
print("batch shapes:", tuple(w0.shape), tuple(t0.shape), l0.tolist())
m0 = length_mask(l0, w0.shape[1])
print("mask dtype:", m0.dtype, "real tokens:", int(m0.sum()), "padding:", int((~m0).sum()))


# ---------------------------------------------------------------- model
class BiLSTMCRF(nn.Module):
    def __init__(self, vocab, n_tags, emb=16, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.lstm = nn.LSTM(emb, hidden // 2, batch_first=True, bidirectional=True)
        self.to_tags = nn.Linear(hidden, n_tags)
        # transitions[i, j] = score of moving from tag j to tag i
        self.transitions = nn.Parameter(torch.randn(n_tags, n_tags) * 0.1)
        with torch.no_grad():
            self.transitions[START, :] = IMPOSSIBLE
            self.transitions[:, STOP] = IMPOSSIBLE
            # BIO: I-PER only after B-PER / I-PER; I-LOC only after B-LOC / I-LOC
            for i_tag, allowed in ((2, (1, 2)), (4, (3, 4))):
                for j in range(n_tags):
                    if j not in allowed:
                        self.transitions[i_tag, j] = IMPOSSIBLE

    def emissions(self, words, lengths):
        x = self.embed(words)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=True)
        out, _ = self.lstm(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        return self.to_tags(out), out_lengths

    def log_partition(self, feats, mask):
        """Forward algorithm: logsumexp over previous tags, kept unchanged at padded steps."""
        B, L, _ = feats.shape
        alpha = torch.full((B, T), IMPOSSIBLE)
        alpha[:, START] = 0.0
        for t in range(L):
            # (B, 1, T) + (T, T) + (B, T, 1) -> (B, T, T), reduce over previous tag
            scores = alpha.unsqueeze(1) + self.transitions.unsqueeze(0) + feats[:, t].unsqueeze(2)
            new = torch.logsumexp(scores, dim=2)
            alpha = torch.where(mask[:, t].unsqueeze(1), new, alpha)
        return torch.logsumexp(alpha + self.transitions[STOP], dim=1)

    def gold_score(self, feats, tags, mask):
        B, L, _ = feats.shape
        emit = feats.gather(2, tags.unsqueeze(2)).squeeze(2)  # (B, L)
        prev = torch.cat([torch.full((B, 1), START, dtype=torch.long), tags[:, :-1]], dim=1)
        trans = self.transitions[tags, prev]  # advanced indexing, (B, L)
        score = ((emit + trans) * mask).sum(1)
        last = tags[torch.arange(B), mask.sum(1) - 1]
        return score + self.transitions[STOP, last]

    def nll(self, words, tags, lengths):
        feats, _ = self.emissions(words, lengths)
        mask = length_mask(lengths, words.shape[1])
        return (self.log_partition(feats, mask) - self.gold_score(feats, tags, mask)).mean()

    def viterbi(self, words, lengths):
        feats, _ = self.emissions(words, lengths)
        B, L, _ = feats.shape
        mask = length_mask(lengths, L)
        score = torch.full((B, T), IMPOSSIBLE)
        score[:, START] = 0.0
        backpointers = []
        for t in range(L):
            cand = score.unsqueeze(1) + self.transitions.unsqueeze(0)  # (B, next, prev)
            best, idx = cand.max(dim=2)
            new = best + feats[:, t]
            score = torch.where(mask[:, t].unsqueeze(1), new, score)
            # at padded steps point each tag back to itself so backtracking passes through
            keep = torch.arange(T).expand(B, T)
            backpointers.append(torch.where(mask[:, t].unsqueeze(1), idx, keep))
        final = score + self.transitions[STOP]
        best_score, best_last = final.max(dim=1)
        bp = torch.stack(backpointers, dim=1)  # (B, L, T)
        path = [best_last]
        for t in range(L - 1, 0, -1):
            path.append(bp[:, t].gather(1, path[-1].unsqueeze(1)).squeeze(1))
        path = torch.stack(path, dim=1).flip(1)  # (B, L)
        return best_score, path.masked_fill(~mask, -1)


model = BiLSTMCRF(VOCAB, T)
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()))
print("transitions[I-PER]:", [f"{v:.1f}" for v in model.transitions[2].tolist()])

# ---------------------------------------------------------------- sanity checks
with torch.no_grad():
    feats, out_len = model.emissions(w0[:3], l0[:3])
    print("emissions:", tuple(feats.shape), "lengths back:", out_len.tolist(), out_len.dtype)
    n_pad = int(w0.shape[1] - l0[2])
    print("padded emissions are the bias:",
          torch.allclose(feats[2, l0[2]:], model.to_tags.bias.expand(n_pad, T)))
    m3 = length_mask(l0[:3], w0.shape[1])
    logZ = model.log_partition(feats, m3)
    gold = model.gold_score(feats, t0[:3], m3)
    print("log Z:", [f"{v:.4f}" for v in logZ.tolist()])
    print("gold :", [f"{v:.4f}" for v in gold.tolist()])
    print("gold <= log Z:", bool((gold <= logZ + 1e-4).all()))

    # brute force over all paths of a short sentence agrees with the forward algorithm
    n = 3
    f1 = feats[:1, :n]
    real = [0, 1, 2, 3, 4]
    total = []
    for a in real:
        for b in real:
            for c in real:
                tg = torch.tensor([[a, b, c]])
                total.append(model.gold_score(f1, tg, torch.ones(1, n, dtype=torch.bool)))
    brute = torch.logsumexp(torch.cat(total), dim=0)
    fwd = model.log_partition(f1, torch.ones(1, n, dtype=torch.bool))
    print(f"brute force {brute.item():.4f} forward {fwd.item():.4f}")

# ---------------------------------------------------------------- training
opt = torch.optim.Adam(model.parameters(), lr=0.03)
for epoch in range(6):
    total, norms = 0.0, []
    for words, tags, lengths in batches:
        opt.zero_grad()
        loss = model.nll(words, tags, lengths)
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0).item())
        opt.step()
        total += loss.item()
    if epoch in (0, 2, 5):
        print(f"epoch {epoch}: nll {total / len(batches):.4f}  max grad norm {max(norms):.4f}")
print("loss grad_fn:", type(loss.grad_fn).__name__)


def node(t):
    return type(t.grad_fn).__name__


x0 = model.embed(w0)
packed0 = pack_padded_sequence(x0, l0, batch_first=True)
out0, (h0, c0) = model.lstm(packed0)
padded0, _ = pad_packed_sequence(out0, batch_first=True)
print("graph:", node(x0), node(packed0.data), node(out0.data), node(h0), node(padded0))
print("unpacked BiLSTM:", node(model.lstm(x0)[0]), "one direction:",
      node(nn.LSTM(16, 8)(x0.transpose(0, 1))[0]))
gru = nn.GRU(16, 8, batch_first=True, bidirectional=True)
print("BiGRU instead:", node(gru(x0)[0]), node(gru(packed0)[0].data), tuple(gru(x0)[1].shape))
start_grad = model.transitions.grad[START].abs().max().item()
print("transition grad at impossible START row:", f"{start_grad:.4g}")

# ---------------------------------------------------------------- evaluation
tw, tt, tl = batchify(test)
with torch.no_grad():
    best, pred = model.viterbi(tw, tl)
mask = length_mask(tl, tw.shape[1])
print("viterbi scores:", [f"{v:.3f}" for v in best[:4].tolist()])
print("first prediction:", pred[0].tolist())
print("first gold      :", tt[0].masked_fill(~mask[0], -1).tolist())
gold_flat, pred_flat = tt[mask], pred[mask]
print("token accuracy:", f"{(gold_flat == pred_flat).float().mean().item():.4f}")

n_real = 5
conf = torch.bincount(gold_flat * n_real + pred_flat, minlength=n_real * n_real)
conf = conf.reshape(n_real, n_real)
print("confusion matrix (rows gold, cols predicted):")
print(conf)
tp = conf.diag().float()
precision = tp / conf.sum(0).clamp(min=1)
recall = tp / conf.sum(1).clamp(min=1)
f1 = torch.where(precision + recall > 0, 2 * precision * recall / (precision + recall),
                 torch.zeros(()))
for i in range(n_real):
    p_i, r_i, f_i = precision[i].item(), recall[i].item(), f1[i].item()
    print(f"{TAGS[i]:6s} p={p_i:.4f} r={r_i:.4f} f1={f_i:.4f}")
print("macro F1:", f"{f1.mean().item():.4f}")
print("pred counts:", torch.bincount(pred_flat, minlength=n_real).tolist())
bad_i = (pred[:, 1:] == 2) & ~torch.isin(pred[:, :-1], torch.tensor([1, 2]))
print("BIO violations:", int(bad_i.sum()))

# ---------------------------------------------------------------- numerics of the pieces
x = torch.tensor([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0], [-1.0, 0.0, 0.0, -2.0]])
v, i = x.max(dim=1)
print("max ties:", v.tolist(), i.tolist(), "argmax:", x.argmax(1).tolist(),
      "argmin:", x.argmin(1).tolist())
v, i = x.min(dim=1)
print("min ties:", v.tolist(), i.tolist())
inf = float("-inf")
rows = torch.tensor([[inf, inf, inf], [0.0, inf, inf], [1.0, 2.0, inf]])
print("logsumexp rows:", torch.logsumexp(rows, dim=1))
print("logsumexp -inf grad:")
r = rows.clone().requires_grad_()
torch.logsumexp(r, dim=1).sum().backward()
print(r.grad)
print("max over all -inf:", torch.tensor([inf, inf]).max(0))
scores = torch.randn(2, 5)
m = torch.tensor([[True, True, False, False, False], [True, True, True, True, False]])
masked = scores.masked_fill(~m, inf)
print("masked softmax:", masked.softmax(-1))
print("where -inf:", torch.where(m, scores, torch.tensor(inf)).logsumexp(-1))
print("-10000 vs -inf:", f"{torch.logsumexp(torch.tensor([0.0, IMPOSSIBLE]), 0).item():.6f}",
      f"{torch.logsumexp(torch.tensor([0.0, inf]), 0).item():.6f}",
      math.isinf(torch.tensor(inf).exp().log().item()))

# ---------------------------------------------------------------- typical mistakes
emb = model.embed(tw)
try:
    pack_padded_sequence(emb, tl.flip(0), batch_first=True, enforce_sorted=True)
except Exception as e:
    print(type(e).__name__, ":", e)
packed = pack_padded_sequence(emb, tl.flip(0), batch_first=True, enforce_sorted=False)
print("unsorted ok:", packed.sorted_indices.tolist(), packed.unsorted_indices.tolist())
print("batch sizes:", packed.batch_sizes.tolist(), packed.batch_sizes.dtype)
# float or int32 lengths are converted to int64 on the CPU, the batch sizes are the same
for lens in (tl.float(), tl.int()):
    p = pack_padded_sequence(emb, lens, batch_first=True)
    print("lengths", lens.dtype, "->", p.batch_sizes.tolist(), p.batch_sizes.dtype)
try:
    pack_padded_sequence(emb, [int(n) for n in tl], batch_first=True)
    print("list lengths ok")
except Exception as e:
    print(type(e).__name__, ":", e)
try:
    bad = tl.clone()
    bad[-1] = 0
    pack_padded_sequence(emb, bad, batch_first=True)
except Exception as e:
    print(type(e).__name__, ":", e)
with torch.no_grad():
    g32 = model.transitions.gather(1, torch.tensor([[0, 1]], dtype=torch.int32))
    print("gather with int32 index:", [f"{v:.4f}" for v in g32.flatten().tolist()], g32.dtype)
lse_int = torch.logsumexp(torch.tensor([1, 2, 3]), dim=0)
print("logsumexp of ints:", f"{lse_int.item():.5f}", lse_int.dtype)
# preallocated Viterbi buffers: max(dim) writes into out= tensors of exactly its dtypes
cand = torch.randn(4, T, T)
vals, idx = torch.empty(4, T), torch.empty(4, T, dtype=torch.long)
r = torch.max(cand, 2, out=(vals, idx))
print(type(r).__name__, r.indices is idx, idx[0].tolist())
for bad in ((torch.empty(0), torch.empty(0, dtype=torch.int32)),
            (torch.empty(0, dtype=torch.float64), torch.empty(0, dtype=torch.long))):
    try:
        torch.max(cand, 2, out=bad)
    except Exception as e:
        print(type(e).__name__, ":", e)
try:
    torch.argmax(cand, 2, out=torch.empty(0, dtype=torch.int32))
except Exception as e:
    print(type(e).__name__, ":", e)
# log Z accumulated into a float64 buffer: the float32 exponentials are summed in double
z64 = torch.empty(0, dtype=torch.float64)
torch.logsumexp(cand[0], 1, out=z64)
print("log Z into float64:", [f"{v:.6f}" for v in z64.tolist()], z64.dtype)
try:
    torch.logsumexp(cand[0], 1, out=torch.empty(0, dtype=torch.long))
except Exception as e:
    print(type(e).__name__, ":", e)
try:
    torch.log_softmax(cand, 2, out=torch.empty(0, dtype=torch.float64))
except Exception as e:
    print(type(e).__name__, ":", e)
try:
    torch.cummax(cand[0], 0, out=(torch.empty(0), torch.empty(0, dtype=torch.int32)))
except Exception as e:
    print(type(e).__name__, ":", e)
try:
    scores.masked_fill(m.long(), inf)
except Exception as e:
    print(type(e).__name__, ":", e)
