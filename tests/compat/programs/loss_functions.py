"""The loss-function zoo: every loss in torch.nn, in module and functional form.

For each loss a practitioner reaches for, this prints the value under every reduction and
the gradient of the input (and of the target where torch allows it), exercising the options
people actually set: class weights, ignore_index, label smoothing, K-dim inputs, pos_weight,
log_target, delta/beta, margins and p, custom distances, full likelihoods and eps. It also
shows the warnings (batchmean, size mismatch, deprecated size_average/reduce), double
backward, float64, and the typical mistakes caught with try/except."""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fmt(t):
    """A tensor's values as a list of 5-significant-digit strings."""
    return [f"{v:.5g}" for v in t.detach().reshape(-1).tolist()]


def report(label, loss, *inputs):
    """Print a loss value (or values) and, for a scalar, the grads of its inputs."""
    print(label, "value", fmt(loss), "grad_fn", type(loss.grad_fn).__name__)
    if loss.dim() == 0 and any(x.requires_grad for x in inputs):
        grads = torch.autograd.grad(loss, [x for x in inputs if x.requires_grad])
        for i, g in enumerate(grads):
            print("   grad", i, tuple(g.shape), fmt(g))


def all_reductions(label, make, *inputs):
    """Run a loss factory under each reduction, with the input grads of the scalar ones."""
    for red in ("none", "mean", "sum"):
        report(f"{label}[{red}]", make(red), *inputs)


def show_error(label, fn):
    try:
        fn()
        print(label, "no error")
    except Exception as e:  # noqa: BLE001 - we print what the user would see
        print(label, type(e).__name__, "|", str(e).splitlines()[0][:160])


