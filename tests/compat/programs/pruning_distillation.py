"""Model compression: a small CNN teacher distilled into a BatchNorm MLP student with
temperature-scaled KL divergence (batchmean, log_target both ways, the T*T factor) plus
label-smoothed cross-entropy; torch.nn.utils.prune (l1/random unstructured, ln/random
structured, global_unstructured, custom_from_mask, importance scores, is_pruned, remove)
with its weight_orig/weight_mask state and forward pre-hooks, and a whole pruned model
through torch.save/torch.load; fine-tuning with nesterov SGD under MultiStepLR and
LambdaLR; an EMA of the weights with AveragedModel + update_bn; state_dict keys of a pruned
model; parameters_to_vector; weight sharing by quantile centroids with bucketize and
searchsorted; magnitude statistics; full backward hooks (on a layer fed plain data) and
module.apply init."""

import io
import warnings

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parameters_to_vector, prune, vector_to_parameters
from torch.optim.lr_scheduler import LambdaLR, MultiStepLR
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn, update_bn

torch.manual_seed(0)
N, C = 48, 4
X = torch.randn(N, 1, 8, 8)
Y = (X[:, 0, :4].mean((1, 2)) > 0).long() + 2 * (X[:, 0, :, :4].mean((1, 2)) > 0).long()
print("data", tuple(X.shape), Y.dtype, torch.bincount(Y, minlength=C).tolist())


def make_teacher():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(8, 16, 3, padding=1, stride=2), nn.ReLU(), nn.Flatten(),
                         nn.Linear(16 * 4 * 4, C))


def make_student():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 24), nn.BatchNorm1d(24), nn.ReLU(),
                         nn.Linear(24, 12), nn.ReLU(), nn.Linear(12, C))


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Linear) and m.out_features == C:
        nn.init.trunc_normal_(m.weight, std=0.1, a=-0.15, b=0.15)
        nn.init.constant_(m.bias, 0.01)
    elif isinstance(m, nn.Linear):
        nn.init.orthogonal_(m.weight, gain=nn.init.calculate_gain("relu"))
        nn.init.uniform_(m.bias, -0.1, 0.1)


torch.manual_seed(1)
teacher = make_teacher().apply(init_weights)
opt_t = torch.optim.Adam(teacher.parameters(), lr=3e-3)
for _ in range(30):
    opt_t.zero_grad()
    loss = F.cross_entropy(teacher(X), Y)
    loss.backward()
    opt_t.step()
teacher.eval()
with torch.no_grad():
    t_logits = teacher(X)
print(f"teacher loss {loss.item():.4f} acc {(t_logits.argmax(1) == Y).float().mean().item():.4f}")

# -- distillation losses ---------------------------------------------------------------------
T = 3.0  # distillation temperature
torch.manual_seed(2)
student = make_student().apply(init_weights)
s_logits = student(X)
log_p = F.log_softmax(s_logits / T, dim=1)
kd1 = F.kl_div(log_p, F.softmax(t_logits / T, dim=1), reduction="batchmean") * T * T
kd2 = F.kl_div(log_p, F.log_softmax(t_logits / T, dim=1), reduction="batchmean",
               log_target=True) * T * T
kd_sum = F.kl_div(log_p, F.softmax(t_logits / T, dim=1), reduction="sum")
kd_none = F.kl_div(log_p, F.softmax(t_logits / T, dim=1), reduction="none")
ce = F.cross_entropy(s_logits, Y, label_smoothing=0.1)
self_kd = nn.KLDivLoss(reduction="batchmean", log_target=True)(log_p, log_p)
print(f"kd {kd1.item():.4f} {kd2.item():.4f} sum {kd_sum.item():.4f} none {tuple(kd_none.shape)}"
      f" ce(ls=0.1) {ce.item():.4f} self {self_kd.item():.4f}")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    kd_mean = F.kl_div(log_p, F.softmax(t_logits / T, dim=1), reduction="mean")
print(f"kd mean {kd_mean.item():.6f}", [str(w.message) for w in caught])

# -- backward hooks record gradient norms ---------------------------------------------------
grad_norms = {}


def record(module, grad_input, grad_output):
    grad_norms[type(module).__name__ + str(module.out_features)] = (
        round(grad_output[0].norm().item(), 4), grad_input[0] is None)


handles = [student[i].register_full_backward_hook(record) for i in (1, 4, 6)]
out = student(X)  # hooks fire only for calls made after they are registered
kd = F.kl_div(F.log_softmax(out / T, 1), F.softmax(t_logits / T, 1), reduction="batchmean")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (0.7 * kd * T * T + 0.3 * F.cross_entropy(out, Y, label_smoothing=0.1)).backward()
print("grad norms", sorted(grad_norms.items()))
print("hook warnings", [type(w.message).__name__ + ": " + str(w.message)[:60] for w in caught])
for h in handles:
    h.remove()
student.zero_grad()

