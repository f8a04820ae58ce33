"""Looking inside small networks: hooks, patching, attributions, Jacobians, an SAE.

A practitioner's interpretability notebook on two toy models (a 2-layer transformer and
an MLP, weights seeded, synthetic inputs): activation caching and patching with forward
hooks, backward hooks, tensor hooks, saliency / gradient x input / integrated gradients /
SmoothGrad, autograd.functional and torch.func Jacobians, a TopK sparse autoencoder on
recorded activations, the logit lens, attention patterns and neuron ablation, plus the
mistakes people make along the way.
"""

import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vjp
from torch.func import functional_call, jacfwd, jacrev, vmap
from torch.func import grad as fgrad
from torch.func import hessian as fhessian
from torch.func import jvp as fjvp
from torch.func import vjp as fvjp
from torch.utils.hooks import RemovableHandle


def fmt(t, n=4):
    """A tensor's values, flattened, with n significant digits."""
    return "[" + ", ".join(f"{v:.{n}g}" for v in t.detach().reshape(-1).tolist()) + "]"


def section(title):
    print(f"\n== {title} ==")


# ---------------------------------------------------------------- models
class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask=None):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab=11, d=16, heads=2, n_layers=2, ctx=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(ctx, d) * 0.1)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d)
        self.unembed = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        T = tokens.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        x = self.embed(tokens) + self.pos[:T]
        for blk in self.blocks:
            x = blk(x, mask)
        return self.unembed(self.ln_f(x))


torch.manual_seed(0)
model = TinyTransformer().eval()
mlp = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 8), nn.Softplus(), nn.Linear(8, 3))
tokens = torch.randint(0, 11, (2, 8))
corrupt = tokens.clone()
corrupt[:, 2] = (corrupt[:, 2] + 5) % 11
x_in = torch.randn(5, 6)

section("module listings")
for name, mod in model.named_modules():
    if name.count(".") <= 1:
        print(f"{name or '<root>'}: {type(mod).__name__}")
print("own params:", [n for n, _ in model.named_parameters(recurse=False)])
print("attn own params:", [(n, tuple(p.shape)) for n, p in
                           model.get_submodule("blocks.0.attn").named_parameters(recurse=False)])
print("n params:", sum(p.numel() for p in model.parameters()))
print("mlp.2:", model.get_submodule("blocks.1.mlp.2"))
try:
    model.get_submodule("blocks.3")
except AttributeError as e:
    print("AttributeError:", e)
try:
    model.get_submodule("blocks.0.nope")
except AttributeError as e:
    print("AttributeError:", e)

# ---------------------------------------------------------------- caching activations
section("activation cache")
cache = {}


def save_to(name):
    def hook(mod, args, kwargs, out):
        cache[name] = out.detach()
    return hook


handles = [model.blocks[i].register_forward_hook(save_to(f"resid_{i}"), with_kwargs=True)
           for i in range(2)]
handles.append(model.blocks[0].mlp[1].register_forward_hook(
    lambda m, a, o: cache.__setitem__("gelu_0", o.detach())))
with torch.no_grad():
    clean_logits = model(tokens)
for h in handles:
    h.remove()
print("handle type:", type(handles[0]).__name__, isinstance(handles[0], RemovableHandle))
for k, v in cache.items():
    print(f"{k}: shape={tuple(v.shape)} mean={v.mean().item():.5f} std={v.std().item():.5f}")
print("clean logits[0,-1]:", fmt(clean_logits[0, -1]))
print("hooks left:", len(model.blocks[0]._forward_hooks))

order = []
with torch.no_grad():
    blk = model.blocks[0].mlp
    hs = [blk.register_forward_hook(lambda m, a, o: order.append("A")),
          blk.register_forward_hook(lambda m, a, o: order.append("B"), prepend=True),
          blk.register_forward_pre_hook(lambda m, a: order.append("pre"))]
    model(tokens[:1])
    for h in hs:
        h.remove()
print("hook order:", order)

with RemovableHandle(model.ln_f._forward_hooks) as _:
    pass
with model.ln_f.register_forward_hook(lambda m, a, o: o * 0) as h:
    with torch.no_grad():
        print("zeroed ln_f logits sum:", f"{model(tokens).abs().sum().item():.4f}")