def show_warnings(label, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    for w in caught:
        print(label, "warning", w.category.__name__, "|", str(w.message).splitlines()[0][:160])
    if not caught:
        print(label, "no warning")
    return out


def leaf(*shape, scale=1.0, dtype=torch.float32):
    return (torch.randn(*shape, dtype=dtype) * scale).requires_grad_()


# ---------------------------------------------------------------- regression: L1 / MSE
print("== L1 / MSE")
x = leaf(4, 3)
y = torch.randn(4, 3)
all_reductions("L1", lambda r: nn.L1Loss(reduction=r)(x, y), x)
all_reductions("MSE", lambda r: F.mse_loss(x, y, reduction=r), x)
yt = torch.randn(4, 3, requires_grad=True)
report("MSE target grad", F.mse_loss(x, yt), x, yt)
report("L1 target grad", F.l1_loss(x, yt, reduction="sum"), x, yt)
# a tie: x == y gives sign(0) = 0 in the L1 gradient
xt = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
report("L1 tie", F.l1_loss(xt, torch.tensor([1.0, 0.0, 5.0])), xt)

# broadcasting targets: torch warns and broadcasts
xb = leaf(3, 4)
yb = torch.randn(4)
out = show_warnings("L1 broadcast", lambda: F.l1_loss(xb, yb, reduction="none"))
print("L1 broadcast shape", tuple(out.shape), fmt(out[0]))
out = show_warnings("MSE broadcast", lambda: F.mse_loss(torch.randn(3, 1), torch.randn(3)))
print("MSE broadcast value", fmt(out))
show_warnings("MSE same size", lambda: F.mse_loss(xb, xb.detach() + 1))

# ---------------------------------------------------------------- CrossEntropy
print("== CrossEntropy")
logits = leaf(5, 4, scale=2.0)
tgt = torch.tensor([0, 3, 1, 1, 2])
w = torch.tensor([1.0, 2.0, 0.5, 3.0])
all_reductions("CE", lambda r: nn.CrossEntropyLoss(reduction=r)(logits, tgt), logits)
all_reductions("CE weight", lambda r: F.cross_entropy(logits, tgt, weight=w, reduction=r), logits)
all_reductions("CE ignore", lambda r: F.cross_entropy(logits, tgt, ignore_index=1, reduction=r),
               logits)
all_reductions("CE w+ignore",
               lambda r: F.cross_entropy(logits, tgt, weight=w, ignore_index=3, reduction=r),
               logits)
all_reductions("CE smooth",
               lambda r: F.cross_entropy(logits, tgt, label_smoothing=0.1, reduction=r), logits)
all_reductions("CE smooth+w+ignore",
               lambda r: nn.CrossEntropyLoss(weight=w, ignore_index=0, label_smoothing=0.2,
                                             reduction=r)(logits, tgt), logits)
# all targets ignored: mean is 0/0
report("CE all ignored", F.cross_entropy(logits, torch.full((5,), -100)), logits)

# class probabilities as target
probs = torch.softmax(torch.randn(5, 4), dim=1)
all_reductions("CE probs", lambda r: F.cross_entropy(logits, probs, reduction=r), logits)
all_reductions("CE probs w+smooth",
               lambda r: F.cross_entropy(logits, probs, weight=w, label_smoothing=0.3,
                                         reduction=r), logits)
probs_leaf = probs.clone().requires_grad_()
report("CE probs target grad", F.cross_entropy(logits, probs_leaf), logits, probs_leaf)

# K-dim: (N, C, d1, d2) segmentation-style
seg = leaf(2, 3, 4, 5)
seg_t = torch.randint(0, 3, (2, 4, 5))
seg_t[0, 0, :2] = -100
all_reductions("CE 4d", lambda r: F.cross_entropy(seg, seg_t, reduction=r), seg)
report("CE 4d weight+smooth",
       F.cross_entropy(seg, seg_t, weight=torch.tensor([0.2, 1.0, 3.0]), label_smoothing=0.05),
       seg)
seg_p = torch.softmax(torch.randn(2, 3, 4, 5), dim=1)
report("CE 4d probs", F.cross_entropy(seg, seg_p), seg)
# unbatched: (C,) input with a 0-d target
one = leaf(4)
report("CE unbatched", F.cross_entropy(one, torch.tensor(2)), one)
# (forward only: torch's backward refuses the (1,) target its forward accepts)
print("NLL unbatched (1,) target", fmt(F.nll_loss(F.log_softmax(one.detach(), 0),
                                                 torch.tensor([2]))))
show_error("NLL unbatched (2,) target", lambda: F.nll_loss(one, torch.tensor([2, 1])))
report("CE unbatched probs", F.cross_entropy(one, torch.tensor([0.1, 0.2, 0.3, 0.4])), one)

# ---------------------------------------------------------------- NLLLoss
print("== NLLLoss")
logp = F.log_softmax(torch.randn(6, 5), dim=1).requires_grad_()
nt = torch.tensor([4, 0, 2, 2, 1, 3])
nw = torch.tensor([0.5, 1.0, 2.0, 1.5, 0.1])
all_reductions("NLL", lambda r: nn.NLLLoss(reduction=r)(logp, nt), logp)
all_reductions("NLL w+ignore",
               lambda r: F.nll_loss(logp, nt, weight=nw, ignore_index=2, reduction=r), logp)
# mean is sum(w[t] * -logp) / sum(w[t]) over the non-ignored entries
kept = nt != 2
by_hand = -(nw[nt] * logp.detach()[torch.arange(6), nt])[kept].sum() / nw[nt][kept].sum()
print("NLL mean by hand", fmt(by_hand))
lp4 = F.log_softmax(torch.randn(2, 5, 3, 3), dim=1).requires_grad_()
t4 = torch.randint(0, 5, (2, 3, 3))
all_reductions("NLL 4d w", lambda r: F.nll_loss(lp4, t4, weight=nw, reduction=r), lp4)
report("NLL 4d ignore", F.nll_loss(lp4, t4, ignore_index=0), lp4)
lp3 = F.log_softmax(torch.randn(2, 4, 6), dim=1).requires_grad_()
report("NLL 3d", F.nll_loss(lp3, torch.randint(0, 4, (2, 6))), lp3)
# negative ignore_index other than -100
t_neg = torch.tensor([4, -1, 2, -1, 1, 3])
report("NLL ignore -1", F.nll_loss(logp, t_neg, ignore_index=-1), logp)

# ---------------------------------------------------------------- BCE
print("== BCE")
p = torch.sigmoid(torch.randn(4, 3)).requires_grad_()
yl = torch.randint(0, 2, (4, 3)).float()
bw = torch.tensor([1.0, 2.0, 0.5])
all_reductions("BCE", lambda r: nn.BCELoss(reduction=r)(p, yl), p)
all_reductions("BCE weight", lambda r: F.binary_cross_entropy(p, yl, weight=bw, reduction=r), p)
soft = torch.rand(4, 3)
report("BCE soft targets", F.binary_cross_entropy(p, soft), p)
# inputs at exactly 0 and 1: torch clamps log at -100
edge = torch.tensor([0.0, 1.0, 0.0, 1.0, 0.5], requires_grad=True)
edge_t = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0])
report("BCE edges none", F.binary_cross_entropy(edge, edge_t, reduction="none"), edge)
report("BCE edges mean", F.binary_cross_entropy(edge, edge_t), edge)
tgt_leaf = soft.clone().requires_grad_()
report("BCE target grad", F.binary_cross_entropy(p, tgt_leaf), p, tgt_leaf)

