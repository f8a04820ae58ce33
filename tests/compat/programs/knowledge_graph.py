"""Knowledge-graph embeddings for link prediction, written in plain torch: a small synthetic
graph drawn with a seeded generator, TransE (max_norm embeddings, L1/L2 distances, margin
ranking loss), DistMult and ComplEx (view_as_complex, .real / .imag), RotatE (torch.polar,
self-adversarial negative sampling with detached softmax weights), sparse embeddings trained
with SparseAdam and SGD (sparse gradients, coalesce), F.embedding / F.embedding_bag with
per_sample_weights, F.normalize and renorm_, filtered ranking evaluation (index_put_ /
masked_fill, argsort, MRR and Hits@k), torch.unique over triples, saving the embeddings
through io.BytesIO; then the usual mistakes."""

import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
gen = torch.Generator().manual_seed(1234)

# ---- a synthetic graph: entities in 3 clusters, relations map cluster to cluster ----
n_ent, n_rel = 24, 4
cluster = torch.arange(n_ent) % 3
heads = torch.randint(0, n_ent, (90,), generator=gen)
rels = torch.randint(0, n_rel, (90,), generator=gen)
# tail: an entity in cluster (head cluster + rel) % 3, chosen by the generator
offs = torch.randint(0, n_ent // 3, (90,), generator=gen)
tails = ((cluster[heads] + rels) % 3) + 3 * offs
triples = torch.stack([heads, rels, tails], dim=1)
uniq, inv, counts = torch.unique(triples, dim=0, return_inverse=True, return_counts=True)
print("triples", triples.shape, "unique", uniq.shape[0], "dup max", counts.max().item())
print("first unique", uniq[:3].tolist(), "inverse", inv[:6].tolist())
perm = torch.randperm(uniq.shape[0], generator=gen)
n_test = 10
test, train = uniq[perm[:n_test]], uniq[perm[n_test:]]
print("train", tuple(train.shape), "test", tuple(test.shape), train.dtype)
per_rel = torch.bincount(train[:, 1], minlength=n_rel)
print("per relation", per_rel.tolist())


def corrupt(batch, generator):
    """Replace the head or the tail of each triple by a random entity."""
    n = batch.shape[0]
    rand_ent = torch.randint(0, n_ent, (n,), generator=generator)
    flip = torch.rand(n, generator=generator) < 0.5
    h = torch.where(flip, rand_ent, batch[:, 0])
    t = torch.where(flip, batch[:, 2], rand_ent)
    return torch.stack([h, batch[:, 1], t], dim=1), flip


neg, flip = corrupt(train[:6], gen)
print("corrupted", neg.tolist(), "heads flipped", int(flip.sum()))

# ---- nn.Embedding with max_norm: renormalised in place on lookup ----
emb = nn.Embedding(6, 4, max_norm=1.0, norm_type=2.0)
with torch.no_grad():
    emb.weight.mul_(3.0)
before = emb.weight.norm(dim=1)
print("norms before", [f"{v:.4f}" for v in before.tolist()])
out = emb(torch.tensor([0, 2, 2]))
after = emb.weight.norm(dim=1)
print("norms after ", [f"{v:.4f}" for v in after.tolist()])
print("out norms", [f"{v:.4f}" for v in out.norm(dim=1).tolist()], out.grad_fn.__class__.__name__)
out.sum().backward()
print("grad rows", emb.weight.grad.abs().sum(dim=1).tolist())
emb1 = nn.Embedding(5, 3, max_norm=0.5, norm_type=1.0)
with torch.no_grad():
    emb1.weight.copy_(torch.arange(15.0).reshape(5, 3) / 10)
emb1(torch.tensor([[1, 4], [4, 0]]))
print("L1 renorm", [f"{v:.5f}" for v in emb1.weight.abs().sum(dim=1).tolist()])
print("renormed version", emb1.weight._version > 0)
half = nn.Embedding(6, 4, max_norm=1.0).to(torch.bfloat16)
with torch.no_grad():
    half.weight.mul_(4)
half(torch.arange(6))
print("bfloat16 renorm", half.weight[:2].tolist())

# padding_idx: zero row, no gradient
pad = nn.Embedding(5, 3, padding_idx=0)
print("pad row", pad.weight[0].tolist())
pad(torch.tensor([0, 1, 0, 3])).pow(2).sum().backward()
print("pad grad", [f"{v:.4f}" for v in pad.weight.grad.sum(dim=1).tolist()])
pad_neg = nn.Embedding(5, 3, padding_idx=-1)
print("negative padding_idx", pad_neg.padding_idx)

# ---- TransE: ||h + r - t||_p with a margin ranking loss ----
dim = 8


class TransE(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.ent = nn.Embedding(n_ent, dim, max_norm=1.0)
        self.rel = nn.Embedding(n_rel, dim)
        bound = 6 / math.sqrt(dim)
        nn.init.uniform_(self.ent.weight, -bound, bound)
        nn.init.uniform_(self.rel.weight, -bound, bound)
        with torch.no_grad():
            self.rel.weight.copy_(F.normalize(self.rel.weight, p=2, dim=1))
        self.p = p

    def forward(self, tr):
        h, r, t = self.ent(tr[:, 0]), self.rel(tr[:, 1]), self.ent(tr[:, 2])
        return -torch.linalg.vector_norm(h + r - t, ord=self.p, dim=-1)


torch.manual_seed(1)
for p in (1, 2):
    model = TransE(p)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.MarginRankingLoss(margin=1.0)
    for step in range(30):
        neg, _ = corrupt(train, gen)
        pos_s, neg_s = model(train), model(neg)
        loss = loss_fn(pos_s, neg_s, torch.ones_like(pos_s))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"TransE L{p} step {step} loss {loss.item():.5f}")
    n = model.ent.weight.norm(dim=1)
    print(f"TransE L{p} max entity norm {n.max().item():.5f}")
    functional_loss = F.margin_ranking_loss(pos_s, neg_s, torch.ones_like(pos_s), margin=1.0,
                                            reduction="sum")
    print(f"functional sum {functional_loss.item():.5f}")


# ---- DistMult and ComplEx with sparse embeddings ----
class DistMult(nn.Module):
    def __init__(self, sparse):
        super().__init__()
        self.ent = nn.Embedding(n_ent, dim, sparse=sparse)
        self.rel = nn.Embedding(n_rel, dim, sparse=sparse)
        nn.init.xavier_uniform_(self.ent.weight)
        nn.init.xavier_uniform_(self.rel.weight)

    def forward(self, tr):
        return (self.ent(tr[:, 0]) * self.rel(tr[:, 1]) * self.ent(tr[:, 2])).sum(-1)

    def score_tails(self, h, r):
        return (self.ent(h) * self.rel(r)) @ self.ent.weight.t()


class ComplEx(nn.Module):
    def __init__(self):
        super().__init__()
        self.ent = nn.Embedding(n_ent, 2 * dim, sparse=True)
        self.rel = nn.Embedding(n_rel, 2 * dim, sparse=True)
        nn.init.normal_(self.ent.weight, std=0.1)
        nn.init.normal_(self.rel.weight, std=0.1)

    def c(self, x):
        return torch.view_as_complex(x.view(*x.shape[:-1], dim, 2))

    def forward(self, tr):
        h, r, t = self.c(self.ent(tr[:, 0])), self.c(self.rel(tr[:, 1])), self.c(self.ent(tr[:, 2]))
        return (h * r * t.conj()).real.sum(-1)

    def score_tails(self, h, r):
        hr = self.c(self.ent(h)) * self.c(self.rel(r))
        all_e = self.c(self.ent.weight)
        return hr.real @ all_e.real.t() + hr.imag @ all_e.imag.t()


def bce_train(model, opt, steps, tag):
    for step in range(steps):
        neg, _ = corrupt(train, gen)
        scores = torch.cat([model(train), model(neg)])
        labels = torch.cat([torch.ones(len(train)), torch.zeros(len(neg))])
        loss = F.binary_cross_entropy_with_logits(scores, labels)
        opt.zero_grad()
        loss.backward()
        if step == 0:
            g = model.ent.weight.grad
            print(tag, "grad sparse", g.is_sparse, g.layout, "coalesced", g.is_coalesced())
            gc = g.coalesce()
            print(tag, "nnz", g._nnz(), "->", gc._nnz(), "rows", gc.indices().shape,
                  "values", tuple(gc.values().shape))
            print(tag, "dense grad sum", f"{g.to_dense().sum().item():.5f}",
                  f"{gc.values().abs().sum().item():.5f}")
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            print(f"{tag} step {step} loss {loss.item():.5f}")


torch.manual_seed(2)
dm = DistMult(sparse=True)
bce_train(dm, torch.optim.SparseAdam(list(dm.parameters()), lr=0.05), 41, "DistMult/SparseAdam")
dm_sgd = DistMult(sparse=True)
bce_train(dm_sgd, torch.optim.SGD(dm_sgd.parameters(), lr=0.5), 21, "DistMult/SGD")
cx = ComplEx()
bce_train(cx, torch.optim.SparseAdam(list(cx.parameters()), lr=0.05), 41, "ComplEx")
# a sparse gradient up close: an entity used as head and as tail in one graph
probe = nn.Embedding(6, 2, sparse=True, padding_idx=5)
with torch.no_grad():
    probe.weight.copy_(torch.arange(12.0).reshape(6, 2) / 10)
hs, ts = probe(torch.tensor([0, 2, 5])), probe(torch.tensor([2, 3]))
(hs.sum() * 2 + (ts ** 2).sum()).backward()
g = probe.weight.grad
print(g)
print("coalesced", g.coalesce().indices().tolist(), g.coalesce().values().tolist())
print("grad norms", f"{g.norm().item():.5f}", f"{g.norm(1).item():.5f}",
      f"{g.coalesce().values().norm(dim=1).max().item():.5f}")
print("abs / pow", torch.abs(g).is_coalesced(), g.pow(2).coalesce().values().sum().item(),
      (g * 0.5).to_dense()[2].tolist())
try:
    g.sqrt_()
except RuntimeError as err:
    print("RuntimeError:", err)
g.zero_()
print("zeroed", g._nnz(), g.is_coalesced(), g.to_dense().abs().sum().item())
torch.optim.SGD(probe.parameters(), lr=0.1).zero_grad(set_to_none=False)
print("zero_grad keeps a sparse grad", probe.weight.grad.layout, probe.weight.grad._nnz())
z = cx.c(cx.ent.weight[:2])
print("complex", z.dtype, tuple(z.shape), f"{z.abs().mean().item():.5f}",
      f"{z.angle()[0, 0].item():.5f}")


# ---- RotatE: relations are rotations (phases), self-adversarial negatives ----
class RotatE(nn.Module):
    def __init__(self, gamma=6.0):
        super().__init__()
        self.ent = nn.Embedding(n_ent, 2 * dim)
        self.phase = nn.Embedding(n_rel, dim)
        nn.init.uniform_(self.ent.weight, -0.5, 0.5)
        nn.init.uniform_(self.phase.weight, -math.pi, math.pi)
        self.gamma = gamma

    def c(self, x):
        return torch.view_as_complex(x.view(*x.shape[:-1], dim, 2))

    def forward(self, h, r, t):
        rot = torch.polar(torch.ones_like(self.phase(r)), self.phase(r))
        d = self.c(self.ent(h)) * rot - self.c(self.ent(t))
        return self.gamma - d.abs().sum(-1)


torch.manual_seed(3)
rot = RotatE()
opt = torch.optim.Adam(rot.parameters(), lr=0.02)
k_neg, alpha = 4, 1.0
for step in range(40):
    h, r, t = train[:, 0], train[:, 1], train[:, 2]
    neg_t = torch.randint(0, n_ent, (len(train), k_neg), generator=gen)
    pos = rot(h, r, t)
    negs = rot(h[:, None].expand(-1, k_neg), r[:, None].expand(-1, k_neg), neg_t)
    w = torch.softmax(alpha * negs, dim=1).detach()
    loss = -(F.logsigmoid(pos).mean() + (w * F.logsigmoid(-negs)).sum(1).mean()) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"RotatE step {step} loss {loss.item():.5f} w max {w.max().item():.4f}",
              w.requires_grad)