with torch.no_grad():
    print("after with-block:", f"{model(tokens).abs().sum().item():.4f}")

# always_call: hook runs even when forward raises
seen = []


class Boom(nn.Module):
    def forward(self, x):
        raise RuntimeError("boom in forward")


boom = Boom()
boom.register_forward_hook(lambda m, a, o: seen.append(o is None), always_call=True)
try:
    boom(torch.ones(1))
except RuntimeError as e:
    print("RuntimeError:", e, "| always_call hook ran:", seen)

# ---------------------------------------------------------------- pre-hooks rewriting args
section("forward pre-hooks")
lin = mlp[0]
h = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
print("doubled input:", fmt(mlp(x_in[:1])))
h.remove()
h = lin.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] + 1,), kwargs),
                                  with_kwargs=True)
print("shifted input:", fmt(mlp(x_in[:1])))
h.remove()
print("plain:", fmt(mlp(x_in[:1])))

# ---------------------------------------------------------------- activation patching
section("activation patching")
metric_tok = tokens[:, -1]


def logit_diff(logits):
    return (logits[:, -1].gather(1, metric_tok[:, None]).squeeze(1)
            - logits[:, -1].mean(1)).mean()


with torch.no_grad():
    corrupt_logits = model(corrupt)
clean_score = logit_diff(clean_logits).item()
corrupt_score = logit_diff(corrupt_logits).item()
print(f"clean={clean_score:.5f} corrupt={corrupt_score:.5f}")

results = torch.zeros(2, 8)
for layer in range(2):
    for pos in range(8):
        def patch(mod, args, out, pos=pos, layer=layer):
            out = out.clone()
            out[:, pos] = cache[f"resid_{layer}"][:, pos]
            return out
        h = model.blocks[layer].register_forward_hook(patch)
        with torch.no_grad():
            s = logit_diff(model(corrupt)).item()
        h.remove()
        results[layer, pos] = (s - corrupt_score) / (clean_score - corrupt_score + 1e-9)
print("patching (layer x pos):")
print(results)
print("argmax:", divmod(results.abs().argmax().item(), 8))

# ---------------------------------------------------------------- backward hooks
section("backward hooks")
grads_seen = {}


def bw_hook(name):
    def hook(mod, grad_input, grad_output):
        grads_seen[name] = (tuple(g.shape if g is not None else None for g in grad_input),
                            grad_output[0].norm().item())
    return hook


def bw_pre(mod, grad_output):
    return (grad_output[0] * 0.5,)


mlp.zero_grad()
hs = [mlp[1].register_full_backward_hook(bw_hook("tanh")),
      mlp[4].register_full_backward_hook(bw_hook("out")),
      mlp[4].register_full_backward_pre_hook(bw_pre)]
xg = x_in.clone().requires_grad_()
mlp(xg).sum().backward()
for k, (shapes, n) in grads_seen.items():
    print(f"{k}: grad_input shapes={shapes} |grad_output|={n:.5f}")
print("x grad (halved):", fmt(xg.grad[0]))
for h in hs:
    h.remove()
xg.grad = None
mlp(xg).sum().backward()
print("x grad (plain):", fmt(xg.grad[0]))

# ---------------------------------------------------------------- tensor hooks
section("tensor hooks")
w = torch.randn(3, requires_grad=True)
acc = []
w.register_post_accumulate_grad_hook(lambda p: acc.append(p.grad.clone()))
hid = w * 3
hid.retain_grad()
hid.register_hook(lambda g: g * 10)
out = (hid ** 2).sum()
out.backward()
print("hid.grad (retain, before hook):", fmt(hid.grad))
print("w.grad:", fmt(w.grad))
print("post-accumulate saw:", fmt(acc[0]))
print("hid.grad_fn:", type(hid.grad_fn).__name__, "out.grad_fn:", type(out.grad_fn).__name__)
w.retain_grad()
print("leaf retains_grad:", w.retains_grad, "hid:", hid.retains_grad)

# ---------------------------------------------------------------- attributions
section("saliency and gradient x input")
mlp.eval()
xs = x_in.clone().requires_grad_()
logits = mlp(xs)
target = logits.argmax(1)
print("targets:", target.tolist())
score = logits.gather(1, target[:, None]).sum()
(g,) = torch.autograd.grad(score, xs)
print("saliency[0]:", fmt(g[0].abs()))
print("grad x input[0]:", fmt((g * xs)[0]))
print("top feature per row:", (g * xs).abs().argmax(1).tolist())