print("== BCEWithLogits")
z = leaf(4, 3, scale=3.0)
pw = torch.tensor([1.0, 3.0, 0.25])
all_reductions("BCEL", lambda r: nn.BCEWithLogitsLoss(reduction=r)(z, yl), z)
all_reductions("BCEL pos_weight",
               lambda r: F.binary_cross_entropy_with_logits(z, yl, pos_weight=pw, reduction=r), z)
report("BCEL weight+pos_weight",
       nn.BCEWithLogitsLoss(weight=bw, pos_weight=pw)(z, yl), z)
z3 = leaf(2, 4, 3)
report("BCEL pos_weight 3d", F.binary_cross_entropy_with_logits(
    z3, torch.randint(0, 2, (2, 4, 3)).float(), pos_weight=pw), z3)
big = torch.tensor([-100.0, -30.0, 0.0, 30.0, 100.0], requires_grad=True)
report("BCEL extreme", F.binary_cross_entropy_with_logits(
    big, torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0]), reduction="none"), big)
report("BCEL extreme mean", F.binary_cross_entropy_with_logits(
    big, torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])), big)
zt = torch.rand(4, 3, requires_grad=True)
report("BCEL target grad", F.binary_cross_entropy_with_logits(z, zt, pos_weight=pw), z, zt)

# ---------------------------------------------------------------- KL divergence
print("== KLDiv")
q_log = F.log_softmax(torch.randn(3, 5), dim=1).requires_grad_()
p_tgt = F.softmax(torch.randn(3, 5), dim=1)
for red in ("none", "sum", "batchmean"):
    report(f"KL[{red}]", F.kl_div(q_log, p_tgt, reduction=red), q_log)
show_warnings("KL mean", lambda: F.kl_div(q_log, p_tgt, reduction="mean"))
report("KL mean value", F.kl_div(q_log, p_tgt, reduction="mean"), q_log)
report("KL log_target", nn.KLDivLoss(reduction="batchmean", log_target=True)(q_log, p_tgt.log()),
       q_log)
p0 = p_tgt.clone()
p0[0, 0] = 0.0
report("KL zero target", F.kl_div(q_log, p0, reduction="sum"), q_log)
p_leaf = p_tgt.clone().requires_grad_()
report("KL target grad", F.kl_div(q_log, p_leaf, reduction="batchmean"), q_log, p_leaf)
lt_leaf = p_tgt.log().requires_grad_()
report("KL log_target grad", F.kl_div(q_log, lt_leaf, reduction="sum", log_target=True),
       q_log, lt_leaf)

