"""TabNet on random tabular data: sparsemax and entmax15 as custom autograd Functions,
Ghost Batch Normalization, shared and step-specific GLU blocks, an attentive transformer
with prior scaling, the sparsity regulariser, categorical embeddings, training with a
DataLoader, Adam and StepLR, explain masks and feature importances, and a plain MLP to
compare with (as in pytorch-tabnet and Arik & Pfister's paper)."""

import math

import numpy as np
import torch
from torch import nn
from torch.autograd import Function
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


# -- sparsemax / entmax15 ----------------------------------------------------------------
def _make_ix_like(x, dim):
    """1, 2, ..., d shaped to broadcast along `dim`."""
    d = x.size(dim)
    rho = torch.arange(1, d + 1, device=x.device, dtype=x.dtype)
    view = [1] * x.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


class SparsemaxFunction(Function):
    """Euclidean projection onto the simplex (Martins & Astudillo, 2016)."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        max_val, _ = x.max(dim=dim, keepdim=True)
        x = x - max_val
        tau, supp_size = SparsemaxFunction._threshold_and_support(x, dim=dim)
        output = torch.clamp(x - tau, min=0)
        ctx.save_for_backward(supp_size, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        supp_size, output = ctx.saved_tensors
        dim = ctx.dim
        grad_input = grad_output.clone()
        grad_input[output == 0] = 0
        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze(dim)
        v_hat = v_hat.unsqueeze(dim)
        grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
        return grad_input, None

    @staticmethod
    def _threshold_and_support(x, dim=-1):
        x_srt, _ = torch.sort(x, descending=True, dim=dim)
        x_cumsum = x_srt.cumsum(dim) - 1
        rhos = _make_ix_like(x, dim)
        support = rhos * x_srt > x_cumsum
        support_size = support.sum(dim=dim).unsqueeze(dim)
        tau = x_cumsum.gather(dim, support_size - 1)
        tau /= support_size.to(x.dtype)
        return tau, support_size


class Entmax15Function(Function):
    """1.5-entmax (Peters, Niculae & Martins, 2019): sparse, but smoother than sparsemax."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        max_val, _ = x.max(dim=dim, keepdim=True)
        x = (x - max_val) / 2
        tau_star, _ = Entmax15Function._threshold_and_support(x, dim)
        output = torch.clamp(x - tau_star, min=0) ** 2
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        gppr = y.sqrt()
        dx = grad_output * gppr
        q = dx.sum(ctx.dim) / gppr.sum(ctx.dim)
        q = q.unsqueeze(ctx.dim)
        dx -= q * gppr
        return dx, None

    @staticmethod
    def _threshold_and_support(x, dim=-1):
        xsrt, _ = torch.sort(x, descending=True, dim=dim)
        rho = _make_ix_like(x, dim)
        mean = xsrt.cumsum(dim) / rho
        mean_sq = (xsrt ** 2).cumsum(dim) / rho
        ss = rho * (mean_sq - mean ** 2)
        delta = (1 - ss) / rho
        delta_nz = torch.clamp(delta, 0)
        tau = mean - torch.sqrt(delta_nz)
        support_size = (tau <= xsrt).sum(dim).unsqueeze(dim)
        tau_star = tau.gather(dim, support_size - 1)
        return tau_star, support_size


def sparsemax(x, dim=-1):
    return SparsemaxFunction.apply(x, dim)


def entmax15(x, dim=-1):
    return Entmax15Function.apply(x, dim)


print("== sparse maps ==")
z = torch.tensor([[1.0, 0.5, -0.3, 2.0], [0.1, 0.1, 0.1, 0.1], [3.0, -1.0, 2.9, 0.0]])
for name, fn in [("softmax", lambda t: torch.softmax(t, -1)), ("sparsemax", sparsemax),
                 ("entmax15", entmax15)]:
    p = fn(z)
    print(f"{name:9s}", [[round(v, 4) for v in row] for row in p.tolist()],
          "sums", [round(s, 5) for s in p.sum(-1).tolist()],
          "zeros", int((p == 0).sum()))
p0 = sparsemax(z, dim=0)
print("sparsemax dim=0 column sums", [round(s, 5) for s in p0.sum(0).tolist()])
z3 = torch.randn(2, 3, 5)
for d in (0, 1, 2):
    out = sparsemax(z3, dim=d)
    print(f"3-D dim={d}", tuple(out.shape), f"{out.sum(d).mean().item():.5f}",
          int((out > 0).sum()))

