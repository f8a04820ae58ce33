"""Selective state-space models written by hand, as the Mamba and S4D papers' reference code
does: a Mamba block (in_proj, chunk into x and gate, depthwise causal Conv1d sliced to L, SiLU,
softplus dt with dt_bias, A from A_log, discretisation by exp, a sequential selective scan
against parallel scans by cumsum / logcumsumexp / cumprod, einsum, skip D, RMSNorm, residual
stack), an S4D layer (complex diagonal A by view_as_complex / polar, a Vandermonde kernel,
convolution by rfft / irfft), the HiPPO-LegS matrix and its eigenvalues, training on a
selective-copying task with AdamW, two parameter groups, clip_grad_norm_ and a cosine
schedule, gradcheck of the scan in float64, recurrent inference with a cached conv state,
and the usual mistakes."""

import math

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def fmt(t, digits=4):
    """A flat tensor as a list of numbers with `digits` significant digits."""
    return "[" + ", ".join(f"{v:.{digits}g}" for v in t.reshape(-1).tolist()) + "]"


# --- selective scans ------------------------------------------------------------------
def scan_sequential(u, delta, A, B, C, D):
    """h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t ;  y_t = C_t h_t + D u_t (a Python loop)."""
    b, L, d = u.shape
    deltaA = torch.exp(delta.unsqueeze(-1) * A)  # (b, L, d, n)
    deltaB_u = torch.einsum("bld,bln,bld->bldn", delta, B, u)
    h = u.new_zeros(b, d, A.shape[-1])
    ys = []
    for t in range(L):
        h = deltaA[:, t] * h + deltaB_u[:, t]
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
    return torch.stack(ys, dim=1) + u * D


def scan_cumsum(u, delta, A, B, C, D):
    """The same recurrence in closed form: prefix sums of delta*A give every decay at once."""
    dA = delta.unsqueeze(-1) * A  # log of the per-step decay, (b, L, d, n)
    S = torch.cumsum(dA, dim=1)
    x = torch.einsum("bld,bln,bld->bldn", delta, B, u)
    # h_t = sum_{s<=t} exp(S_t - S_s) x_s, masked to the causal triangle
    diff = S.unsqueeze(2) - S.unsqueeze(1)  # (b, t, s, d, n)
    L = u.shape[1]
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    w = torch.exp(diff.masked_fill(~mask[None, :, :, None, None], -math.inf))
    h = torch.einsum("btsdn,bsdn->btdn", w, x)
    return torch.einsum("bldn,bln->bld", h, C) + u * D


def scan_logcumsumexp(u, delta, A, B, C, D):
    """Heinsen's log-space scan: h_t = exp(S_t) * sum_s exp(log x_s - S_s), x made positive."""
    dA = delta.unsqueeze(-1) * A
    S = torch.cumsum(dA, dim=1)
    x = torch.einsum("bld,bln,bld->bldn", delta, B, u)
    log_x = torch.log(x.to(torch.complex64))  # negative x: log of a complex number
    h = torch.exp(S + torch.logcumsumexp(log_x - S, dim=1)).real
    return torch.einsum("bldn,bln->bld", h, C) + u * D


def scan_cumprod(u, delta, A, B, C, D):
    """Prefix products of the decays (fine for short sequences; underflows for long ones)."""
    a = torch.exp(delta.unsqueeze(-1) * A)
    P = torch.cumprod(a, dim=1)
    x = torch.einsum("bld,bln,bld->bldn", delta, B, u)
    h = P * torch.cumsum(x / P, dim=1)
    return torch.einsum("bldn,bln->bld", h, C) + u * D


print("--- selective scan: sequential against parallel ---")
b, L, d, n = 2, 12, 4, 3
u = torch.randn(b, L, d)
delta = F.softplus(torch.randn(b, L, d) - 1.0)
A = -torch.exp(torch.log(torch.arange(1, n + 1).float()).repeat(d, 1))
Bm, Cm = torch.randn(b, L, n), torch.randn(b, L, n)
Dv = torch.ones(d)
y_seq = scan_sequential(u, delta, A, Bm, Cm, Dv)
print("A", A.shape, A.dtype, fmt(A[0]))
print("delta range", f"{delta.min().item():.4f}", f"{delta.max().item():.4f}")
print("y_seq", y_seq.shape, fmt(y_seq[0, -1]))
for name, fn in [("cumsum", scan_cumsum), ("logcumsumexp", scan_logcumsumexp),
                 ("cumprod", scan_cumprod)]:
    y = fn(u, delta, A, Bm, Cm, Dv)
    print(f"{name:13s} {y.dtype} close={torch.allclose(y, y_seq, atol=1e-4, rtol=1e-4)}",
          fmt(y[1, 5]))