rz = torch.polar(torch.ones(3), torch.tensor([0.0, math.pi / 2, math.pi]))
print("polar", rz.dtype, [f"{v:.4f}" for v in torch.view_as_real(rz).flatten().tolist()])


# ---- filtered ranking evaluation ----
known = {}
for hh, rr, tt in uniq.tolist():
    known.setdefault((hh, rr), []).append(tt)


@torch.no_grad()
def evaluate(score_fn, tag):
    h, r, t = test[:, 0], test[:, 1], test[:, 2]
    scores = score_fn(h, r)  # (n_test, n_ent)
    target = scores.gather(1, t[:, None])
    mask = torch.zeros_like(scores, dtype=torch.bool)
    for i, (hh, rr) in enumerate(zip(h.tolist(), r.tolist())):
        others = [x for x in known[(hh, rr)] if x != t[i].item()]
        if others:
            rows = torch.full((len(others),), i)
            mask.index_put_((rows, torch.tensor(others)), torch.tensor(True))
    filtered = scores.masked_fill(mask, float("-inf"))
    ranks = (filtered > target).sum(dim=1) + 1
    order = torch.argsort(filtered, dim=1, descending=True)
    pos = (order == t[:, None]).nonzero()[:, 1] + 1
    mrr = (1.0 / ranks.float()).mean().item()
    hits = {k: (ranks <= k).float().mean().item() for k in (1, 3, 10)}
    print(f"{tag} MRR {mrr:.4f} hits@1 {hits[1]:.2f} hits@3 {hits[3]:.2f} "
          f"hits@10 {hits[10]:.2f} masked {int(mask.sum())}")
    print(tag, "ranks", ranks.tolist(), "argsort agrees", torch.equal(pos, ranks))