zg = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
print("gradcheck sparsemax", torch.autograd.gradcheck(lambda t: sparsemax(t, 1), (zg,)))
print("gradcheck entmax15", torch.autograd.gradcheck(lambda t: entmax15(t, 1), (zg,)))
w = torch.randn(3, 4)
zz = z.clone().requires_grad_()
(sparsemax(zz) * w).sum().backward()
print("sparsemax grad", zz.grad)
print("grad row sums", [round(s, 5) for s in zz.grad.sum(-1).tolist()])
zz.grad = None
(entmax15(zz) * w).sum().backward()
print("entmax15 grad", zz.grad)
print("grad_fn", sparsemax(zz).grad_fn.name(), entmax15(zz).grad_fn.name())


# -- Ghost Batch Normalization -----------------------------------------------------------
class GBN(nn.Module):
    """BatchNorm over virtual batches: the batch is cut into chunks, each normalised alone."""

    def __init__(self, input_dim, virtual_batch_size=32, momentum=0.02):
        super().__init__()
        self.input_dim = input_dim
        self.virtual_batch_size = virtual_batch_size
        self.bn = nn.BatchNorm1d(self.input_dim, momentum=momentum)

    def forward(self, x):
        chunks = x.chunk(int(np.ceil(x.shape[0] / self.virtual_batch_size)), 0)
        res = [self.bn(x_) for x_ in chunks]
        return torch.cat(res, dim=0)


print("== ghost batch norm ==")
gbn = GBN(3, virtual_batch_size=4)
xb = torch.randn(10, 3) * 2 + 1
chunks = xb.chunk(int(np.ceil(10 / 4)), 0)
print("chunk sizes", [c.shape[0] for c in chunks], "of", len(chunks))
yb = gbn(xb)
print("gbn out", yb.shape, f"{yb[:4].mean().item():.5f}",
      f"{yb[:4].std(unbiased=False).item():.5f}")
print("running_mean", gbn.bn.running_mean)
print("running_var", gbn.bn.running_var)
print("num_batches_tracked", gbn.bn.num_batches_tracked.item())
gbn.eval()
print("eval out", gbn(xb[:2]))
gbn.train()


# -- GLU blocks and the feature transformer ---------------------------------------------
def initialize_non_glu(module, input_dim, output_dim):
    gain_value = np.sqrt((input_dim + output_dim) / np.sqrt(4 * input_dim))
    nn.init.xavier_normal_(module.weight, gain=gain_value)


def initialize_glu(module, input_dim, output_dim):
    gain_value = np.sqrt((input_dim + output_dim) / np.sqrt(input_dim))
    nn.init.xavier_normal_(module.weight, gain=gain_value)


class GLULayer(nn.Module):
    def __init__(self, input_dim, output_dim, fc=None, virtual_batch_size=32, momentum=0.02):
        super().__init__()
        self.output_dim = output_dim
        if fc:
            self.fc = fc
        else:
            self.fc = nn.Linear(input_dim, 2 * output_dim, bias=False)
        initialize_glu(self.fc, input_dim, 2 * output_dim)
        self.bn = GBN(2 * output_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)

    def forward(self, x):
        x = self.bn(self.fc(x))
        return torch.mul(x[:, : self.output_dim], torch.sigmoid(x[:, self.output_dim:]))


class GLUBlock(nn.Module):
    """A stack of GLU layers; from the second on, each adds its input scaled by sqrt(0.5)."""

    def __init__(self, input_dim, output_dim, n_glu=2, first=False, shared_layers=None,
                 virtual_batch_size=32, momentum=0.02):
        super().__init__()
        self.first = first
        self.shared_layers = shared_layers
        self.n_glu = n_glu
        self.glu_layers = nn.ModuleList()
        params = {"virtual_batch_size": virtual_batch_size, "momentum": momentum}
        fc = shared_layers[0] if shared_layers else None
        self.glu_layers.append(GLULayer(input_dim, output_dim, fc=fc, **params))
        for glu_id in range(1, self.n_glu):
            fc = shared_layers[glu_id] if shared_layers else None
            self.glu_layers.append(GLULayer(output_dim, output_dim, fc=fc, **params))

    def forward(self, x):
        scale = torch.sqrt(torch.FloatTensor([0.5]).to(x.device))
        if self.first:
            x = self.glu_layers[0](x)
            layers_left = range(1, self.n_glu)
        else:
            layers_left = range(self.n_glu)
        for glu_id in layers_left:
            x = torch.add(x, self.glu_layers[glu_id](x))
            x = x * scale
        return x