lx = torch.log(torch.tensor([-2.0, 0.5, 3.0]).to(torch.complex64))
print("log of complex", lx.dtype, fmt(torch.view_as_real(lx)))
lcse = torch.logcumsumexp(torch.tensor([[0.0, -1.0], [1.0, 2.0], [-math.inf, 0.5]]), dim=0)
print("logcumsumexp", fmt(lcse))
print("cumprod", fmt(torch.cumprod(torch.tensor([0.5, 2.0, -1.5, 0.25]), 0)))


# --- the Mamba block ------------------------------------------------------------------
class RMSNormHand(nn.Module):
    """RMSNorm as the Mamba repo writes it, checked against nn.RMSNorm."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MambaBlock(nn.Module):
    def __init__(self, d_model, d_state=4, d_conv=4, expand=2, dt_rank=None):
        super().__init__()
        self.d_inner = expand * d_model
        self.d_state, self.d_conv = d_state, d_conv
        self.dt_rank = dt_rank or math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False)
        self.conv1d = nn.Conv1d(self.d_inner, self.d_inner, d_conv, groups=self.d_inner,
                                padding=d_conv - 1)
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=True)
        # dt initialised log-uniformly in [1e-3, 1e-1]; the bias is softplus^-1 of it
        dt = torch.exp(torch.rand(self.d_inner) * (math.log(0.1) - math.log(1e-3))
                       + math.log(1e-3)).clamp(min=1e-4)
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(self.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.A_log._no_weight_decay = True
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.D._no_weight_decay = True
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def ssm_params(self, x):
        dbc = self.x_proj(x)
        dt, B, C = torch.split(dbc, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        return delta, B, C

    def forward(self, hidden, scan=scan_cumsum):
        L = hidden.shape[1]
        x, z = self.in_proj(hidden).chunk(2, dim=-1)
        x = self.conv1d(x.transpose(1, 2))[..., :L].transpose(1, 2)
        x = F.silu(x)
        delta, B, C = self.ssm_params(x)
        A = -torch.exp(self.A_log.float())
        y = scan(x, delta, A, B, C, self.D)
        return self.out_proj(y * F.silu(z))

    def step(self, h_t, conv_state, ssm_state):
        """One token: roll the conv cache, then one step of the recurrence."""
        x, z = self.in_proj(h_t).chunk(2, dim=-1)  # (b, d_inner)
        conv_state.copy_(torch.roll(conv_state, shifts=-1, dims=-1))
        conv_state[:, :, -1] = x
        x = torch.sum(conv_state * self.conv1d.weight.squeeze(1), dim=-1) + self.conv1d.bias
        x = F.silu(x)
        delta, B, C = self.ssm_params(x)
        A = -torch.exp(self.A_log.float())
        dA = torch.exp(delta.unsqueeze(-1) * A)
        dBu = torch.einsum("bd,bn->bdn", delta * x, B)
        ssm_state.copy_(ssm_state * dA + dBu)
        y = torch.einsum("bdn,bn->bd", ssm_state, C) + self.D * x
        return self.out_proj(y * F.silu(z))


class ResidualBlock(nn.Module):
    def __init__(self, d_model, **kw):
        super().__init__()
        self.mixer = MambaBlock(d_model, **kw)
        self.norm = nn.RMSNorm(d_model, eps=1e-5)

    def forward(self, x, scan=scan_cumsum):
        return self.mixer(self.norm(x), scan=scan) + x


class MambaLM(nn.Module):
    def __init__(self, vocab, d_model, n_layer, **kw):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([ResidualBlock(d_model, **kw) for _ in range(n_layer)])
        self.norm_f = nn.RMSNorm(d_model, eps=1e-5)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.embedding.weight  # tied

    def forward(self, ids, scan=scan_cumsum):
        x = self.embedding(ids)
        for layer in self.layers:
            x = layer(x, scan=scan)
        return self.lm_head(self.norm_f(x))


print("--- Mamba block ---")
torch.manual_seed(1)
block = MambaBlock(8, d_state=4, d_conv=4)
for name, p in block.named_parameters():
    print(f"{name:16s} {tuple(p.shape)} nwd={getattr(p, '_no_weight_decay', False)}")
print("A_log[0]", fmt(block.A_log[0]), "dt_bias", fmt(block.dt_proj.bias[:3]))
print("softplus(dt_bias)", fmt(F.softplus(block.dt_proj.bias[:3])))
hid = torch.randn(2, 10, 8)
out_seq = block(hid, scan=scan_sequential)
out_par = block(hid)
print("out", out_seq.shape, out_seq.grad_fn.__class__.__name__, fmt(out_seq[0, -1]))
print("parallel == sequential", torch.allclose(out_par, out_seq, atol=1e-5))
conv_out = block.conv1d(torch.randn(1, 16, 10))
print("conv1d padded", tuple(conv_out.shape), "groups", block.conv1d.groups,
      "weight", tuple(block.conv1d.weight.shape))
norm = nn.RMSNorm(8, eps=1e-5)
hand = RMSNormHand(8)
print("RMSNorm matches", torch.allclose(norm(hid), hand(hid), atol=1e-6),
      fmt(norm(hid)[0, 0]))
print("rms of normed", f"{norm(hid).pow(2).mean(-1).sqrt().mean().item():.5f}")
out_seq.sum().backward()
print("grad A_log", fmt(block.A_log.grad[0]), "grad D", fmt(block.D.grad[:4]))


# --- recurrent inference ----------------------------------------------------------------
print("--- recurrent step inference ---")
with torch.no_grad():
    conv_state = torch.zeros(2, block.d_inner, block.d_conv)
    ssm_state = torch.zeros(2, block.d_inner, block.d_state)
    steps = [block.step(hid[:, t], conv_state, ssm_state) for t in range(hid.shape[1])]
    out_rec = torch.stack(steps, dim=1)
    par = block(hid)
print("recurrent", out_rec.shape, "== parallel", torch.allclose(out_rec, par, atol=1e-5))
print("last token", fmt(out_rec[1, -1]))
print("conv_state", tuple(conv_state.shape), "ssm_state norm", f"{ssm_state.norm().item():.4f}")
r = torch.arange(6).reshape(2, 3)
print("roll", torch.roll(r, -1, dims=-1).tolist(), torch.roll(r, 1).tolist(),
      torch.roll(r, (1, 1), (0, 1)).tolist())


# --- S4D: complex diagonal state space --------------------------------------------------
class S4DKernel(nn.Module):
    """The S4D-Lin kernel: K_l = 2 Re(sum_n C_n (exp(dt A_n) - 1)/A_n exp(dt A_n l))."""

    def __init__(self, d_model, N=8, dt_min=1e-3, dt_max=1e-1):
        super().__init__()
        H = d_model
        log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        C = torch.randn(H, N // 2, dtype=torch.cfloat)
        self.C = nn.Parameter(torch.view_as_real(C))
        self.log_dt = nn.Parameter(log_dt)
        self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(H, N // 2)))
        self.A_imag = nn.Parameter(math.pi * torch.arange(N // 2).float().repeat(H, 1))

    def forward(self, L):
        dt = torch.exp(self.log_dt)
        C = torch.view_as_complex(self.C)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag
        dtA = A * dt.unsqueeze(-1)
        K = dtA.unsqueeze(-1) * torch.arange(L, device=A.device)  # (H, N/2, L)
        C = C * (torch.exp(dtA) - 1.0) / A
        return 2 * torch.einsum("hn,hnl->hl", C, torch.exp(K)).real


class S4D(nn.Module):
    def __init__(self, d_model, d_state=8):
        super().__init__()
        self.D = nn.Parameter(torch.randn(d_model))
        self.kernel = S4DKernel(d_model, N=d_state)
        self.out = nn.Sequential(nn.Conv1d(d_model, 2 * d_model, 1), nn.GLU(dim=-2))

    def forward(self, u):  # u: (B, H, L)
        L = u.size(-1)
        k = self.kernel(L)
        k_f = torch.fft.rfft(k, n=2 * L)
        u_f = torch.fft.rfft(u, n=2 * L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L)[..., :L]
        y = y + u * self.D.unsqueeze(-1)
        return self.out(F.gelu(y))


print("--- S4D ---")
torch.manual_seed(2)
s4d = S4D(4, d_state=8)
kern = s4d.kernel(16)
print("kernel", kern.shape, kern.dtype, fmt(kern[0, :6]))
Cc = torch.view_as_complex(s4d.kernel.C)
print("C", Cc.shape, Cc.dtype, "view_as_real", tuple(s4d.kernel.C.shape),
      "abs", fmt(Cc.abs()[0]))
A = -torch.exp(s4d.kernel.log_A_real) + 1j * s4d.kernel.A_imag
print("A", A.dtype, fmt(torch.view_as_real(A[0, :2])))
print(A[0, :3])
print(torch.exp(A[0, :3] * 0.1))
Cz = torch.complex(torch.randn(3, requires_grad=True), torch.zeros(3))
print("complex", Cz.dtype, Cz.grad_fn.__class__.__name__, Cz.abs().grad_fn.__class__.__name__)
print("promotion", (A * 2.0).dtype, (A * torch.ones(1, dtype=torch.float64)).dtype,
      (torch.ones(2, dtype=torch.float64) * 1j).dtype, torch.result_type(A, 2.5),
      torch.promote_types(torch.complex64, torch.float64))
pol = torch.polar(torch.tensor([1.0, 2.0]), torch.tensor([0.0, math.pi / 2]))
print("polar", pol.dtype, fmt(torch.view_as_real(pol)), "angle", fmt(pol.angle()))
u4 = torch.randn(2, 4, 16)
y4 = s4d(u4)
print("S4D out", y4.shape, fmt(y4[0, :, -1]))
# FFT convolution against a direct causal convolution of the kernel
direct = torch.stack([
    torch.stack([(kern[h, :t + 1].flip(0) * u4[:, h, :t + 1]).sum(-1) for t in range(16)], -1)
    for h in range(4)], 1)
fftconv = torch.fft.irfft(torch.fft.rfft(kern, n=32) * torch.fft.rfft(u4, n=32), n=32)[..., :16]
print("fft conv == direct", torch.allclose(fftconv, direct, atol=1e-4), fmt(fftconv[1, 2, :4]))
spec = torch.fft.rfft(kern, n=32)
print("rfft", spec.shape, spec.dtype, f"{spec.abs().max().item():.4f}")
kf = torch.fft.rfft(s4d.kernel(16), n=32)
print("rfft nodes", kf.grad_fn.__class__.__name__,
      [type(f).__name__ for f, _ in kf.grad_fn.next_functions],
      "glu", y4.grad_fn.__class__.__name__)
y4.pow(2).mean().backward()
print("grad C", s4d.kernel.C.grad.shape, f"{s4d.kernel.C.grad.norm().item():.4f}",
      "grad log_dt", fmt(s4d.kernel.log_dt.grad))
# discretisation by recurrence gives the same kernel (ZOH, diagonal A)
with torch.no_grad():
    dt = torch.exp(s4d.kernel.log_dt)[0]
    dA = torch.exp(A[0] * dt)
    dB = (dA - 1.0) / A[0]
    x = torch.zeros(4, dtype=torch.complex64)
    ks = []
    for t in range(6):
        x = dA * x + dB * (1.0 if t == 0 else 0.0)
        ks.append(2 * (Cc[0] * x).sum().real)
print("recurrent kernel", fmt(torch.stack(ks)))


# --- HiPPO-LegS -------------------------------------------------------------------------
def hippo_legs(N):
    q = torch.arange(N, dtype=torch.float64)
    col, row = torch.meshgrid(q, q, indexing="xy")
    r = 2 * q + 1
    M = -(torch.where(row >= col, r, torch.zeros_like(r)) - torch.diag(q))
    T = torch.sqrt(torch.diag(2 * q + 1))
    return T @ M @ torch.linalg.inv(T)


print("--- HiPPO-LegS ---")
N = 8
Ah = hippo_legs(N)
p = torch.sqrt(torch.arange(N, dtype=torch.float64) + 0.5)
n_ = torch.arange(N, dtype=torch.float64)
A2 = -torch.tril(torch.sqrt(torch.outer(2 * n_ + 1, 2 * n_ + 1)), -1) - torch.diag(n_ + 1)
print("forms agree", torch.allclose(Ah, A2),
      "lower-triangular", bool((A2.triu(1) == 0).all()))
print("A[:3,:3]", fmt(A2[:3, :3]))
S = A2 + torch.outer(p, p)  # normal part: -1/2 I + skew
print("skew part", torch.allclose(S + 0.5 * torch.eye(N, dtype=torch.float64),
                                  -(S + 0.5 * torch.eye(N, dtype=torch.float64)).T))
ev = torch.linalg.eigvals(S)
print("eigvals", ev.dtype, f"mean real {ev.real.mean().item():.4f}",
      "all -1/2", torch.allclose(ev.real, torch.full((N,), -0.5, dtype=torch.float64)))
im = torch.sort(ev.imag).values
print("imag sorted", fmt(im, 5))
print("|imag| pairs", fmt(im[N // 2:], 5))
ev_tri = torch.linalg.eigvals(A2)
print("A2 eigvals (diagonal)", fmt(torch.sort(ev_tri.real).values))
print("trace", f"{S.trace().item():.4f}", "sum eig", f"{ev.sum().real.item():.4f}")


# --- training on selective copying ------------------------------------------------------
def selective_copy_batch(batch, L=16, n_tokens=3, vocab=6, gen=None):
    """Tokens 1..vocab-3 scattered among noise 0 in L positions, then a marker and the answer."""
    ids = torch.zeros(batch, L + 1 + n_tokens, dtype=torch.long)
    toks = torch.randint(1, vocab - 2, (batch, n_tokens), generator=gen)
    pos = torch.rand(batch, L, generator=gen).argsort(dim=1)[:, :n_tokens].sort(dim=1).values
    ids[:, :L].scatter_(1, pos, toks)
    ids[:, L] = vocab - 1  # marker
    ids[:, L + 1:] = toks
    return ids


print("--- training a 2-layer Mamba on selective copying ---")
torch.manual_seed(3)
gen = torch.Generator().manual_seed(5)
model = MambaLM(vocab=6, d_model=16, n_layer=2, d_state=4, d_conv=3)
decay, no_decay = [], []
for name, p in model.named_parameters():
    if getattr(p, "_no_weight_decay", False) or "norm" in name or name.endswith(".bias"):
        no_decay.append(p)
    else:
        decay.append(p)
print("params", sum(p.numel() for p in model.parameters()), "groups", len(decay), len(no_decay))
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": no_decay, "weight_decay": 0.0}], lr=1e-2, betas=(0.9, 0.95))
steps = 30
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: min(1.0, (s + 1) / 5) * 0.5 * (1 + math.cos(math.pi * s / steps)))
for step in range(steps):
    ids = selective_copy_batch(16, gen=gen)
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits[:, -3:].reshape(-1, 6), ids[:, -3:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 10 == 0 or step == steps - 1:
        print(f"step {step:2d} loss {loss.item():.4f} gnorm {gn.item():.4f} "
              f"lr {sched.get_last_lr()[0]:.5f}")
print("groups wd", [g["weight_decay"] for g in opt.param_groups],
      "A_log[0,0,:]", fmt(model.layers[0].mixer.A_log[0]))
with torch.no_grad():
    ids = selective_copy_batch(64, gen=gen)
    pred = model(ids[:, :-1])[:, -3:].argmax(-1)
    acc = (pred == ids[:, -3:]).float().mean()
print("eval acc", f"{acc.item():.4f}", "pred dtype", pred.dtype)


# --- gradient of the scan in float64 ----------------------------------------------------
print("--- gradcheck ---")
torch.manual_seed(4)
args = [torch.randn(1, 5, 2, dtype=torch.float64, requires_grad=True),
        F.softplus(torch.randn(1, 5, 2, dtype=torch.float64)).requires_grad_(),
        -torch.rand(2, 3, dtype=torch.float64).add(0.5).requires_grad_(),
        torch.randn(1, 5, 3, dtype=torch.float64, requires_grad=True),
        torch.randn(1, 5, 3, dtype=torch.float64, requires_grad=True),
        torch.randn(2, dtype=torch.float64, requires_grad=True)]
print("sequential", torch.autograd.gradcheck(scan_sequential, args, eps=1e-6, atol=1e-5))
print("cumsum", torch.autograd.gradcheck(scan_cumsum, args, eps=1e-6, atol=1e-5))
print("cumprod", torch.autograd.gradcheck(scan_cumprod, args, eps=1e-6, atol=1e-5))
g_seq = torch.autograd.grad(scan_sequential(*args).sum(), args)
g_par = torch.autograd.grad(scan_cumsum(*args).sum(), args)
print("grads agree", all(torch.allclose(a, c) for a, c in zip(g_seq, g_par)),
      fmt(g_seq[2], 6))
xc = torch.randn(4, dtype=torch.float64, requires_grad=True)
print("logcumsumexp", torch.autograd.gradcheck(lambda t: torch.logcumsumexp(t, 0), (xc,)),
      "cumprod", torch.autograd.gradcheck(lambda t: torch.cumprod(t, 0), (xc,)))


# --- typical mistakes --------------------------------------------------------------------
print("--- mistakes ---")


def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", tuple(out.shape), out.dtype)
    except Exception as e:  # noqa: BLE001 - the point is to print what went wrong
        print(label, type(e).__name__, str(e).split("\n")[0])


delta_ = torch.rand(2, 5, 4)
B_wrong = torch.randn(2, 5, 6)
attempt("einsum d_state", lambda: torch.einsum("bld,bln->bldn", delta_, B_wrong.transpose(1, 2)))
attempt("einsum operands", lambda: torch.einsum("bld,bln->bldn", delta_))
attempt("einsum rank", lambda: torch.einsum("bld,bln->bldn", delta_, torch.randn(5, 6)))
attempt("view_as_complex last dim 3", lambda: torch.view_as_complex(torch.randn(4, 3)))
attempt("view_as_complex transposed", lambda: torch.view_as_complex(torch.randn(2, 4).t()))
attempt("view_as_complex float64", lambda: torch.view_as_complex(
    torch.randn(3, 2, dtype=torch.float64)))
attempt("view_as_complex int", lambda: torch.view_as_complex(torch.ones(3, 2, dtype=torch.long)))
attempt("view_as_real real", lambda: torch.view_as_real(torch.randn(3)))
attempt("complex @ real", lambda: torch.randn(3, 3, dtype=torch.cfloat) @ torch.randn(3, 2))
attempt("real @ complex128", lambda: torch.matmul(torch.randn(3, 3),
                                                  torch.randn(3, 2, dtype=torch.cdouble)))
attempt("mm complex/real", lambda: torch.mm(torch.randn(2, 2), torch.randn(2, 2) + 0j))
attempt("conv1d channels", lambda: nn.Conv1d(8, 8, 3, groups=8, padding=2)(torch.randn(1, 10, 8)))
attempt("conv1d groups", lambda: nn.Conv1d(6, 6, 3, groups=4))
attempt("polar dtype", lambda: torch.polar(torch.tensor([1.0]), torch.tensor([1.0],
                                                                           dtype=torch.float64)))
attempt("irfft n", lambda: torch.fft.irfft(torch.randn(4, dtype=torch.cfloat), n=6))
attempt("split sizes", lambda: torch.split(torch.randn(2, 10), [3, 4, 4], dim=-1)[0])
attempt("chunk odd", lambda: torch.randn(2, 7).chunk(2, dim=-1)[1])
attempt("A_log int", lambda: torch.log(torch.arange(1, 4)).repeat(2, 1))
attempt("exp complex", lambda: torch.exp(torch.tensor([1j * math.pi])))
attempt("softplus beta", lambda: F.softplus(torch.tensor([30.0, -30.0]), beta=0.5, threshold=5))
print("softplus values", fmt(F.softplus(torch.tensor([30.0, -30.0, 2.0]), beta=0.5, threshold=5)))