evaluate(dm.score_tails, "DistMult")
evaluate(cx.score_tails, "ComplEx")
evaluate(lambda h, r: rot(h[:, None].expand(-1, n_ent), r[:, None].expand(-1, n_ent),
                          torch.arange(n_ent).expand(len(h), -1)), "RotatE")

# ---- F.embedding / F.embedding_bag with per_sample_weights ----
W = torch.randn(10, 4, requires_grad=True)
idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
e = F.embedding(idx, W, padding_idx=4)
e.sum().backward()
print("F.embedding", tuple(e.shape), "grad row 4", W.grad[4].tolist(),
      "row 1", [f"{v:.1f}" for v in W.grad[1].tolist()])
W2 = torch.randn(10, 4)
flat = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offsets = torch.tensor([0, 3, 5])
psw = torch.tensor([0.5, 1.0, 2.0, 1.0, 1.0, 0.25, 0.25, 1.0], requires_grad=True)
bag = F.embedding_bag(flat, W2, offsets, mode="sum", per_sample_weights=psw)
manual = torch.stack([(W2[flat[s:e]] * psw[s:e, None]).sum(0)
                      for s, e in zip([0, 3, 5], [3, 5, 8])])
print("bag", tuple(bag.shape), f"{bag.sum().item():.5f}", torch.allclose(bag, manual))
bag.sum().backward()
print("psw grad", [f"{v:.4f}" for v in psw.grad.tolist()])
bag_mean = F.embedding_bag(torch.tensor([[1, 2], [3, 3]]), W2, mode="mean", max_norm=1.0)
print("bag mean", [f"{v:.4f}" for v in bag_mean.flatten().tolist()])
print("W2 renormed", [f"{v:.4f}" for v in W2.norm(dim=1).tolist()])