class FeatTransformer(nn.Module):
    def __init__(self, input_dim, output_dim, shared_layers, n_glu_independent,
                 virtual_batch_size=32, momentum=0.02):
        super().__init__()
        params = {"n_glu": n_glu_independent, "virtual_batch_size": virtual_batch_size,
                  "momentum": momentum}
        if shared_layers is None:
            self.shared = nn.Identity()
            is_first = True
        else:
            self.shared = GLUBlock(input_dim, output_dim, first=True, shared_layers=shared_layers,
                                   n_glu=len(shared_layers), virtual_batch_size=virtual_batch_size,
                                   momentum=momentum)
            is_first = False
        if n_glu_independent == 0:
            self.specifics = nn.Identity()
        else:
            spec_input_dim = input_dim if is_first else output_dim
            self.specifics = GLUBlock(spec_input_dim, output_dim, first=is_first, **params)

    def forward(self, x):
        x = self.shared(x)
        return self.specifics(x)


class AttentiveTransformer(nn.Module):
    def __init__(self, input_dim, group_dim, virtual_batch_size=32, momentum=0.02,
                 mask_type="sparsemax"):
        super().__init__()
        self.fc = nn.Linear(input_dim, group_dim, bias=False)
        initialize_non_glu(self.fc, input_dim, group_dim)
        self.bn = GBN(group_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)
        self.selector = sparsemax if mask_type == "sparsemax" else entmax15

    def forward(self, priors, processed_feat):
        x = self.bn(self.fc(processed_feat))
        x = torch.mul(x, priors)
        return self.selector(x, -1)


class TabNetEncoder(nn.Module):
    def __init__(self, input_dim, n_d=8, n_a=8, n_steps=3, gamma=1.3, n_independent=2,
                 n_shared=2, epsilon=1e-15, virtual_batch_size=32, momentum=0.02,
                 mask_type="sparsemax"):
        super().__init__()
        self.input_dim = input_dim
        self.n_d, self.n_a, self.n_steps = n_d, n_a, n_steps
        self.gamma = gamma
        self.epsilon = epsilon
        self.initial_bn = nn.BatchNorm1d(self.input_dim, momentum=0.01)
        shared_feat_transform = nn.ModuleList()
        for i in range(n_shared):
            in_dim = self.input_dim if i == 0 else n_d + n_a
            shared_feat_transform.append(nn.Linear(in_dim, 2 * (n_d + n_a), bias=False))
        self.initial_splitter = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform,
                                                n_glu_independent=n_independent,
                                                virtual_batch_size=virtual_batch_size,
                                                momentum=momentum)
        self.feat_transformers = nn.ModuleList()
        self.att_transformers = nn.ModuleList()
        for _ in range(n_steps):
            self.feat_transformers.append(
                FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform,
                                n_glu_independent=n_independent,
                                virtual_batch_size=virtual_batch_size, momentum=momentum))
            self.att_transformers.append(
                AttentiveTransformer(n_a, self.input_dim, virtual_batch_size=virtual_batch_size,
                                     momentum=momentum, mask_type=mask_type))

    def forward(self, x, prior=None):
        x = self.initial_bn(x)
        bs = x.shape[0]
        if prior is None:
            prior = torch.ones((bs, self.input_dim)).to(x.device)
        M_loss = 0
        att = self.initial_splitter(x)[:, self.n_d:]
        steps_output = []
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            M_loss += torch.mean(torch.sum(torch.mul(M, torch.log(M + self.epsilon)), dim=1))
            prior = torch.mul(self.gamma - M, prior)
            masked_x = torch.mul(M, x)
            out = self.feat_transformers[step](masked_x)
            d = nn.ReLU()(out[:, : self.n_d])
            steps_output.append(d)
            att = out[:, self.n_d:]
        M_loss /= self.n_steps
        return steps_output, M_loss

    def forward_masks(self, x):
        x = self.initial_bn(x)
        bs = x.shape[0]
        prior = torch.ones((bs, self.input_dim)).to(x.device)
        M_explain = torch.zeros(x.shape).to(x.device)
        att = self.initial_splitter(x)[:, self.n_d:]
        masks = {}
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            masks[step] = M
            prior = torch.mul(self.gamma - M, prior)
            masked_x = torch.mul(M, x)
            out = self.feat_transformers[step](masked_x)
            d = nn.ReLU()(out[:, : self.n_d])
            step_importance = torch.sum(d, dim=1)
            M_explain += torch.mul(M, step_importance.unsqueeze(dim=1))
            att = out[:, self.n_d:]
        return M_explain, masks


