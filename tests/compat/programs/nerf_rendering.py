"""A tiny NeRF on an analytic scene, the way the NeRF papers' reference code and the
nerf-pytorch / instant-ngp tutorials write it: pinhole rays from a look-at camera,
positional encoding, stratified and hierarchical (importance) sampling along rays, the
volume-rendering quadrature, an MLP with a skip connection and a view-direction branch,
a few dozen Adam steps with a decaying learning rate, an occupancy grid, a trilinear
feature volume read with grid_sample, a hashed grid encoding, chunked rendering, and the
mistakes people make with these calls."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# ---------------------------------------------------------------- the scene
# three coloured spheres: centre, radius, colour; density is high inside, zero outside
CENTRES = torch.tensor([[0.0, 0.0, 0.0], [0.55, 0.25, -0.2], [-0.45, -0.3, 0.3]])
RADII = torch.tensor([0.35, 0.22, 0.25])
COLOURS = torch.tensor([[0.9, 0.2, 0.2], [0.2, 0.8, 0.3], [0.25, 0.3, 0.95]])


def scene(points):
    """Analytic density and colour at points (..., 3): a soft-edged union of spheres."""
    d = torch.linalg.norm(points[..., None, :] - CENTRES, dim=-1)       # (..., 3)
    inside = torch.sigmoid((RADII - d) * 40.0)                          # (..., 3)
    sigma = 30.0 * inside.sum(-1)
    w = inside / (inside.sum(-1, keepdim=True) + 1e-6)
    rgb = (w[..., None] * COLOURS).sum(-2)
    return sigma, rgb


# ---------------------------------------------------------------- the camera
def look_at(eye, target, up):
    """Camera-to-world matrix (3x4) of a camera at eye looking at target (OpenGL axes)."""
    forward = F.normalize(target - eye, dim=0)
    right = F.normalize(torch.linalg.cross(forward, up), dim=0)
    true_up = torch.linalg.cross(right, forward)
    rot = torch.stack([right, true_up, -forward], dim=1)
    return torch.cat([rot, eye[:, None]], dim=1)


def get_rays(h, w, focal, c2w, indexing="xy"):
    """Ray origins and unit directions for every pixel of an h x w pinhole image."""
    if indexing == "xy":
        i, j = torch.meshgrid(torch.linspace(0, w - 1, w), torch.linspace(0, h - 1, h),
                              indexing="xy")
    else:
        j, i = torch.meshgrid(torch.linspace(0, h - 1, h), torch.linspace(0, w - 1, w),
                              indexing="ij")
    dirs = torch.stack([(i - w * 0.5) / focal, -(j - h * 0.5) / focal,
                        -torch.ones_like(i)], dim=-1)
    rays_d = torch.sum(dirs[..., None, :] * c2w[:3, :3], dim=-1)
    rays_d = rays_d / rays_d.norm(dim=-1, keepdim=True)
    rays_o = c2w[:3, -1].expand(rays_d.shape)
    return rays_o, rays_d


eye = torch.tensor([0.3, 0.4, 2.5])
c2w = look_at(eye, torch.zeros(3), torch.tensor([0.0, 1.0, 0.0]))
print("c2w", c2w)
print("orthonormal:", torch.allclose(c2w[:, :3] @ c2w[:, :3].T, torch.eye(3), atol=1e-6),
      f"det={torch.linalg.det(c2w[:, :3]).item():.5f}")
H, W, FOCAL = 12, 16, 14.0
ro_xy, rd_xy = get_rays(H, W, FOCAL, c2w, "xy")
ro_ij, rd_ij = get_rays(H, W, FOCAL, c2w, "ij")
print("rays", tuple(ro_xy.shape), tuple(rd_xy.shape), "xy == ij:", torch.equal(rd_xy, rd_ij))
print("corner dirs", rd_xy[0, 0], rd_xy[-1, -1])
print("centre ray", rd_xy[H // 2, W // 2])
print("origins stride", ro_xy.stride(), "contiguous", ro_xy.is_contiguous())
# the same rotation written with einsum, as many NeRF codebases do
cam_dirs = torch.stack(torch.meshgrid(torch.linspace(-0.5, 0.5, 3), torch.linspace(-0.4, 0.4, 2),
                                      indexing="xy") + (-torch.ones(2, 3),), -1)
world = torch.einsum("ij,hwj->hwi", c2w[:, :3], cam_dirs)
print("einsum rays", tuple(world.shape), world[1, 2],
      torch.allclose(world, (cam_dirs[..., None, :] * c2w[:3, :3]).sum(-1), atol=1e-6))


# ---------------------------------------------------------------- encodings
def positional_encoding(x, n_freqs, include_input=True):
    """gamma(x) = (x, sin(2^k pi x), cos(2^k pi x)) for k < n_freqs, along the last dim."""
    freqs = 2.0 ** torch.arange(n_freqs, dtype=x.dtype) * math.pi
    xb = x[..., None, :] * freqs[:, None]                            # (..., L, 3)
    enc = torch.cat([torch.sin(xb), torch.cos(xb)], dim=-1).flatten(-2)
    return torch.cat([x, enc], dim=-1) if include_input else enc


pe = positional_encoding(torch.tensor([[0.1, -0.2, 0.3]]), 4)
print("PE", tuple(pe.shape), pe[0, :9])


# ---------------------------------------------------------------- sampling
def stratified_samples(near, far, n_rays, n_samples, perturb=True):
    """n_samples depths per ray, one uniformly jittered inside each of n_samples bins."""
    t = torch.linspace(0.0, 1.0, n_samples)
    z = near * (1.0 - t) + far * t
    z = z.expand(n_rays, n_samples)
    if perturb:
        mids = 0.5 * (z[..., 1:] + z[..., :-1])
        upper = torch.cat([mids, z[..., -1:]], -1)
        lower = torch.cat([z[..., :1], mids], -1)
        z = lower + (upper - lower) * torch.rand(z.shape)
    return z


def volume_render(sigma, rgb, z, rays_d, white_bkgd=True):
    """The NeRF quadrature: alpha from sigma*delta, exclusive-cumprod transmittance."""
    delta = z[..., 1:] - z[..., :-1]
    delta = torch.cat([delta, torch.full_like(delta[..., :1], 1e10)], -1)
    delta = delta * rays_d[..., None, :].norm(dim=-1)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]),
                                     1.0 - alpha + 1e-10], -1), -1)[..., :-1]
    weights = alpha * trans
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth = torch.sum(weights * z, -1)
    acc = weights.sum(-1)
    if white_bkgd:
        rgb_map = rgb_map + (1.0 - acc[..., None])
    return rgb_map, depth, acc, weights


def sample_pdf(bins, weights, n_samples, det=False):
    """Inverse-transform sampling of new depths from the piecewise-constant PDF."""
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    if det:
        u = torch.linspace(0.0, 1.0, n_samples).expand(list(cdf.shape[:-1]) + [n_samples])
    else:
        u = torch.rand(list(cdf.shape[:-1]) + [n_samples])
    u = u.contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.clamp(inds - 1, min=0)
    above = torch.clamp(inds, max=cdf.shape[-1] - 1)
    inds_g = torch.stack([below, above], -1)
    matched = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched), 2, inds_g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


# ground-truth render of a few rays with the analytic scene
rays_o = ro_xy.reshape(-1, 3)
rays_d = rd_xy.reshape(-1, 3)
N_RAYS = rays_o.shape[0]
NEAR, FAR = 1.2, 3.8
z_det = stratified_samples(NEAR, FAR, N_RAYS, 48, perturb=False)
pts = rays_o[:, None, :] + rays_d[:, None, :] * z_det[..., :, None]
sig_gt, rgb_gt = scene(pts)
gt_rgb, gt_depth, gt_acc, gt_w = volume_render(sig_gt, rgb_gt, z_det, rays_d)
print("gt", tuple(gt_rgb.shape), f"mean rgb {gt_rgb.mean().item():.5f}",
      f"hit rays {(gt_acc > 0.5).sum().item()}", f"max depth {gt_depth.max().item():.5f}")
print("weights sum <= 1:", bool((gt_w.sum(-1) <= 1.0 + 1e-5).all()))
# the nearest surface hit (many rays reach full opacity, so argmax of acc would be a tie)
hit = torch.where(gt_acc > 0.5, gt_depth, torch.full_like(gt_depth, float("inf"))).argmin()
print("nearest hit ray", hit.item(), gt_rgb[hit], f"{gt_depth[hit].item():.5f}",
      f"acc {gt_acc[hit].item():.5f}")

# the same transmittance with F.pad for the exclusive shift, and via log-space cumsum
alpha = 1.0 - torch.exp(-sig_gt * 0.05)
t_pad = torch.cumprod(F.pad(1.0 - alpha, (1, 0), value=1.0), -1)[..., :-1]
t_log = torch.exp(-torch.cumsum(F.pad(sig_gt * 0.05, (1, 0)), -1))[..., :-1]
print("exclusive cumprod vs cumsum:", torch.allclose(t_pad, t_log, atol=1e-5), t_pad.shape,
      f"{t_pad[:, -1].mean().item():.5f}")

# hierarchical sampling: deterministic and random, then merge with the coarse samples
mids = 0.5 * (z_det[..., 1:] + z_det[..., :-1])
z_fine_det = sample_pdf(mids, gt_w[..., 1:-1], 8, det=True)
print("fine det", z_fine_det[hit])
z_fine = sample_pdf(mids, gt_w[..., 1:-1], 16)
z_all, order = torch.sort(torch.cat([z_det, z_fine], -1), -1)
print("merged", tuple(z_all.shape), "sorted:", bool((z_all[:, 1:] >= z_all[:, :-1]).all()),
      "order dtype", order.dtype, order[hit, :6])
cdf = torch.tensor([[0.0, 0.25, 0.5, 0.5, 1.0]])
q = torch.tensor([[0.0, 0.25, 0.5, 0.75, 1.0]])
print("searchsorted left ", torch.searchsorted(cdf, q))
print("searchsorted right", torch.searchsorted(cdf, q, right=True))
print("searchsorted side ", torch.searchsorted(cdf, q, side="right", out_int32=True))
print("searchsorted sorter", torch.searchsorted(torch.tensor([3.0, 1.0, 2.0]),
                                                torch.tensor([2.5, 0.5]),
                                                sorter=torch.tensor([1, 2, 0])))


# ---------------------------------------------------------------- the model
class TruncExp(torch.autograd.Function):
    """exp with a gradient clamped for stability (instant-ngp's trunc_exp)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.exp(x.clamp(-15, 15))


trunc_exp = TruncExp.apply
xe = torch.tensor([-20.0, 0.5, 20.0], requires_grad=True)
ye = trunc_exp(xe)
ye.sum().backward()
print("trunc_exp", ye, xe.grad, ye.grad_fn.__class__.__name__)
# mip-NeRF's density activation: softplus of the raw output shifted by -1
raw = torch.tensor([-30.0, -1.0, 0.0, 1.0, 15.0, 25.0], requires_grad=True)
sp = F.softplus(raw - 1.0)
sp10 = F.softplus(raw, beta=10.0, threshold=5.0)
(sp.sum() + sp10.sum()).backward()
print("softplus", sp, sp10, raw.grad, sp.grad_fn.__class__.__name__)
print("softplus double", F.softplus(torch.tensor([0.5, 40.0], dtype=torch.float64)))


class NeRF(nn.Module):
    def __init__(self, width=48, pos_freqs=5, dir_freqs=2, skip=2, depth=4):
        super().__init__()
        self.pos_freqs, self.dir_freqs, self.skip = pos_freqs, dir_freqs, skip
        in_pos = 3 + 6 * pos_freqs
        in_dir = 3 + 6 * dir_freqs
        layers = []
        for i in range(depth):
            fan_in = in_pos if i == 0 else width + (in_pos if i == skip else 0)
            layers.append(nn.Linear(fan_in, width))
        self.pts_linears = nn.ModuleList(layers)
        self.sigma_head = nn.Linear(width, 1)
        self.feature = nn.Linear(width, width)
        self.view_linear = nn.Linear(width + in_dir, width // 2)
        self.rgb_head = nn.Linear(width // 2, 3)

    def forward(self, x, d):
        xe = positional_encoding(x, self.pos_freqs)
        de = positional_encoding(d, self.dir_freqs)
        h = xe
        for i, layer in enumerate(self.pts_linears):
            if i == self.skip:
                h = torch.cat([xe, h], -1)
            h = F.relu(layer(h))
        sigma = trunc_exp(self.sigma_head(h).squeeze(-1) - 1.0)
        h = torch.cat([self.feature(h), de], -1)
        h = F.relu(self.view_linear(h))
        return sigma, torch.sigmoid(self.rgb_head(h))


def render_rays(model, ro, rd, n_coarse, n_fine, perturb=True):
    z = stratified_samples(NEAR, FAR, ro.shape[0], n_coarse, perturb)
    p = ro[:, None] + rd[:, None] * z[..., None]
    vd = rd[:, None].expand(p.shape)
    sigma, rgb = model(p, vd)
    rgb_c, _, _, w = volume_render(sigma, rgb, z, rd)
    zm = 0.5 * (z[..., 1:] + z[..., :-1])
    z_f = sample_pdf(zm, w[..., 1:-1].detach(), n_fine, det=not perturb)
    z2, _ = torch.sort(torch.cat([z, z_f], -1), -1)
    p2 = ro[:, None] + rd[:, None] * z2[..., None]
    sigma2, rgb2 = model(p2, rd[:, None].expand(p2.shape))
    rgb_f, depth_f, acc_f, _ = volume_render(sigma2, rgb2, z2, rd)
    return rgb_c, rgb_f, depth_f, acc_f


def psnr(mse):
    return -10.0 * torch.log10(mse)


model = NeRF()
n_params = sum(p.numel() for p in model.parameters())
print("params", n_params, [tuple(p.shape) for p in model.pts_linears[2].parameters()])
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.97)
for step in range(30):
    idx = torch.randint(0, N_RAYS, (96,))
    rgb_c, rgb_f, _, _ = render_rays(model, rays_o[idx], rays_d[idx], 16, 8)
    loss_c = F.mse_loss(rgb_c, gt_rgb[idx])
    loss_f = F.mse_loss(rgb_f, gt_rgb[idx])
    loss = loss_c + loss_f
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step:2d} loss {loss.item():.5f} psnr {psnr(loss_f).item():.4f} "
              f"lr {sched.get_last_lr()[0]:.6f}")