# -- pruning ----------------------------------------------------------------------------------
fc1, fc2, fc3 = student[1], student[4], student[6]
prune.l1_unstructured(fc1, name="weight", amount=0.3)
print("is_pruned", prune.is_pruned(fc1), prune.is_pruned(fc2),
      "params", [n for n, _ in fc1.named_parameters()],
      "buffers", [(n, b.dtype, tuple(b.shape)) for n, b in fc1.named_buffers()])
print("hooks", [type(h).__name__ for h in fc1._forward_pre_hooks.values()],
      "weight is param:", isinstance(fc1.weight, nn.Parameter), fc1.weight.requires_grad)
torch.manual_seed(3)
prune.random_unstructured(fc1, name="bias", amount=5)
# (rows of an orthogonal init all have norm 1: rank the columns instead)
prune.ln_structured(fc2, name="weight", amount=0.25, n=2, dim=1)
prune.l1_unstructured(fc1, name="weight", amount=0.2)  # pruning again builds a container
hook = [h for h in fc1._forward_pre_hooks.values() if h._tensor_name == "weight"][0]
print(type(hook).__name__, [type(m).__name__ for m in hook._pruning_methods], "zero columns",
      (fc2.weight.abs().sum(0) == 0).nonzero().flatten().tolist(), fc1.bias_mask.tolist()[:10])
prune.custom_from_mask(fc3, name="weight", mask=(torch.arange(12) % 3 != 0).float().repeat(C, 1))
prune.global_unstructured([(fc2, "bias"), (fc3, "bias")],
                          pruning_method=prune.L1Unstructured, amount=4)
for i, m in [(1, fc1), (4, fc2), (6, fc3)]:
    w_zero, b_zero = [100.0 * float(torch.sum(t == 0)) / t.nelement() for t in (m.weight, m.bias)]
    print(f"layer {i} weight sparsity {w_zero:.2f}% bias {b_zero:.2f}%")
print("state_dict keys", list(student.state_dict().keys()))
buf = io.BytesIO()
torch.save(student, buf)  # the whole pruned model, its pruning hooks included
buf.seek(0)
copy = torch.load(buf, weights_only=False)
print("loaded", prune.is_pruned(copy), torch.equal(copy(X), student(X)),
      [type(h).__name__ for h in copy[1]._forward_pre_hooks.values()])

# a few less common pruning options on a conv layer: structured by L-inf / L1 norm,
# random channels, and L1 ranked by user importance scores
conv = nn.Conv2d(3, 6, 3)
prune.ln_structured(conv, "weight", amount=2, n=float("inf"), dim=0)
prune.ln_structured(conv, "weight", amount=0.34, n=1, dim=1)
torch.manual_seed(4)
prune.random_structured(conv, "weight", amount=1, dim=3)
kept = conv.weight_mask
container = next(iter(conv._forward_pre_hooks.values()))
print("conv kept", [kept.sum(d).tolist() for d in [(1, 2, 3), (0, 2, 3), (0, 1, 2)]],
      [type(m).__name__ for m in container])
lin = prune.l1_unstructured(nn.Linear(6, 2), "weight", amount=5,
                           importance_scores=torch.arange(12.0).view(2, 6))
print("by importance", lin.weight_mask.tolist(), prune.LnStructured.PRUNING_TYPE,
      prune.CustomFromMask.PRUNING_TYPE)

# -- fine-tune the pruned student with distillation ------------------------------------------
opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                      weight_decay=5e-4)
sched = MultiStepLR(opt, milestones=[4, 8], gamma=0.5)
for step in range(12):
    student.train()
    opt.zero_grad()
    out = student(X)
    kd = F.kl_div(F.log_softmax(out / T, 1), F.log_softmax(t_logits / T, 1),
                  reduction="batchmean", log_target=True) * T * T
    loss = 0.7 * kd + 0.3 * F.cross_entropy(out, Y, label_smoothing=0.1)
    loss.backward()
    opt.step()
    sched.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.4f} "
              f"zeros {int((fc1.weight == 0).sum())} "
              f"orig-grad {fc1.weight_orig.grad.norm().item():.4f}")
student.eval()
with torch.no_grad():
    print(f"student acc {(student(X).argmax(1) == Y).float().mean().item():.4f}")

# -- remove pruning, load into an unpruned model ----------------------------------------------
for m in (fc1, fc2, fc3):
    for n in ("weight", "bias"):
        prune.remove(m, n)
print("after remove", prune.is_pruned(student), list(fc1.state_dict().keys()),
      len(fc1._forward_pre_hooks))
fresh = make_student()
print(fresh.load_state_dict(student.state_dict()))
fresh.eval()
with torch.no_grad():
    print("same outputs", torch.allclose(fresh(X), student(X)),
          int(torch.count_nonzero(fresh[1].weight)))