# ---------------------------------------------------------------- Huber / SmoothL1
print("== Huber / SmoothL1")
h = torch.tensor([[-3.0, -1.0, -0.4, 0.0], [0.3, 0.5, 1.0, 2.5]], requires_grad=True)
ht = torch.zeros(2, 4)
for d in (1.0, 0.5, 2.0):
    all_reductions(f"Huber d={d}", lambda r, d=d: nn.HuberLoss(reduction=r, delta=d)(h, ht), h)
for b in (1.0, 0.5, 0.0):
    all_reductions(f"SmoothL1 b={b}",
                   lambda r, b=b: F.smooth_l1_loss(h, ht, reduction=r, beta=b), h)
show_error("Huber negative delta", lambda: F.huber_loss(h, ht, delta=-1.0))
show_error("SmoothL1 negative beta", lambda: F.smooth_l1_loss(h, ht, beta=-0.5))

# ---------------------------------------------------------------- soft margin family
print("== SoftMargin / MultiLabelSoftMargin")
s = leaf(3, 4)
sy = torch.tensor([[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, -1.0]])
all_reductions("SoftMargin", lambda r: nn.SoftMarginLoss(reduction=r)(s, sy), s)
far = torch.tensor([-100.0, -20.0, 0.0, 20.0], requires_grad=True)
report("SoftMargin far", F.soft_margin_loss(far, torch.ones(4), reduction="none"), far)
report("SoftMargin far sum", F.soft_margin_loss(far, torch.ones(4), reduction="sum"), far)
ml_y = (sy > 0).float()
all_reductions("MLSoftMargin", lambda r: nn.MultiLabelSoftMarginLoss(reduction=r)(s, ml_y), s)
mw = torch.tensor([1.0, 0.5, 2.0, 1.0])
all_reductions("MLSoftMargin w",
               lambda r: F.multilabel_soft_margin_loss(s, ml_y, weight=mw, reduction=r), s)

# a target with an extra leading dim broadcasts the loss; the sum stays on input's last dim
report("MLSoftMargin broadcast", F.multilabel_soft_margin_loss(
    s, torch.stack([ml_y, 1 - ml_y]), reduction="none"), s)

print("== MultiLabelMargin")
mlm = leaf(3, 5)
mlm_y = torch.tensor([[3, 0, -1, 1, 2], [1, 2, 4, 0, 3], [-1, 2, 0, 1, 1]])
all_reductions("MLMargin", lambda r: nn.MultiLabelMarginLoss(reduction=r)(mlm, mlm_y), mlm)
one_mlm = leaf(4)
report("MLMargin 1d", F.multilabel_margin_loss(one_mlm, torch.tensor([2, -1, 0, 1])), one_mlm)

print("== MultiMargin")
mm = leaf(4, 5)
mm_y = torch.tensor([1, 0, 4, 2])
mm_w = torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0])
for pp in (1, 2):
    all_reductions(f"MultiMargin p={pp}",
                   lambda r, pp=pp: nn.MultiMarginLoss(p=pp, reduction=r)(mm, mm_y), mm)
    report(f"MultiMargin p={pp} margin=0.5 w",
           F.multi_margin_loss(mm, mm_y, p=pp, margin=0.5, weight=mm_w), mm)
show_error("MultiMargin p=3", lambda: F.multi_margin_loss(mm, mm_y, p=3))

# ---------------------------------------------------------------- pairwise / ranking
print("== pairwise")
a = leaf(4, 6)
b = leaf(4, 6)
c_y = torch.tensor([1.0, -1.0, 1.0, -1.0])
all_reductions("Cosine", lambda r: nn.CosineEmbeddingLoss(reduction=r)(a, b, c_y), a, b)
report("Cosine margin", F.cosine_embedding_loss(a, b, c_y, margin=0.2), a, b)
x1 = leaf(5)
x2 = leaf(5)
r_y = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0])
all_reductions("MarginRanking", lambda r: nn.MarginRankingLoss(margin=0.3, reduction=r)(
    x1, x2, r_y), x1, x2)