bag = nn.EmbeddingBag(n_ent, 3, mode="sum", sparse=True, padding_idx=0)
bags = torch.tensor([[0, 4, 7], [7, 0, 0]])
bag(bags, per_sample_weights=torch.tensor([[1.0, 2.0, 3.0], [0.5, 1.0, 1.0]])).sum().backward()
print("bag sparse grad", bag.weight.grad._indices().tolist(),
      bag.weight.grad._values()[:, 0].tolist())

# ---- renorm_ and F.normalize ----
R = torch.randn(5, 4) * 2
R2 = R.clone().renorm_(p=2, dim=0, maxnorm=1.0)
print("renorm_", [f"{v:.4f}" for v in R2.norm(dim=1).tolist()])
print("renorm p1", [f"{v:.4f}" for v in R.renorm(1, 0, 2.0).abs().sum(1).tolist()])
N = F.normalize(R, p=1, dim=1)
print("normalize p1", [f"{v:.4f}" for v in N.abs().sum(1).tolist()])
print("vector_norm", f"{torch.linalg.vector_norm(R, ord=1).item():.4f}",
      f"{torch.linalg.vector_norm(R, ord=2, dim=0)[0].item():.4f}",
      f"{torch.linalg.vector_norm(R, ord=float('inf')).item():.4f}")

