"""A fastText-style bag-of-words text classifier written in plain torch: a vocabulary
built with torch.unique (sorted, return_inverse, return_counts), n-gram hashing into
buckets with int64 shifts, xor and remainder (wrapping on overflow), padding and packing
of token ids, nn.EmbeddingBag in 'sum' / 'mean' / 'max' modes with offsets (include_last_offset
both ways), per_sample_weights, padding_idx, max_norm, sparse gradients with SparseAdam,
F.embedding_bag, from_pretrained, TF-IDF with sparse COO tensors and torch.sparse.mm,
cosine search with topk, length bucketing with searchsorted / bucketize, and a few training
steps with label-smoothed cross-entropy; then the usual mistakes."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_sequence, pad_sequence

torch.manual_seed(0)

docs = [
    ("the cat sat on the mat", 0),
    ("a dog ran in the park", 0),
    ("the cat and the dog play", 0),
    ("stocks fell as markets slid", 1),
    ("the market rallied on strong earnings", 1),
    ("bonds and stocks rose today", 1),
    ("rain and wind hit the coast", 2),
    ("sunny skies and warm wind", 2),
    ("a storm brought heavy rain", 2),
]
words = [w for text, _ in docs for w in text.split()]
# words -> integer codes through a sorted set, then torch.unique over the codes
alphabet = sorted(set(words))
codes = torch.tensor([alphabet.index(w) for w in words])
vocab_ids, inverse, counts = torch.unique(codes, sorted=True, return_inverse=True,
                                          return_counts=True)
print("vocab", vocab_ids.shape, vocab_ids.dtype, inverse[:8].tolist(), counts.max().item())
print("most common", [alphabet[i] for i in counts.topk(3).indices.tolist()])
u2, c2 = torch.unique_consecutive(torch.tensor([3, 3, 1, 1, 1, 2, 3]), return_counts=True)
print("consecutive", u2.tolist(), c2.tolist())

# token id sequences (1-based, 0 is padding)
seqs, labels = [], []
start = 0
for text, label in docs:
    n = len(text.split())
    seqs.append(inverse[start:start + n] + 1)
    labels.append(label)
    start += n
labels = torch.tensor(labels)
V = len(alphabet) + 1

# n-gram hashing into buckets: int64 arithmetic that wraps on overflow
BUCKETS = 64
def bigram_hash(ids):
    a, b = ids[:-1], ids[1:]
    h = (a * 1000003) ^ (b << 17)
    h = h * 2654435761 + 0x7FFFFFFF
    h = torch.bitwise_xor(h, h >> 13)
    return torch.remainder(h, BUCKETS) + V

big = torch.tensor([2**62, -2**62 - 5, 12345])
print("wrap", (big * 4).tolist(), (big << 3).tolist(), torch.remainder(big, 7).tolist(),
      torch.fmod(big, 7).tolist())
# FNV-1a over (id, position) pairs: a 64-bit offset basis above 2**63 wraps into int64
def fnv1a(ids):
    h = torch.zeros_like(ids) ^ 0xCBF29CE484222325
    for part in (ids, torch.arange(len(ids))):
        h = (h ^ part) * 0x100000001B3
    return h


print("fnv", fnv1a(seqs[0][:3]).tolist(), torch.remainder(fnv1a(seqs[1]), BUCKETS).tolist())
hashed = [torch.cat([s, bigram_hash(s)]) for s in seqs]
print("hashed", hashed[0].tolist(), hashed[0].dtype)

lengths = torch.tensor([len(h) for h in hashed])
padded = pad_sequence(hashed, batch_first=True, padding_value=0)
print("padded", padded.shape, padded[1, -4:].tolist())
padded_t = pad_sequence(hashed[:3], padding_value=-1)
print("time-major", padded_t.shape, padded_t[-1].tolist())
packed = pack_sequence(sorted(hashed[:4], key=len, reverse=True))
print("packed", packed.data.shape, packed.batch_sizes.tolist())
packed_u = pack_sequence(hashed[:4], enforce_sorted=False)
print("unsorted", packed_u.sorted_indices.tolist(), packed_u.unsorted_indices.tolist())

# length bucketing
edges = torch.tensor([8, 10, 12])
print("buckets", torch.bucketize(lengths, edges).tolist(),
      torch.bucketize(lengths, edges, right=True).tolist(),
      torch.searchsorted(edges, lengths, side="right").tolist())

# flat input + offsets
flat = torch.cat(hashed)
offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
print("offsets", offsets.tolist(), flat.shape)

NV = V + BUCKETS
bag_sum = nn.EmbeddingBag(NV, 6, mode="sum")
bag_mean = nn.EmbeddingBag.from_pretrained(bag_sum.weight.detach().clone(), mode="mean")
bag_max = nn.EmbeddingBag.from_pretrained(bag_sum.weight.detach().clone(), mode="max",
                                          freeze=False)
print(bag_sum, bag_mean.weight.requires_grad, bag_max.weight.requires_grad)
s = bag_sum(flat, offsets)
m = bag_mean(flat, offsets)
mx = bag_max(flat, offsets)
print("sum", s.shape, s.dtype, [round(v, 4) for v in s[0].tolist()])
print("mean", [round(v, 4) for v in m[2].tolist()])
print("max", [round(v, 4) for v in mx[4].tolist()])
last = torch.cat([offsets, torch.tensor([len(flat)])])
bag_last = nn.EmbeddingBag.from_pretrained(bag_sum.weight.detach(), mode="sum",
                                           include_last_offset=True)
print("last", torch.allclose(bag_last(flat, last), s), bag_last(flat, last).shape)
print("2-D", [round(v, 4) for v in bag_mean(padded[:2, :5]).sum(1).tolist()])

# per-sample weights and padding_idx
w = torch.rand(len(flat))
ws = F.embedding_bag(flat, bag_sum.weight, offsets, mode="sum", per_sample_weights=w)
print("weighted", [round(v, 4) for v in ws[3].tolist()])
pad_bag = nn.EmbeddingBag(NV, 4, mode="mean", padding_idx=0)
print("pad row", pad_bag.weight[0].tolist())
pm = pad_bag(padded)
print("pad mean", pm.shape, f"{pm.abs().sum().item():.4f}")
empty = pad_bag(torch.tensor([5, 6, 7]), torch.tensor([0, 0, 2]))
print("empty bag", [round(v, 4) for v in empty[0].tolist()], empty.shape)

# max_norm renormalises looked-up rows in place
nb = nn.EmbeddingBag(20, 5, max_norm=1.0, norm_type=2.0, mode="sum")
before = nb.weight[3].norm().item()
nb(torch.tensor([[3, 4], [3, 5]]))
print(f"max_norm {before:.4f} -> {nb.weight[3].norm().item():.4f}")
emb = nn.Embedding(20, 5, max_norm=0.5, norm_type=1.0)
emb(torch.tensor([1, 2]))
print(f"l1 {emb.weight[1].abs().sum().item():.4f} {emb.weight[2].abs().sum().item():.4f}")

# sparse gradients and SparseAdam
sp = nn.EmbeddingBag(NV, 4, mode="sum", sparse=True)
out = sp(torch.tensor([3, 5, 3, 7]), torch.tensor([0, 2]))
out.sum().backward()
g = sp.weight.grad
print("sparse grad", g.is_sparse, g.layout, g.shape)
gc = g.coalesce()
print("indices", gc.indices().tolist(), [round(v, 4) for v in gc.values()[:, 0].tolist()])
opt = torch.optim.SparseAdam(sp.parameters(), lr=0.1)
before = sp.weight[3].clone()
opt.step()
print("sparseadam", f"{(sp.weight[3] - before).abs().sum().item():.4f}",
      torch.equal(sp.weight[4], sp.weight[4]))
freq = nn.EmbeddingBag(NV, 2, mode="sum", scale_grad_by_freq=True)
freq(torch.tensor([5, 5, 5, 9, 2, 9]), torch.tensor([0, 3])).sum().backward()
print("freq grad", [round(v, 4) for v in freq.weight.grad[[2, 5, 9], 0].tolist()])
E = nn.Embedding.from_pretrained(torch.arange(12.0).view(4, 3), freeze=True, padding_idx=1)
print("frozen", E.weight.requires_grad, E(torch.tensor([[1, 3]])).tolist())

# TF-IDF with a sparse COO tensor
D = len(seqs)
rows = torch.cat([torch.full((len(s),), i) for i, s in enumerate(seqs)])
cols = torch.cat(seqs)
tf = torch.sparse_coo_tensor(torch.stack([rows, cols]), torch.ones(len(cols)), (D, V))
tf = tf.coalesce()
print("tf", tf.shape, tf._nnz(), tf.values().max().item())
df = torch.bincount(torch.unique(torch.stack([rows, cols]), dim=1)[1], minlength=V)
idf = torch.log((1 + D) / (1 + df.float())) + 1
print("df", df[:8].tolist(), f"{idf[1].item():.4f}")
tfidf = torch.sparse_coo_tensor(tf.indices(), tf.values() * idf[tf.indices()[1]], (D, V))
dense = tfidf.to_dense()
proj = torch.randn(V, 3)
print("sparse.mm", [round(v, 4) for v in torch.sparse.mm(tfidf, proj)[0].tolist()],
      torch.allclose(torch.sparse.mm(tfidf, proj), dense @ proj, atol=1e-5))
attn = torch.sparse.softmax(tfidf, dim=1)
print("sparse softmax", attn.is_coalesced(), [round(v, 4) for v in attn.values()[:4].tolist()])
logits_sp = torch.sparse.log_softmax(tfidf.coalesce(), dim=1).to_dense()
print("log_softmax", f"{logits_sp[0].sum().item():.4f}")
masked = torch.ones(D, V).cumsum(1).sparse_mask(tf)
print("mask", masked._nnz(), masked.values()[:5].tolist())
unit = F.normalize(dense, dim=1)
sims = unit @ unit.T
vals, idx = sims.fill_diagonal_(-1).topk(2, dim=1)
print("neighbours", idx[:, 0].tolist(), [round(v, 4) for v in vals[:3, 0].tolist()])
print("cos", f"{F.cosine_similarity(dense[0:1], dense[2:3]).item():.4f}")


class FastText(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean", padding_idx=0)
        self.fc = nn.Linear(dim, classes)

    def forward(self, ids, offsets=None):
        return self.fc(self.bag(ids, offsets))


model = FastText(NV, 8, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
for step in range(1, 11):
    opt.zero_grad()
    logits = model(flat, offsets)
    loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    loss.backward()
    opt.step()
    if step % 3 == 1:
        print(f"step {step} loss {loss.item():.4f}")
with torch.no_grad():
    pred = model(padded).argmax(1)
print("pred", pred.tolist(), f"acc {(pred == labels).float().mean().item():.4f}")


def attempt(label, fn):
    try:
        fn()
        print(label, "ok")
    except Exception as e:
        print(label, type(e).__name__, str(e).split("\n")[0])


attempt("offsets start", lambda: bag_sum(flat, offsets + 1))
attempt("psw max", lambda: bag_max(flat, offsets, per_sample_weights=w))
attempt("out of range", lambda: bag_sum(torch.tensor([1, NV + 3]), torch.tensor([0])))
attempt("2-D with offsets", lambda: bag_sum(padded, offsets))
attempt("from_pretrained 1-D", lambda: nn.EmbeddingBag.from_pretrained(torch.ones(5)))
attempt("float ids", lambda: bag_sum(flat.float(), offsets))
sp.weight.grad = None
sp(torch.tensor([1, 2]), torch.tensor([0])).sum().backward()
sgd = torch.optim.SGD(sp.parameters(), lr=0.1, momentum=0.9)
attempt("dense optim", lambda: sgd.step())
wd = torch.optim.SGD(sp.parameters(), lr=0.1, weight_decay=0.01)
attempt("sgd weight_decay", lambda: wd.step())
attempt("sparse adam dense", lambda: torch.optim.SparseAdam(model.parameters()).step())