class EmbeddingGenerator(nn.Module):
    """Numeric columns pass through; each categorical column becomes an embedding."""

    def __init__(self, input_dim, cat_dims, cat_idxs, cat_emb_dims):
        super().__init__()
        self.cat_idxs = cat_idxs
        self.post_embed_dim = int(input_dim + np.sum(cat_emb_dims) - len(cat_emb_dims))
        self.embeddings = nn.ModuleList(
            nn.Embedding(cat_dim, emb_dim) for cat_dim, emb_dim in zip(cat_dims, cat_emb_dims))
        self.continuous_idx = torch.ones(input_dim, dtype=torch.bool)
        self.continuous_idx[cat_idxs] = 0

    def forward(self, x):
        cols = []
        cat_feat_counter = 0
        for feat_init_idx, is_continuous in enumerate(self.continuous_idx):
            if is_continuous:
                cols.append(x[:, feat_init_idx].float().view(-1, 1))
            else:
                cols.append(self.embeddings[cat_feat_counter](x[:, feat_init_idx].long()))
                cat_feat_counter += 1
        return torch.cat(cols, dim=1)


class TabNet(nn.Module):
    def __init__(self, input_dim, output_dim, cat_idxs, cat_dims, cat_emb_dim=2, n_d=8, n_a=8,
                 n_steps=3, gamma=1.3, virtual_batch_size=32, mask_type="sparsemax"):
        super().__init__()
        self.embedder = EmbeddingGenerator(input_dim, cat_dims, cat_idxs,
                                           [cat_emb_dim] * len(cat_idxs))
        self.post_embed_dim = self.embedder.post_embed_dim
        self.encoder = TabNetEncoder(self.post_embed_dim, n_d=n_d, n_a=n_a, n_steps=n_steps,
                                     gamma=gamma, virtual_batch_size=virtual_batch_size,
                                     mask_type=mask_type)
        self.final_mapping = nn.Linear(n_d, output_dim, bias=False)
        initialize_non_glu(self.final_mapping, n_d, output_dim)

    def forward(self, x):
        steps_output, M_loss = self.encoder(self.embedder(x))
        res = torch.sum(torch.stack(steps_output, dim=0), dim=0)
        return self.final_mapping(res), M_loss

    def forward_masks(self, x):
        return self.encoder.forward_masks(self.embedder(x))


# -- data --------------------------------------------------------------------------------
print("== data ==")
# NOTE: sparse masks switch their support on tiny changes and Adam turns tiny gradients into
# full steps, so float32 training curves depend on the last bits of each BLAS build; the
# models train in float64 to print reproducible curves.
torch.set_default_dtype(torch.float64)
n_rows, n_num = 384, 6
cat_dims = [4, 3]
x_num = torch.randn(n_rows, n_num)
x_cat = torch.stack([torch.randint(0, d, (n_rows,)) for d in cat_dims], dim=1)
logit = 1.5 * x_num[:, 0] - 2.0 * x_num[:, 2] + x_num[:, 1] * x_num[:, 3] + (x_cat[:, 0] == 2) * 1.5
y = (logit > logit.median()).long() + (logit > logit.quantile(0.8)).long()
X = torch.cat([x_num, x_cat.float()], dim=1)
cat_idxs = [n_num, n_num + 1]
print("X", tuple(X.shape), X.dtype, "classes", torch.bincount(y).tolist())
n_train = 256
train_ds = TensorDataset(X[:n_train], y[:n_train])
valid_X, valid_y = X[n_train:], y[n_train:]
loader = DataLoader(train_ds, batch_size=64, shuffle=True, drop_last=True,
                    generator=torch.Generator().manual_seed(1))
print("batches per epoch", len(loader), "dataset", len(train_ds))
xb0, yb0 = next(iter(loader))
print("first batch", tuple(xb0.shape), xb0.dtype, tuple(yb0.shape), yb0.dtype)


# -- training ----------------------------------------------------------------------------
def accuracy(logits, target):
    return (logits.argmax(1) == target).float().mean().item()


def train_tabnet(mask_type, epochs=4, lambda_sparse=1e-3):
    torch.manual_seed(2)
    model = TabNet(X.shape[1], 3, cat_idxs, cat_dims, n_d=8, n_a=8, n_steps=3,
                   virtual_batch_size=16, mask_type=mask_type)
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        total, m_total = 0.0, 0.0
        for xb, yb in loader:
            out, m_loss = model(xb)
            loss = loss_fn(out, yb) - lambda_sparse * m_loss
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            opt.step()
            total += loss.item()
            m_total += m_loss.item()
        sched.step()
        model.eval()
        with torch.no_grad():
            val_out, _ = model(valid_X)
        print(f"  [{mask_type}] epoch {epoch} loss {total / len(loader):.4f} "
              f"M_loss {m_total / len(loader):.4f} lr {sched.get_last_lr()[0]:.4f} "
              f"val_acc {accuracy(val_out, valid_y):.4f}")
    return model