section("integrated gradients")
baseline = torch.zeros(6)
x0 = x_in[0]
steps = 33
alphas = torch.linspace(0, 1, steps)
path = baseline + alphas[:, None] * (x0 - baseline)
path.requires_grad_(True)
out = mlp(path)[:, target[0]]
(pg,) = torch.autograd.grad(out.sum(), path)
ig_trap = (x0 - baseline) * torch.trapezoid(pg, alphas, dim=0)
ig_riemann = (x0 - baseline) * pg[:-1].mean(0)
ig_dx = (x0 - baseline) * torch.trapezoid(pg, dx=1.0 / (steps - 1), dim=0)
with torch.no_grad():
    delta = mlp(x0[None])[0, target[0]] - mlp(baseline[None])[0, target[0]]
print("IG trapezoid:", fmt(ig_trap))
print("IG riemann:", fmt(ig_riemann))
print(f"completeness: sum={ig_trap.sum().item():.5f} delta={delta.item():.5f}")
print("dx form equal:", torch.allclose(ig_trap, ig_dx, atol=1e-6))
print("cumulative:", fmt(torch.cumulative_trapezoid(pg[:, 0], alphas)[::8]))

section("smoothgrad")
gen = torch.Generator().manual_seed(1234)
noise = torch.randn(16, 6, generator=gen) * 0.15
noisy = (x0 + noise).requires_grad_()
(ng,) = torch.autograd.grad(mlp(noisy)[:, target[0]].sum(), noisy)
print("smoothgrad:", fmt(ng.mean(0)))
print("smoothgrad^2:", fmt((ng ** 2).mean(0)))
print("vargrad:", fmt(ng.var(0)))

# ---------------------------------------------------------------- autograd.grad options
section("autograd.grad options")
a = torch.randn(4, requires_grad=True)
b = torch.randn(4, requires_grad=True)
y = (a.sin() * a).sum()
ga, gb = torch.autograd.grad(y, (a, b), create_graph=True, allow_unused=True)
print("ga:", fmt(ga), "gb:", gb, "ga.requires_grad:", ga.requires_grad)
ga2, gb2 = torch.autograd.grad(y, (a, b), create_graph=True, allow_unused=True,
                               materialize_grads=True)
print("gb materialized:", fmt(gb2))
(gga,) = torch.autograd.grad(ga2.sum(), a)
print("second derivative:", fmt(gga))
try:
    torch.autograd.grad(y, (a, b))
except RuntimeError as e:
    print("RuntimeError:", str(e).split("\n")[0][:90])

# ---------------------------------------------------------------- autograd.functional
section("autograd.functional")


def f_vec(x):
    return torch.stack([x[0] * x[1], x[1].exp(), (x ** 2).sum()])


def f_scalar(x):
    return (x.tanh() * x.flip(0)).sum()


xv = torch.tensor([0.5, -1.0, 2.0])
J = jacobian(f_vec, xv)
print("jacobian:\n", J)
print("vectorized equal:", torch.allclose(J, jacobian(f_vec, xv, vectorize=True)))
print("forward-mode equal:",
      torch.allclose(J, jacobian(f_vec, xv, vectorize=True, strategy="forward-mode")))
H = hessian(f_scalar, xv)
print("hessian:\n", H)
print("symmetric:", torch.allclose(H, H.T, atol=1e-6))
v = torch.tensor([1.0, 0.0, -1.0])
out, vj = vjp(f_vec, xv, torch.tensor([1.0, 1.0, 1.0]))
print("vjp:", fmt(out), fmt(vj))
out, jv = jvp(f_vec, xv, v)
print("jvp:", fmt(jv))
out, hv = hvp(f_scalar, xv, v)
print(f"hvp: f={out.item():.5f}", fmt(hv), "H@v:", fmt(H @ v))
Jm = jacobian(lambda inp: mlp(inp), x_in[:1])
print("mlp jacobian shape:", tuple(Jm.shape), "norm:", f"{Jm.norm().item():.5f}")
J2 = jacobian(lambda p, q: (p * q).sum(0), (torch.ones(2, 3), torch.arange(6.0).reshape(2, 3)))
print("two-input jacobian:", [tuple(j.shape) for j in J2], fmt(J2[1][0]))