# ---- saving and loading the embedding state ----
buf = io.BytesIO()
torch.save({"ent": dm.ent.state_dict(), "rel": dm.rel.weight.detach(), "n_ent": n_ent}, buf)
buf.seek(0)
ckpt = torch.load(buf)
fresh = nn.Embedding(n_ent, dim, sparse=True)
print("load", fresh.load_state_dict(ckpt["ent"]), ckpt["n_ent"], ckpt["rel"].shape)
print("same weights", torch.equal(fresh.weight, dm.ent.weight), fresh.sparse)
pre = nn.Embedding.from_pretrained(ckpt["rel"], freeze=True, max_norm=0.5)
print("pretrained", pre.weight.requires_grad, pre.max_norm, tuple(pre(torch.tensor([0])).shape))

# ---- typical mistakes ----
try:
    dm.ent(torch.tensor([n_ent]))
except IndexError as err:
    print("IndexError:", err)
try:
    F.embedding(torch.tensor([1.0, 2.0]), W2)
except RuntimeError as err:
    print("RuntimeError:", str(err).splitlines()[0])
sp = nn.Embedding(5, 3, sparse=True)
sp(torch.tensor([1, 2])).sum().backward()
try:
    torch.optim.Adam(sp.parameters()).step()
except RuntimeError as err:
    print("RuntimeError:", err)
dense = nn.Embedding(5, 3)
dense(torch.tensor([1])).sum().backward()
try:
    torch.optim.SparseAdam(dense.parameters()).step()
except RuntimeError as err:
    print("RuntimeError:", err)
try:
    torch.optim.SparseAdam([torch.zeros(3, requires_grad=True)], lr=-1.0)
except ValueError as err:
    print("ValueError:", err)
base = torch.randn(5, 3, requires_grad=True)
nonleaf = base * 2
# the documented max_norm pitfall: the lookup renormalises the weight in place after a
# product saved it for backward (clone the weight first)
capped = nn.Embedding(4, 3, max_norm=1.0)
with torch.no_grad():
    capped.weight.mul_(5)
proj = torch.randn(2, 3, requires_grad=True)
saved = capped.weight @ proj.t()
looked = capped(torch.tensor([1, 2]))
try:
    (saved.sum() + looked.sum()).backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(":")[0])
saved = capped.weight.clone() @ proj.t()
looked = capped(torch.tensor([1, 3]))
(saved.sum() + looked.sum()).backward()
print("with clone", f"{proj.grad.sum().item():.5f}", capped.weight.grad.shape)
out_nl = F.embedding(torch.tensor([0, 1]), nonleaf, max_norm=1.0)
print("non-leaf renormed", [f"{v:.4f}" for v in nonleaf.norm(dim=1).tolist()],
      nonleaf._version, out_nl.grad_fn.name())
out_nl.sum().backward()
print("grad reaches the leaf", base.grad.sum(1).tolist())
try:
    F.embedding(torch.tensor([0]), base.exp(), max_norm=0.1).sum().backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(":")[0])
try:
    nn.Embedding(5, 3, padding_idx=7)
except AssertionError as err:
    print("AssertionError:", err)
try:
    F.embedding_bag(flat, W2, offsets, mode="max", per_sample_weights=psw.detach())
except NotImplementedError as err:
    print("NotImplementedError:", err)