print("grad_fn", loss.grad_fn.__class__.__name__, rgb_f.grad_fn.__class__.__name__)

lam = torch.optim.lr_scheduler.LambdaLR(torch.optim.SGD([torch.zeros(1, requires_grad=True)],
                                                        lr=1.0),
                                        lambda s: 0.1 ** (s / 20))
for _ in range(5):
    lam.optimizer.step()
    lam.step()
print("LambdaLR", f"{lam.get_last_lr()[0]:.6f}")

# render the whole image in chunks without building a graph
with torch.no_grad():
    chunks = []
    for s in range(0, N_RAYS, 64):
        chunks.append(render_rays(model, rays_o[s:s + 64], rays_d[s:s + 64], 16, 8,
                                  perturb=False)[1])
    image = torch.cat(chunks, 0).reshape(H, W, 3)
print("image", tuple(image.shape), image.requires_grad, f"{image.mean().item():.4f}",
      f"psnr {psnr(F.mse_loss(image, gt_rgb.reshape(H, W, 3))).item():.4f}")
print("image range", f"{image.min().item():.4f}", f"{image.max().item():.4f}")


# ---------------------------------------------------------------- occupancy grid
RES = 8
g = torch.linspace(-1.0, 1.0, RES)
gx, gy, gz = torch.meshgrid(g, g, g, indexing="ij")
cells = torch.stack([gx, gy, gz], -1).reshape(-1, 3)
dens, _ = scene(cells)
occ = dens > 5.0
print("occupied", occ.sum().item(), "of", occ.numel(), occ.dtype)
occ_idx = torch.nonzero(occ.reshape(RES, RES, RES))
print("nonzero", tuple(occ_idx.shape), occ_idx[:4].tolist())
as_tuple = torch.nonzero(occ.reshape(RES, RES, RES), as_tuple=True)
print("as_tuple", len(as_tuple), as_tuple[0][:6])
# which grid cell each sample falls into, via bucketize on the cell boundaries
bounds = torch.linspace(-1.0, 1.0, RES + 1)
samples = pts.reshape(-1, 3)
inside_box = (samples.abs() <= 1.0).all(-1)
cell_ijk = torch.bucketize(samples[inside_box], bounds).clamp(1, RES) - 1
flat = (cell_ijk[:, 0] * RES + cell_ijk[:, 1]) * RES + cell_ijk[:, 2]
keep = occ[flat]
print("in box", inside_box.sum().item(), "kept", keep.sum().item(),
      "bucketize right", torch.bucketize(torch.tensor([-1.0, 0.0, 1.0]), bounds, right=True))