he = leaf(6, scale=2.0)
he_y = torch.tensor([1.0, -1.0, -1.0, 1.0, -1.0, 1.0])
all_reductions("HingeEmb", lambda r: nn.HingeEmbeddingLoss(margin=1.5, reduction=r)(he, he_y), he)

print("== triplet")
anc, pos, neg = leaf(4, 8), leaf(4, 8), leaf(4, 8)
all_reductions("Triplet", lambda r: nn.TripletMarginLoss(reduction=r)(anc, pos, neg), anc, pos,
               neg)
for pp in (1.0, 3.0):
    report(f"Triplet p={pp} swap", F.triplet_margin_loss(anc, pos, neg, p=pp, swap=True,
                                                         margin=0.5), anc, pos, neg)
report("Triplet eps", F.triplet_margin_loss(anc, anc, neg, eps=1e-3), anc, neg)


def cos_dist(u, v):
    return 1.0 - F.cosine_similarity(u, v)


for swap in (False, True):
    report(f"TripletDist cos swap={swap}",
           nn.TripletMarginWithDistanceLoss(distance_function=cos_dist, margin=0.4, swap=swap)(
               anc, pos, neg), anc, pos, neg)
report("TripletDist default", F.triplet_margin_with_distance_loss(anc, pos, neg), anc, pos, neg)
report("TripletDist pairwise none", F.triplet_margin_with_distance_loss(
    anc, pos, neg, distance_function=nn.PairwiseDistance(p=1.0), reduction="none"), anc)
show_error("TripletDist margin<=0", lambda: F.triplet_margin_with_distance_loss(
    anc, pos, neg, margin=0.0))

# ---------------------------------------------------------------- likelihoods
print("== PoissonNLL")
rate = leaf(3, 4)
counts = torch.poisson(torch.full((3, 4), 3.0))
print("counts", counts.tolist())
for log_input in (True, False):
    inp = rate if log_input else rate.detach().exp().requires_grad_()
    for full in (False, True):
        all_reductions(f"Poisson log={log_input} full={full}",
                       lambda r, li=log_input, fu=full, v=inp: nn.PoissonNLLLoss(
                           log_input=li, full=fu, reduction=r)(v, counts), inp)
zero_rate = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
report("Poisson eps", F.poisson_nll_loss(zero_rate, torch.tensor([1.0, 0.0, 2.0]),
                                         log_input=False, eps=1e-2, reduction="none"), zero_rate)
report("Poisson eps mean", F.poisson_nll_loss(zero_rate, torch.tensor([1.0, 0.0, 2.0]),
                                              log_input=False, eps=1e-2), zero_rate)

print("== GaussianNLL")
mu = leaf(4, 2)
gy = torch.randn(4, 2)
var_full = (torch.rand(4, 2) + 0.1).requires_grad_()
var_col = (torch.rand(4, 1) + 0.1).requires_grad_()
var_vec = (torch.rand(4) + 0.1).requires_grad_()
all_reductions("GNLL", lambda r: nn.GaussianNLLLoss(reduction=r)(mu, gy, var_full), mu, var_full)
report("GNLL full", F.gaussian_nll_loss(mu, gy, var_full, full=True), mu, var_full)
report("GNLL var (N,1)", F.gaussian_nll_loss(mu, gy, var_col), mu, var_col)
mu1 = leaf(4)
report("GNLL var (N,) with (N,) mean", F.gaussian_nll_loss(mu1, gy[:, 0], var_vec), mu1, var_vec)
mu3 = leaf(4, 3)
report("GNLL var (N,) broadcast", F.gaussian_nll_loss(mu3, torch.randn(4, 3), var_vec,
                                                     reduction="none"), mu3)