print("== tabnet (sparsemax) ==")
model = train_tabnet("sparsemax")
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("parameters", n_params, "post_embed_dim", model.post_embed_dim)
print("shared fc is shared:",
      model.encoder.feat_transformers[0].shared.glu_layers[0].fc
      is model.encoder.feat_transformers[2].shared.glu_layers[0].fc)
bn0 = model.encoder.att_transformers[0].bn.bn
print("att bn running_mean", bn0.running_mean[:4], "tracked", bn0.num_batches_tracked.item())


# -- explain -----------------------------------------------------------------------------
def explain(model, x):
    """Per-row feature importances folded back onto the original columns, and the masks."""
    model.eval()
    with torch.no_grad():
        M_explain, masks = model.forward_masks(x)
    # embedding columns fold back into their original feature
    fold = []
    col = 0
    for i in range(X.shape[1]):
        width = 2 if i in cat_idxs else 1
        fold.append(M_explain[:, col:col + width].sum(1))
        col += width
    res = torch.stack(fold, dim=1)
    return res, masks


res_explain, masks = explain(model, valid_X)
print("explain", tuple(res_explain.shape), "masks", len(masks), tuple(masks[0].shape))
for step, M in masks.items():
    sparsity = (M == 0).float().mean().item()
    top = torch.bincount(M.argmax(1), minlength=M.shape[1])
    print(f"  step {step}: zero fraction {sparsity:.4f} mean support "
          f"{(M > 0).sum(1).float().mean().item():.3f} argmax counts {top.tolist()}")
feature_importances = res_explain.sum(dim=0)
feature_importances = feature_importances / feature_importances.sum()
print("feature importances", [f"{v:.4f}" for v in feature_importances.tolist()])
order = torch.argsort(feature_importances, descending=True, stable=True)
print("ranked features", order.tolist())
# ties keep their column order under a stable sort (the masks give many equal importances)
step_counts = torch.stack([(M > 0).sum(0) for M in masks.values()]).sum(0)
counts_sorted = torch.sort(step_counts, descending=True, stable=True)
print("selection counts", counts_sorted.values.tolist(), counts_sorted.indices.tolist())
imp_leaf = feature_importances.detach().clone().requires_grad_()
ranked = imp_leaf.sort(stable=True, descending=True).values
print("sorted importances grad_fn", ranked.grad_fn.name(), imp_leaf.sort().values.grad_fn.name())
row_norm = res_explain / res_explain.sum(1, keepdim=True).clamp_min(1e-12)
print("row-normalised explain[0]", [f"{v:.4f}" for v in row_norm[0].tolist()])

print("== tabnet (entmax15) ==")
model_e = train_tabnet("entmax15", epochs=2)
_, masks_e = explain(model_e, valid_X)
print("entmax zero fraction", [f"{(m == 0).float().mean().item():.4f}" for m in masks_e.values()])


# -- plain MLP baseline ------------------------------------------------------------------
print("== mlp baseline ==")
torch.manual_seed(3)
emb = EmbeddingGenerator(X.shape[1], cat_dims, cat_idxs, [2, 2])
mlp = nn.Sequential(emb, nn.Linear(emb.post_embed_dim, 32), nn.ReLU(), nn.BatchNorm1d(32),
                    nn.Linear(32, 3))
opt = torch.optim.Adam(mlp.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(4):
    mlp.train()
    total = 0.0
    for xb, yb in loader:
        loss = nn.functional.cross_entropy(mlp(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    mlp.eval()
    with torch.no_grad():
        acc = accuracy(mlp(valid_X), valid_y)
    print(f"  epoch {epoch} loss {total / len(loader):.4f} val_acc {acc:.4f}")
n_mlp = sum(p.numel() for p in mlp.parameters())
print("mlp parameters", n_mlp, "ratio", f"{n_params / n_mlp:.3f}", "log",
      f"{math.log(n_params):.4f}")

# -- typical mistakes --------------------------------------------------------------------
try:
    GBN(3, virtual_batch_size=1)(torch.randn(3, 3))
except ValueError as e:
    print("ValueError:", e)
try:
    sparsemax(torch.randn(2, 3), dim=2)
except IndexError as e:
    print("IndexError:", e)
try:  # a float32 batch through a float64 model
    GBN(3).double()(torch.randn(8, 3, dtype=torch.float32))
except RuntimeError as e:
    print("RuntimeError:", e)