vec = parameters_to_vector(fresh.parameters())
doubled = make_student()
vector_to_parameters(vec * 2, doubled.parameters())
print("vector", tuple(vec.shape), vec.dtype, int(torch.count_nonzero(vec)),
      f"doubled {doubled[6].bias.sum().item():.4f} vs {2 * student[6].bias.sum().item():.4f}")

# -- magnitude statistics and weight sharing --------------------------------------------------
w = student[1].weight.detach()
mags = w.abs().flatten()
kth = torch.kthvalue(mags[mags > 0], 50)
vals, idx = torch.sort(mags, descending=True)
print(f"kth {kth.values.item():.4f} at {kth.indices.item()} top {vals[:3]} {idx[:3].tolist()}")
nz = w[w != 0]
centroids = torch.quantile(nz, torch.tensor([0.1, 0.3, 0.5, 0.7, 0.9]))
print("quantile", centroids, [round(torch.quantile(nz, 0.37, interpolation=i).item(), 4)
                               for i in ("lower", "higher", "midpoint", "nearest")])
edges = (centroids[1:] + centroids[:-1]) / 2
codes = torch.bucketize(nz, edges)
codes2 = torch.searchsorted(edges, nz.contiguous(), right=True)
codes3 = torch.bucketize(nz, edges, right=True, out_int32=True)
perm = torch.tensor([2, 0, 3, 1])
codes4 = torch.searchsorted(edges[perm], nz, side="right", sorter=torch.argsort(perm))
print("codes", codes.dtype, codes3.dtype, torch.bincount(codes).tolist(),
      bool((codes == codes2).all()), bool((codes3 == codes4).all()))
shared = w.clone()
shared[w != 0] = centroids[codes]
print(f"unique {shared.unique().numel()} err {(shared - w).pow(2).mean().item():.6f}")
print("count_nonzero dim", torch.count_nonzero(student[4].weight, dim=0).tolist())

# -- LambdaLR fine-tuning of the unpruned copy with an EMA of its weights --------------------
opt2 = torch.optim.SGD(fresh.parameters(), lr=0.05, momentum=0.5, nesterov=True,
                       weight_decay=1e-3)
lam = LambdaLR(opt2, lr_lambda=lambda e: 0.8 ** e)
ema = AveragedModel(fresh, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
fresh.train()
for step in range(6):
    opt2.zero_grad()
    batch = slice(step * 4, step * 4 + 24)
    loss = F.cross_entropy(fresh(X[batch]) / 2, Y[batch], label_smoothing=0.2)
    loss.backward()
    opt2.step()
    lam.step()
    ema.update_parameters(fresh)
    print(f"lambda step {step} loss {loss.item():.4f} lr {lam.get_last_lr()[0]:.5f}")
print("ema n_averaged", ema.n_averaged.item(), list(ema.state_dict())[:3],
      ema.module[2].running_mean[:3], ema.module[2].num_batches_tracked.item())
update_bn([(X[i:i + 16],) for i in range(0, N, 16)], ema)
bn = ema.module[2]
print("ema bn after", bn.running_mean[:3], bn.running_var[:2], bn.num_batches_tracked.item())
fresh.eval()
with torch.no_grad():
    print(f"fresh acc {(fresh(X).argmax(1) == Y).float().mean().item():.4f} "
          f"ema acc {(ema(X).argmax(1) == Y).float().mean().item():.4f}")

# -- typical mistakes -------------------------------------------------------------------------
plain, pruned = nn.Linear(4, 3), prune.l1_unstructured(nn.Linear(4, 3), "weight", amount=0.5)
for bad in [
    lambda: prune.l1_unstructured(nn.Linear(4, 3), "weight", amount=1.5),
    lambda: prune.random_unstructured(nn.Linear(4, 3), "weight", amount=-0.2),
    lambda: prune.l1_unstructured(nn.Linear(4, 3), "weights", amount=0.2),
    lambda: prune.l1_unstructured(nn.Linear(4, 3), "weight", amount=20),
    lambda: prune.remove(nn.Linear(4, 3), "weight"),
    lambda: prune.ln_structured(nn.Linear(4, 3), "weight", amount=0.5, n=2, dim=3),
    lambda: prune.global_unstructured([(plain, "weight")], prune.L1Unstructured, amount=0.3,
                                      importance_scores={(pruned, "weight"): torch.ones(3, 4)}),
    lambda: prune.global_unstructured([(plain, "weight")], prune.L1Unstructured, amount=0.3,
                                      importance_scores={(plain, "weight"): torch.ones(2, 4)}),
    lambda: nn.Linear(4, 3).load_state_dict(pruned.state_dict()),
    lambda: AveragedModel(pruned),
    lambda: F.kl_div(log_p, F.softmax(t_logits, 1)[:, :3], reduction="batchmean"),
]:
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__ + ":", str(e).replace("\n", " | "))
print(nn.Linear(4, 3).load_state_dict(pruned.state_dict(), strict=False))