# ---------------------------------------------------------------- torch.func
section("torch.func")
params = {k: v.detach() for k, v in mlp.named_parameters()}


def model_out(p, x):
    return functional_call(mlp, p, (x,))


jr = jacrev(model_out, argnums=1)(params, x_in[0])
jf = jacfwd(model_out, argnums=1)(params, x_in[0])
print("jacrev:", tuple(jr.shape), "jacfwd equal:", torch.allclose(jr, jf, atol=1e-6))
per_ex = vmap(jacrev(model_out, argnums=1), in_dims=(None, 0))(params, x_in)
print("per-example jacobians:", tuple(per_ex.shape), fmt(per_ex[2, 0]))
pgrads = jacrev(lambda p, x: model_out(p, x).sum(), argnums=0)(params, x_in)
print("param grads:", {k: tuple(v.shape) for k, v in pgrads.items()})
print("norm 0.bias:", f"{pgrads['0.bias'].norm().item():.5f}")
ps_ex = vmap(lambda x: jacrev(lambda p: model_out(p, x[None]).sum())(params)["4.weight"])(x_in)
print("per-sample 4.weight grads:", tuple(ps_ex.shape), f"{ps_ex.sum().item():.5f}")

# ---------------------------------------------------------------- sparse autoencoder
section("sparse autoencoder")
with torch.no_grad():
    big_tokens = torch.randint(0, 11, (32, 8))
    acts = []
    h = model.blocks[0].register_forward_hook(lambda m, a, o: acts.append(o.reshape(-1, 16)))
    model(big_tokens)
    h.remove()
    acts = torch.cat(acts)
print("activations:", tuple(acts.shape))


class TopKSAE(nn.Module):
    def __init__(self, d, n_feat, k):
        super().__init__()
        self.k = k
        self.enc = nn.Linear(d, n_feat)
        self.dec = nn.Linear(n_feat, d)
        with torch.no_grad():
            self.dec.weight.copy_(F.normalize(self.dec.weight, dim=0))

    def encode(self, x):
        pre = F.relu(self.enc(x - self.dec.bias))
        vals, idx = torch.topk(pre, self.k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, idx, vals)

    def forward(self, x):
        f = self.encode(x)
        return self.dec(f), f


sae = TopKSAE(16, 48, 4)
opt = torch.optim.Adam(sae.parameters(), lr=3e-3)
fired = torch.zeros(48, dtype=torch.long)
for step in range(60):
    recon, feats = sae(acts)
    mse = F.mse_loss(recon, acts)
    l1 = feats.abs().sum(-1).mean()
    loss = mse + 1e-3 * l1
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        sae.dec.weight.copy_(F.normalize(sae.dec.weight, dim=0))
        fired += (feats > 0).sum(0)
    if step % 20 == 0 or step == 59:
        print(f"step {step:2d} mse={mse.item():.5f} l1={l1.item():.4f}")
with torch.no_grad():
    recon, feats = sae(acts)
    fve = 1 - (recon - acts).pow(2).sum() / (acts - acts.mean(0)).pow(2).sum()
print(f"fraction of variance explained: {fve.item():.4f}")
print("L0:", (feats > 0).float().sum(-1).mean().item())
print("dead features:", int((fired == 0).sum()), "of", fired.numel())
print("decoder col norms:", fmt(sae.dec.weight.norm(dim=0)[:4]))
print("top features:", torch.bincount(feats.argmax(-1), minlength=48).topk(3).indices.tolist())

# ---------------------------------------------------------------- logit lens
section("logit lens")
with torch.no_grad():
    x = model.embed(tokens) + model.pos[:8]
    states = [x]
    mask = torch.triu(torch.full((8, 8), float("-inf")), diagonal=1)
    for blk in model.blocks:
        x = blk(x, mask)
        states.append(x)
    for i, s in enumerate(states):
        lp = model.unembed(model.ln_f(s)).log_softmax(-1)
        final = clean_logits.log_softmax(-1)
        kl = F.kl_div(lp, final, log_target=True, reduction="batchmean")
        print(f"layer {i}: top-1 at last pos={lp[:, -1].argmax(-1).tolist()} "
              f"KL to final={kl.item():.5f}")