tiny = torch.tensor([1e-9, 0.5, 1e-7, 2.0], requires_grad=True)
report("GNLL eps", F.gaussian_nll_loss(mu1, gy[:, 0], tiny, eps=1e-3), mu1, tiny)
show_error("GNLL negative var", lambda: F.gaussian_nll_loss(mu, gy, -var_full.detach()))
show_error("GNLL bad var shape", lambda: F.gaussian_nll_loss(mu, gy, torch.ones(4, 3)))

# ---------------------------------------------------------------- deprecated args
print("== size_average / reduce")
for sa, rd in ((None, None), (True, None), (False, None), (None, False), (True, True),
               (False, True), (False, False)):
    out = show_warnings(f"MSE sa={sa} reduce={rd}",
                        lambda sa=sa, rd=rd: nn.MSELoss(size_average=sa, reduce=rd)(x, y))
    print("   reduction", nn.MSELoss(size_average=sa, reduce=rd).reduction, "shape",
          tuple(out.shape), fmt(out.sum()))
out = show_warnings("F.nll_loss size_average=False",
                    lambda: F.nll_loss(logp, nt, size_average=False))
print("   value", fmt(out))
out = show_warnings("F.cross_entropy reduce=False",
                    lambda: F.cross_entropy(logits, tgt, reduce=False))
print("   value", fmt(out))

# ---------------------------------------------------------------- double backward
print("== double backward")
for name, fn in (
    ("MSE", lambda v: F.mse_loss(v, y)),
    ("CE", lambda v: F.cross_entropy(v, tgt[:4], label_smoothing=0.1)),
    ("BCEL", lambda v: F.binary_cross_entropy_with_logits(v, yl, pos_weight=pw)),
    ("KL", lambda v: F.kl_div(F.log_softmax(v, dim=1), F.softmax(y, dim=1),
                              reduction="batchmean")),
    ("GNLL", lambda v: F.gaussian_nll_loss(v, y, torch.ones(4, 3))),
):
    v = torch.randn(4, 3 if name != "CE" else 4, requires_grad=True)
    (g,) = torch.autograd.grad(fn(v), v, create_graph=True)
    gnorm = g.pow(2).sum()
    (gg,) = torch.autograd.grad(gnorm, v)
    print(name, "grad", fmt(g[0]), "gradgrad", fmt(gg[0]))

# ---------------------------------------------------------------- float64
print("== float64")
x64 = leaf(3, 4, dtype=torch.float64)
y64 = torch.randn(3, 4, dtype=torch.float64)
for name, fn in (
    ("L1", lambda: F.l1_loss(x64, y64)),
    ("MSE", lambda: F.mse_loss(x64, y64)),
    ("Huber", lambda: F.huber_loss(x64, y64, delta=0.7)),
    ("CE", lambda: F.cross_entropy(x64, torch.tensor([0, 3, 2]), label_smoothing=0.1)),
    ("BCEL", lambda: F.binary_cross_entropy_with_logits(x64, (y64 > 0).double())),
    ("SoftMargin", lambda: F.soft_margin_loss(x64, y64.sign())),
    ("Poisson", lambda: F.poisson_nll_loss(x64, y64.abs(), full=True)),
):
    out = fn()
    (g,) = torch.autograd.grad(out, x64)
    print(name, out.dtype, f"{out.item():.12g}", g.dtype, fmt(g[0]))

# ---------------------------------------------------------------- typical mistakes
print("== mistakes")
show_error("MSE shape mismatch", lambda: F.mse_loss(torch.randn(4, 3), torch.randn(4, 2)))
show_error("CE float target wrong shape",
           lambda: F.cross_entropy(logits, torch.rand(5, 3)))