uniq, counts = torch.unique(flat[keep], return_counts=True)
print("unique cells", uniq.numel(), uniq[:5], counts[:5])
uniq_s, inv = torch.unique(cell_ijk[:, 2], sorted=True, return_inverse=True)
print("unique z", uniq_s, inv[:8])
uc = torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 2, 3, 1, 1]), return_counts=True)
print("unique_consecutive", uc[0], uc[1])


# ---------------------------------------------------------------- feature volume
torch.manual_seed(1)
volume = torch.randn(1, 4, 5, 6, 7)                       # N, C, D, H, W
query = torch.rand(1, 1, 3, 10, 3) * 2.4 - 1.2            # N, D', H', W', (x, y, z)
for ac in (True, False):
    for mode in ("zeros", "border", "reflection"):
        out = F.grid_sample(volume, query, mode="bilinear", padding_mode=mode,
                            align_corners=ac)
        print(f"grid_sample ac={ac!s:5} {mode:10}", tuple(out.shape),
              f"{out.sum().item():.5f}", f"{out[0, 1, 0, 1, 3].item():.5f}")
near_out = F.grid_sample(volume, query, mode="nearest", align_corners=False)
print("nearest", f"{near_out.sum().item():.5f}")
vol = volume.clone().requires_grad_(True)
qg = query.clone().requires_grad_(True)
F.grid_sample(vol, qg, align_corners=True).pow(2).sum().backward()
print("grid grads", f"{vol.grad.abs().sum().item():.5f}", f"{qg.grad.abs().sum().item():.5f}",
      qg.grad[0, 0, 0, 0])