# ---------------------------------------------------------------- attention patterns
section("attention patterns")
with torch.no_grad():
    attn = model.blocks[0].attn
    h0 = model.blocks[0].ln1(model.embed(tokens) + model.pos[:8])
    _, pat = attn(h0, h0, h0, attn_mask=mask, need_weights=True, average_attn_weights=False)
    _, avg = attn(h0, h0, h0, attn_mask=mask, need_weights=True)
print("pattern shape:", tuple(pat.shape), "avg shape:", tuple(avg.shape))
print("rows sum to 1:", torch.allclose(pat.sum(-1), torch.ones(2, 2, 8)))
print("head 1, query 3:", fmt(pat[0, 1, 3]))
print("avg equals mean over heads:", torch.allclose(avg, pat.mean(1), atol=1e-6))
ent = -(pat * pat.clamp_min(1e-12).log()).sum(-1).mean((0, 2))
print("per-head entropy:", fmt(ent))
print("prev-token score:", fmt(pat.diagonal(offset=-1, dim1=-2, dim2=-1).mean((0, 2))))

# ---------------------------------------------------------------- neuron ablation
section("neuron ablation")
with torch.no_grad():
    base = mlp(x_in)
    idx = torch.tensor([0, 3, 7])

    def ablate(m, a, o):
        return o.index_fill(-1, idx, 0.0)

    h = mlp[1].register_forward_hook(ablate)
    abl = mlp(x_in)
    h.remove()
    print("ablated change:", f"{(abl - base).abs().max().item():.5f}")
    effects = []
    for n in range(12):
        keep = torch.ones(12)
        keep[n] = 0
        h = mlp[1].register_forward_hook(lambda m, a, o, keep=keep: o * keep)
        effects.append((mlp(x_in) - base).pow(2).mean().item())
        h.remove()
    eff = torch.tensor(effects)
    print("most important neurons:", eff.topk(3).indices.tolist(), fmt(eff.topk(3).values))
    w_backup = mlp[2].weight.clone()
    mlp[2].weight.index_fill_(1, idx, 0.0)
    print("weight ablation equal:", torch.allclose(mlp(x_in), abl, atol=1e-6))
    mlp[2].weight.copy_(w_backup)
    mlp[2].weight.masked_fill_(mlp[2].weight.abs() < 0.1, 0.0)
    print("pruned zeros:", int((mlp[2].weight == 0).sum()))
    mlp[2].weight.copy_(w_backup)

# ---------------------------------------------------------------- more gradients
section("batched grads and forward-mode")
emb = model.embed(tokens[:1]).detach().requires_grad_()


def run_from_embed(e):
    T = e.shape[1]
    m = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
    x = e + model.pos[:T]
    for blk in model.blocks:
        x = blk(x, m)
    return model.unembed(model.ln_f(x))


final = run_from_embed(emb)[0, -1]
eye = torch.eye(11)
(rows,) = torch.autograd.grad(final, emb, grad_outputs=eye, is_grads_batched=True,
                              retain_graph=True)
print("batched grads:", tuple(rows.shape), "token-position attribution of logit 0:",
      fmt(rows[0, 0].norm(dim=-1)))
(one,) = torch.autograd.grad(final[3], emb, retain_graph=True)
print("row 3 matches:", torch.allclose(one, rows[3], atol=1e-6))
with torch.autograd.forward_ad.dual_level():
    dual = torch.autograd.forward_ad.make_dual(x_in[:2], torch.ones(2, 6))
    tang = torch.autograd.forward_ad.unpack_dual(mlp(dual)).tangent
print("forward-mode directional derivative:", fmt(tang[0]))
first_w = next(mlp.parameters())
rev = torch.stack([torch.autograd.grad(mlp(x_in[:2])[:, k].sum(), first_w)[0].sum()
                   for k in range(3)])
print("per-logit weight-grad sums:", fmt(rev))
y1 = mlp(x_in)
torch.autograd.backward([y1[:, 0].sum(), y1[:, 1].sum()], grad_tensors=[torch.tensor(1.0),
                                                                       torch.tensor(-1.0)])