show_error("CE float target 1d", lambda: F.cross_entropy(logits, torch.rand(5)))
show_error("BCE long target", lambda: F.binary_cross_entropy(p, yl.long()))
show_error("BCEL long target", lambda: F.binary_cross_entropy_with_logits(z, yl.long()))
show_error("BCE target size", lambda: F.binary_cross_entropy(p, torch.rand(4, 1)))
show_error("BCEL target size", lambda: F.binary_cross_entropy_with_logits(z, torch.rand(4, 2)))
show_error("BCE input > 1", lambda: F.binary_cross_entropy(torch.tensor([1.5]), torch.ones(1)))
show_error("CE target out of bounds", lambda: F.cross_entropy(logits, torch.tensor([0, 5, 1, 1,
                                                                                    2])))
show_error("NLL target out of bounds", lambda: F.nll_loss(logp, torch.tensor([0, 1, 2, 3, 4, 5])))
show_error("NLL negative target", lambda: F.nll_loss(logp, torch.tensor([0, 1, -2, 3, 4, 1])))
show_error("NLL ignore_index -1 with -100",
           lambda: F.nll_loss(logp, torch.tensor([0, 1, -100, 3, 4, 1]), ignore_index=-1))
show_error("CE batch mismatch", lambda: F.cross_entropy(logits, torch.tensor([0, 1, 2])))
show_error("CE float index target", lambda: F.cross_entropy(logits, tgt.float()))
show_error("CE int32 target", lambda: F.cross_entropy(logits, tgt.int()))
show_error("NLL 4d target shape", lambda: F.nll_loss(lp4, torch.zeros(2, 3, 2, dtype=torch.long)))
show_error("NLL weight size", lambda: F.nll_loss(logp, nt, weight=torch.ones(3)))
show_error("NLL weight 2d", lambda: F.nll_loss(logp, nt, weight=nw[None]))
report("NLL 4d weight (1, C)", F.nll_loss(lp4, t4, weight=nw[None]), lp4)
show_error("Huber long tensors", lambda: F.huber_loss(torch.arange(3), torch.arange(3)))
show_error("SoftMargin long input", lambda: F.soft_margin_loss(torch.arange(3), sy[0, :3]))
show_error("SoftMargin bool input", lambda: F.soft_margin_loss(sy[0] > 0, sy[0]))
report("SoftMargin long target", F.soft_margin_loss(s, sy.long()), s)
report("MarginRanking long", F.margin_ranking_loss(torch.arange(3), torch.tensor([2, 1, 0]),
                                                   torch.tensor([1, -1, 1]), margin=1))
show_error("CE bad reduction", lambda: F.cross_entropy(logits, tgt, reduction="average"))
show_error("MSE bad reduction", lambda: F.mse_loss(x, y, reduction="avg"))
show_error("L1 bad reduction", lambda: nn.L1Loss(reduction="elementwise")(x, y))
show_error("KL bad reduction", lambda: F.kl_div(q_log, p_tgt, reduction="batch"))
show_error("CE probs + ignore_index",
           lambda: F.cross_entropy(logits, probs, ignore_index=1))
show_error("CE smoothing > 1", lambda: F.cross_entropy(logits, tgt, label_smoothing=1.5))
show_error("MultiMargin target range", lambda: F.multi_margin_loss(mm, torch.tensor([0, 1, 5, 2])))
show_error("MultiMargin weight dim", lambda: F.multi_margin_loss(mm, mm_y, weight=torch.ones(2,
                                                                                           5)))
show_error("Cosine target shape", lambda: F.cosine_embedding_loss(a, b, torch.ones(4, 1)))
show_error("Triplet dims", lambda: F.triplet_margin_loss(anc, pos, neg[0]))
show_error("MLMargin shape", lambda: F.multilabel_margin_loss(mlm, mlm_y[:, :3]))
show_error("Poisson shape", lambda: F.poisson_nll_loss(rate, counts[:, :2]))
print("done")