# a half-precision feature volume (as mixed-precision NeRFs store them)
half_out = F.grid_sample(volume.half(), query.half(), align_corners=False)
print("half volume", half_out.dtype, half_out[0, :, 0, 1, :4])
bf_out = F.grid_sample(volume.bfloat16(), query.bfloat16(), padding_mode="border",
                       align_corners=True)
print("bfloat16 volume", bf_out.dtype, bf_out[0, 2, 0, 2, :4])
# corners of the volume with align_corners=True read the corner voxels exactly
corner = torch.tensor([[[[[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]]]]])
print("corners", F.grid_sample(volume, corner, align_corners=True)[0, :, 0, 0],
      volume[0, :, 0, 0, 0], volume[0, :, -1, -1, -1])


# ---------------------------------------------------------------- hash encoding
PRIMES = torch.tensor([1, 2654435761, 805459861], dtype=torch.int64)


def hash_encode(x, table, resolution):
    """Trilinear interpolation of hashed corner features at one grid resolution."""
    T = table.shape[0]
    scaled = (x + 1.0) * 0.5 * resolution
    base = torch.floor(scaled).long()
    frac = scaled - base
    out = 0.0
    for corner_bits in range(8):
        offs = torch.tensor([(corner_bits >> k) & 1 for k in range(3)])
        c = base + offs
        h = c * PRIMES
        idx = torch.bitwise_xor(torch.bitwise_xor(h[..., 0], h[..., 1]), h[..., 2]) % T
        wgt = torch.where(offs.bool(), frac, 1.0 - frac).prod(-1, keepdim=True)
        out = out + wgt * table[idx]
    return out