print("backward with grad_tensors, 0.bias grad:", fmt(mlp[0].bias.grad[:4]))
mlp.zero_grad(set_to_none=True)
print("grad after zero_grad:", mlp[0].bias.grad)

section("torch.func extras")


def loss_fn(p, x):
    out = functional_call(mlp, p, (x,))
    return out.logsumexp(-1).mean(), out.detach()


g_p, aux = fgrad(loss_fn, has_aux=True)(params, x_in)
print("grad has_aux:", f"{g_p['4.bias'].sum().item():.5f}", tuple(aux.shape))
o, vjp_fn = fvjp(lambda x: mlp(x), x_in[:2])
(vx,) = vjp_fn(torch.ones_like(o))
print("func.vjp:", fmt(vx[1]))
o, jo = fjvp(lambda x: mlp(x), (x_in[:2],), (torch.ones(2, 6),))
print("func.jvp equals forward_ad:", torch.allclose(jo[0], tang[0], atol=1e-6))
Hx = fhessian(lambda x: mlp(x).logsumexp(-1).sum())(x_in[0])
print("func.hessian:", tuple(Hx.shape), f"trace={Hx.trace().item():.5f}",
      "symmetric:", torch.allclose(Hx, Hx.T, atol=1e-6))
chunked = vmap(jacrev(model_out, argnums=1), in_dims=(None, 0), chunk_size=2)(params, x_in)
print("chunked vmap equal:", torch.allclose(chunked, per_ex, atol=1e-6))

section("probing and head ablation")
fired_count = []
h = model.blocks[0].attn.out_proj.register_forward_hook(lambda m, a, o: fired_count.append(1))
with torch.no_grad():
    model(tokens)
h.remove()
print("out_proj hook fired:", len(fired_count))
calls = {}
gh = torch.nn.modules.module.register_module_forward_hook(
    lambda m, a, o: calls.__setitem__(type(m).__name__, calls.get(type(m).__name__, 0) + 1))
with torch.no_grad():
    model(tokens)
gh.remove()
print("module calls:", sorted(calls.items()))
kw_seen = []
h = model.register_forward_pre_hook(
    lambda m, a, kw: kw_seen.append(sorted(kw)) or None, with_kwargs=True)
with torch.no_grad():
    model(tokens=tokens)
h.remove()
print("pre-hook kwargs:", kw_seen)


def head_mask_hook(head):
    def hook(mod, args, kwargs, out):
        attn_out, weights = out
        return attn_out * 0.0 if head is None else attn_out, weights
    return hook


with torch.no_grad():
    h = model.blocks[1].attn.register_forward_hook(head_mask_hook(None), with_kwargs=True)
    ablated = model(tokens)
    h.remove()
print(f"attn-1 ablation logit change: {(ablated - clean_logits).abs().mean().item():.5f}")

probe_x = acts
probe_y = big_tokens.reshape(-1)
probe = nn.Linear(16, 11)
popt = torch.optim.Adam(probe.parameters(), lr=0.05)
for _ in range(40):
    ploss = F.cross_entropy(probe(probe_x), probe_y)
    popt.zero_grad()
    ploss.backward()
    popt.step()
acc = (probe(probe_x).argmax(-1) == probe_y).float().mean()
print(f"linear probe: loss={ploss.item():.4f} acc={acc.item():.4f}")

with torch.no_grad():
    resid = states[-1][:, -1]
    direct = torch.einsum("bd,vd->bv", model.ln_f(resid), model.unembed.weight)
    contrib = [torch.einsum("bd,d->b", s[:, -1] - (states[i - 1][:, -1] if i else 0),
                            model.unembed.weight[metric_tok[0]]) for i, s in enumerate(states)]
print("direct logit equal:", torch.allclose(direct, clean_logits[:, -1], atol=1e-5))
print("per-layer contributions:", [fmt(c) for c in contrib])

# ---------------------------------------------------------------- grad-cam, old style
section("grad-cam with the legacy backward hook")
torch.manual_seed(7)
cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1),
                    nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))
img = torch.randn(2, 1, 8, 8)
store = {}
fh = cnn[2].register_forward_hook(lambda m, a, o: store.__setitem__("act", o.detach()))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    bh = cnn[2].register_backward_hook(
        lambda m, gi, go: store.__setitem__("shapes", [tuple(g.shape) for g in gi if g is not None])
        or store.__setitem__("grad", go[0].detach()))
    scores = cnn(img)