torch.manual_seed(2)
table = (torch.rand(64, 2) * 2 - 1) * 1e-1
xs = torch.rand(5, 3) * 2 - 1
c0 = torch.floor((xs + 1.0) * 0.5 * 4).long()
hashed = c0 * PRIMES
print("hash", hashed[0], (hashed[..., 0] ^ hashed[..., 1] ^ hashed[..., 2]) % 64)
print("hash neg mod", torch.tensor([-7, 7, -2654435761]) % 64,
      torch.remainder(torch.tensor([-7]), 64), torch.fmod(torch.tensor([-7]), 64))
print("overflow", torch.tensor([2654435761], dtype=torch.int64) * 3037000499)
emb = torch.cat([hash_encode(xs, table, r) for r in (2, 4, 8)], -1)
print("hash enc", tuple(emb.shape), emb[0])
tab = table.clone().requires_grad_(True)
hash_encode(xs, tab, 4).sum().backward()
print("table grad nonzero rows", (tab.grad.abs().sum(-1) > 0).sum().item(),
      f"{tab.grad.sum().item():.5f}")


# ---------------------------------------------------------------- typical mistakes
def attempt(label, fn):
    try:
        r = fn()
        print(label, "->", r)
    except Exception as e:  # noqa: BLE001 - a demo of the error a user sees
        print(label, "->", type(e).__name__ + ":", str(e).split("\n")[0])