print("legacy warnings:", [(w.category.__name__, str(w.message)[:60]) for w in caught])
print("is_full_backward_hook:", cnn[2]._is_full_backward_hook)
scores[:, 1].sum().backward()
print("legacy grad_input shapes:", store["shapes"])
weights = store["grad"].mean((2, 3), keepdim=True)
cam = F.relu((weights * store["act"]).sum(1))
cam = cam / cam.flatten(1).max(1).values[:, None, None].clamp_min(1e-8)
print("cam:", tuple(cam.shape), fmt(cam[0, 3]))
fh.remove()
bh.remove()
try:
    cnn[2].register_full_backward_hook(lambda m, gi, go: None)
except RuntimeError as e:
    print("RuntimeError:", e)
full = {}
cnn[0].register_full_backward_hook(lambda m, gi, go: full.__setitem__("gi", gi))
cnn.zero_grad()
cnn(img.requires_grad_())[:, 1].sum().backward()
print("full hook grad_input:", [tuple(g.shape) for g in full["gi"]],
      "equals input grad:", torch.allclose(full["gi"][0], img.grad))

# ---------------------------------------------------------------- mistakes
section("typical mistakes")
h = mlp[0].register_forward_hook(lambda m, a, o: "not a tensor")
try:
    out = mlp(x_in)
    print("no error:", type(out).__name__)
except Exception as e:
    print(type(e).__name__ + ":", str(e)[:100])
h.remove()

h = mlp[0].register_forward_pre_hook(lambda m, a: 42)
try:
    mlp(x_in)
except Exception as e:
    print(type(e).__name__ + ":", str(e)[:100])
h.remove()


class InplaceReLU(nn.Module):
    def forward(self, x):
        return x.relu_()


seq = nn.Sequential(nn.Linear(3, 3), InplaceReLU())
seq[1].register_full_backward_hook(lambda m, gi, go: None)
try:
    seq(torch.randn(2, 3)).sum().backward()
    print("no error")
except RuntimeError as e:
    print("RuntimeError:", str(e)[:80])

try:
    yy = torch.randn(3, requires_grad=True) * 2
    yy.backward()
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.autograd.grad(yy, yy)
except RuntimeError as e:
    print("RuntimeError:", e)

leaf = torch.randn(2, requires_grad=True)
leaf.retain_grad()
(leaf * 2).sum().backward()
print("retain_grad on leaf ok:", fmt(leaf.grad), leaf.retains_grad)
nograd = torch.randn(2)
try:
    nograd.retain_grad()
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    nograd.register_hook(lambda g: g)
except RuntimeError as e:
    print("RuntimeError:", e)

try:
    jacobian(lambda x: x.sum().item(), xv)
except TypeError as e:
    print("TypeError:", e)
try:
    jacobian(lambda x: [x * 2], xv)
except TypeError as e:
    print("TypeError:", e)
try:
    jacobian(f_vec, [1.0, 2.0])
except TypeError as e:
    print("TypeError:", e)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    nl = torch.randn(2, requires_grad=True) * 1
    _ = nl.grad
print("warnings:", [(w.category.__name__, str(w.message)[:60]) for w in caught])

try:
    torch.func.jacrev(lambda x: x.sum().item())(xv)
except Exception as e:
    print(type(e).__name__ + ":", str(e)[:90])

h = mlp[0].register_forward_pre_hook(lambda m, a, kw: "bad", with_kwargs=True)
try:
    mlp(x_in)
except RuntimeError as e:
    print("RuntimeError:", e)
h.remove()
h = mlp[2].register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
try:
    mlp(x_in.requires_grad_()).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
h.remove()
t = torch.randn(3, requires_grad=True)
t2 = t * 2
t2.register_hook(lambda g: g[:2])
try:
    t2.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.autograd.grad(mlp(x_in).sum(), [mlp[0].weight, torch.ones(2)])
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    hessian(lambda x: x * 2, xv)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    fgrad(lambda x: x * 2)(xv)
except RuntimeError as e:
    print("RuntimeError:", e)
print(f"done: {math.pi:.4f}")