attempt("searchsorted unsorted", lambda: torch.searchsorted(torch.tensor([3.0, 1.0, 2.0]),
                                                             torch.tensor([2.0])))
attempt("searchsorted shape", lambda: torch.searchsorted(torch.rand(4, 5), torch.rand(3, 2)))
attempt("searchsorted int64 vs float",
        lambda: torch.searchsorted(torch.tensor([1, 2, 3]), torch.tensor([2.5])))
attempt("grid_sample 4-d grid on 5-d input",
        lambda: F.grid_sample(volume, torch.rand(1, 3, 10, 3)))
attempt("grid_sample grid last dim",
        lambda: F.grid_sample(volume, torch.rand(1, 1, 3, 10, 2)))
attempt("grid_sample bicubic 5-d",
        lambda: F.grid_sample(volume, query, mode="bicubic"))
attempt("cumprod int with dtype", lambda: torch.cumprod(torch.tensor([1, 2, 3, 4]), 0,
                                                          dtype=torch.float32))
attempt("cumprod int", lambda: torch.cumprod(torch.tensor([1, 2, 3, 4]), 0))
attempt("meshgrid 2-d", lambda: torch.meshgrid(torch.rand(2, 2), torch.rand(3),
                                               indexing="ij"))
attempt("meshgrid list element", lambda: torch.meshgrid(torch.arange(3), [0, 1], indexing="ij"))
attempt("einsum equation only", lambda: torch.einsum("ij->ji"))
attempt("meshgrid bad indexing", lambda: torch.meshgrid(torch.rand(2), torch.rand(3),
                                                        indexing="yx"))
attempt("gather bad index dtype", lambda: torch.gather(torch.rand(2, 3), 1,
                                                       torch.tensor([[0.0, 1.0]])))
attempt("bucketize 2-d boundaries",
        lambda: torch.bucketize(torch.tensor([0.5]), torch.rand(2, 3)))
attempt("bitwise_xor float", lambda: torch.bitwise_xor(torch.tensor([1.0]),
                                                       torch.tensor([2.0])))
