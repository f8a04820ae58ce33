"""Learned image compression in the style of Balle et al. (2018) and CompressAI, in plain
torch: GDN / inverse GDN layers with non-negative reparametrised weights, strided analysis
and synthesis transforms, additive-noise quantisation in training and rounding with a
straight-through estimator in evaluation, a factorized entropy model with learned
per-channel CDFs and an auxiliary loss on its quantiles, a Gaussian conditional, and a
rate-distortion training loop with two optimizers."""

import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Laplace, Normal

torch.manual_seed(0)


# -- bounds and reparametrisation --------------------------------------------------------
class LowerBound(torch.autograd.Function):
    """max(x, bound); the gradient passes where x is above the bound or where it points
    inward (a descent step would raise x), so a clamped parameter can still come back."""

    @staticmethod
    def forward(ctx, x, bound):
        ctx.save_for_backward(x, bound)
        return torch.max(x, bound)

    @staticmethod
    def backward(ctx, grad_output):
        x, bound = ctx.saved_tensors
        pass_through = (x >= bound) | (grad_output < 0)
        grad_x = (
            pass_through.type(grad_output.dtype) * grad_output if ctx.needs_input_grad[0] else None
        )
        return grad_x, None


def lower_bound(x, bound: float):
    return LowerBound.apply(x, torch.tensor(bound, dtype=x.dtype))


class NonNegative(nn.Module):
    """Stores sqrt(value + pedestal); returns the square (minus the pedestal), bounded below."""

    def __init__(self, minimum: float = 0.0, reparam_offset: float = 2**-18):
        super().__init__()
        self.pedestal = reparam_offset**2
        self.bound = (minimum + self.pedestal) ** 0.5

    def init(self, x):
        return torch.sqrt(torch.max(x + self.pedestal, torch.tensor(self.pedestal)))

    def forward(self, x):
        out = lower_bound(x, self.bound)
        return out * out - self.pedestal


class GDN(nn.Module):
    """y_i = x_i / sqrt(beta_i + sum_j gamma_ij x_j^2) (inverse: times the square root)."""

    def __init__(
        self, channels: int, inverse: bool = False, beta_min: float = 1e-6, gamma_init: float = 0.1
    ):
        super().__init__()
        self.inverse = inverse
        self.beta_reparam = NonNegative(minimum=beta_min)
        self.gamma_reparam = NonNegative()
        self.beta = nn.Parameter(self.beta_reparam.init(torch.ones(channels)))
        gamma = gamma_init * torch.eye(channels)
        self.gamma = nn.Parameter(self.gamma_reparam.init(gamma))

    def forward(self, x):
        channels = x.size(1)
        beta = self.beta_reparam(self.beta)
        gamma = self.gamma_reparam(self.gamma).reshape(channels, channels, 1, 1)
        norm = F.conv2d(x**2, gamma, beta)
        norm = torch.sqrt(norm) if self.inverse else torch.rsqrt(norm)
        return x * norm

    def extra_repr(self):
        return f"inverse={self.inverse}"


# -- the factorized entropy model --------------------------------------------------------
class EntropyBottleneck(nn.Module):
    """A per-channel learned density, convolved with a unit box: each channel's CDF is a small
    monotone network of softplus-weighted matrices, biases and tanh gates."""

    def __init__(
        self,
        channels: int,
        filters=(3, 3),
        init_scale: float = 10.0,
        tail_mass: float = 1e-9,
        likelihood_bound: float = 1e-9,
    ):
        super().__init__()
        self.channels = channels
        self.filters = tuple(filters)
        self.likelihood_bound = likelihood_bound
        dims = (1,) + self.filters + (1,)
        scale = init_scale ** (1 / (len(self.filters) + 1))
        self.matrices = nn.ParameterList()
        self.biases = nn.ParameterList()
        self.factors = nn.ParameterList()
        for i in range(len(self.filters) + 1):
            init = math.log(math.expm1(1 / scale / dims[i + 1]))
            self.matrices.append(nn.Parameter(torch.full((channels, dims[i + 1], dims[i]), init)))
            self.biases.append(nn.Parameter(torch.rand(channels, dims[i + 1], 1) - 0.5))
            if i < len(self.filters):
                self.factors.append(nn.Parameter(torch.zeros(channels, dims[i + 1], 1)))
        self.quantiles = nn.Parameter(
            torch.tensor([-init_scale, 0.0, init_scale]).repeat(channels, 1, 1)
        )
        target = math.log(2 / tail_mass - 1)
        self.register_buffer("target", torch.tensor([-target, 0.0, target]))
        # the integer tables an entropy coder reads, filled by update()
        self.register_buffer("quantized_cdf", torch.zeros(0, dtype=torch.int32))
        self.register_buffer("offset", torch.zeros(0, dtype=torch.int32))

    def logits_cumulative(self, inputs, stop_gradient: bool):
        logits = inputs
        for i in range(len(self.filters) + 1):
            matrix = F.softplus(self.matrices[i])
            bias = self.biases[i]
            if stop_gradient:
                matrix, bias = matrix.detach(), bias.detach()
            logits = torch.matmul(matrix, logits) + bias
            if i < len(self.factors):
                factor = torch.tanh(self.factors[i])
                if stop_gradient:
                    factor = factor.detach()
                logits = logits + factor * torch.tanh(logits)
        return logits

    @torch.no_grad()
    def update(self, precision: int = 16):
        """Tabulate each channel's probability mass over its integer support as a CDF in
        units of 2**-precision, every symbol at least one unit so that it stays codable."""
        medians = self.quantiles[:, 0, 1]
        minima = torch.ceil(medians - self.quantiles[:, 0, 0]).int().clamp_min(0)
        maxima = torch.ceil(self.quantiles[:, 0, 2] - medians).int().clamp_min(0)
        length = int((minima + maxima + 1).max().item())
        samples = medians[:, None] + torch.arange(length)[None, :] - minima[:, None]
        pmf = self.likelihood(samples[:, None, :])[:, 0, :]
        pmf = pmf * (torch.arange(length)[None, :] <= (minima + maxima)[:, None])
        total = 1 << precision
        freq = torch.floor(pmf / pmf.sum(dim=1, keepdim=True) * (total - length)).long() + 1
        freq[:, -1] += total - freq.sum(dim=1)  # the remainder goes to the last symbol
        cdf = torch.cat(
            [torch.zeros(self.channels, 1, dtype=torch.long), freq.cumsum(dim=1)], dim=1
        )
        self.quantized_cdf.resize_(cdf.shape).copy_(cdf)
        self.offset.resize_(minima.shape).copy_(-minima)
        return length

    def code_length(self, y):
        """Symbols (indices into each channel's table) and the bits an ideal coder spends."""
        medians = self.medians().reshape(1, -1, 1, 1)
        index = (torch.round(y - medians) - self.offset.reshape(1, -1, 1, 1)).long()
        index = index.clamp(0, self.quantized_cdf.size(1) - 2)
        table = self.quantized_cdf.unsqueeze(0).expand(y.size(0), -1, -1)
        flat = index.flatten(2)
        freq = torch.gather(table, 2, flat + 1) - torch.gather(table, 2, flat)
        bits = -torch.log2(freq.double() / 2**16).sum()
        return index, bits

    def decode(self, cumulative):
        """Invert the coder's cumulative counts back to symbol indices with a binary search."""
        table = self.quantized_cdf.unsqueeze(0).expand(cumulative.size(0), -1, -1).contiguous()
        return torch.searchsorted(table, cumulative.flatten(2), right=True) - 1

    def medians(self):
        return self.quantiles[:, :, 1:2].detach()

    def loss(self):
        logits = self.logits_cumulative(self.quantiles, stop_gradient=True)
        return torch.abs(logits - self.target).sum()

    def likelihood(self, values):
        lower = self.logits_cumulative(values - 0.5, stop_gradient=False)
        upper = self.logits_cumulative(values + 0.5, stop_gradient=False)
        sign = -torch.sign(lower + upper).detach()
        sign = torch.where(sign == 0, torch.ones_like(sign), sign)
        return torch.abs(torch.sigmoid(sign * upper) - torch.sigmoid(sign * lower))

    def quantize(self, x, mode: str, medians=None):
        if mode == "noise":
            return x + torch.empty_like(x).uniform_(-0.5, 0.5)
        shifted = x - medians
        return shifted + (shifted.round() - shifted).detach() + medians  # straight-through

    def forward(self, x):
        mode = "noise" if self.training else "dequantize"
        perm = (1, 0, 2, 3)  # channels first, then flatten to (C, 1, everything)
        values = x.permute(*perm).contiguous()
        shape = values.shape
        values = values.reshape(self.channels, 1, -1)
        outputs = self.quantize(values, mode, self.medians())
        likelihood = self.likelihood(outputs).clamp_min(self.likelihood_bound)
        outputs = outputs.reshape(shape).permute(*perm).contiguous()
        likelihood = likelihood.reshape(shape).permute(*perm).contiguous()
        return outputs, likelihood


class FactorizedPrior(nn.Module):
    def __init__(self, n: int = 8, m: int = 12):
        super().__init__()
        self.g_a = nn.Sequential(
            nn.Conv2d(3, n, 5, stride=2, padding=2),
            GDN(n),
            nn.Conv2d(n, m, 5, stride=2, padding=2),
        )
        self.g_s = nn.Sequential(
            nn.ConvTranspose2d(m, n, 5, stride=2, padding=2, output_padding=1),
            GDN(n, inverse=True),
            nn.ConvTranspose2d(n, 3, 5, stride=2, padding=2, output_padding=1),
        )
        self.entropy_bottleneck = EntropyBottleneck(m)

    def forward(self, x):
        y = self.g_a(x)
        y_hat, likelihoods = self.entropy_bottleneck(y)
        return self.g_s(y_hat), y, likelihoods

    def aux_loss(self):
        return sum(m.loss() for m in self.modules() if isinstance(m, EntropyBottleneck))


class Quantize(torch.autograd.Function):
    """Integer symbols around the medians, clipped to [-limit, limit], with the mask of clipped
    symbols (an index, so not differentiable); the gradient is straight-through."""

    @staticmethod
    def forward(ctx, y, medians, limit: int):
        symbols = torch.round(y - medians)
        clipped = symbols.abs() > limit
        ctx.mark_non_differentiable(clipped)
        return symbols.clamp(-limit, limit), clipped

    @staticmethod
    def backward(ctx, grad_symbols, grad_clipped):
        grad_y = grad_symbols if ctx.needs_input_grad[0] else None
        grad_medians = -grad_symbols if ctx.needs_input_grad[1] else None
        return grad_y, grad_medians, None


def y_hat_from(y, medians):
    return torch.round(y - medians) + medians


def bits_per_pixel(likelihoods, num_pixels: int):
    return torch.log(likelihoods).sum() / (-math.log(2) * num_pixels)


def psnr(a, b, peak: float = 1.0):
    return 10 * math.log10(peak**2 / F.mse_loss(a, b).item())


def smooth_images(n: int, size: int = 16):
    """Coarse random colours upsampled, then blurred: neighbouring pixels are correlated."""
    coarse = torch.rand(n, 3, size // 4, size // 4)
    images = F.interpolate(coarse, size=(size, size), mode="bilinear", align_corners=False)
    return F.avg_pool2d(images, 3, stride=1, padding=1, count_include_pad=False)


# -- the pieces on their own --------------------------------------------------------------
x = torch.tensor([-2.0, 0.05, 0.5, 3.0], requires_grad=True)
out = lower_bound(x, 0.1)
out.backward(torch.tensor([1.0, -1.0, 1.0, 1.0]))
print("lower bound", out.detach(), "grad", x.grad, out.grad_fn.__class__.__name__)
x.grad = None
lower_bound(x, 0.1).backward(torch.tensor([-1.0, 1.0, -1.0, -1.0]))
print("inward grad", x.grad)

gdn, igdn = GDN(4), GDN(4, inverse=True)
sample = torch.randn(2, 4, 3, 3)
print(gdn, f"{gdn(sample).abs().mean().item():.5f} {igdn(sample).abs().mean().item():.5f}")
print("round trip", f"{(igdn(gdn(sample)) - sample).abs().max().item():.3e}")
print("beta", gdn.beta_reparam(gdn.beta), "gamma diag", gdn.gamma_reparam(gdn.gamma).diagonal())

up = nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)
small = torch.randn(1, 2, 4, 4)
print("transpose", tuple(up(small).shape), tuple(up(small, output_size=[8, 8]).shape))
try:
    up(small, output_size=[10, 10])
except ValueError as err:
    print("ValueError:", str(err).split("\n")[0][:60])


class NormalizedConvTranspose2d(nn.ConvTranspose2d):
    """A transposed convolution with a unit-norm weight, its forward written out as
    torch's own (so it asks the module for the output padding an output_size needs)."""

    def forward(self, x, output_size=None):
        output_padding = self._output_padding(
            x, output_size, self.stride, self.padding, self.kernel_size, 2, self.dilation
        )
        weight = self.weight / self.weight.norm()
        return F.conv_transpose2d(
            x, weight, self.bias, self.stride, self.padding, output_padding, self.groups
        )


normalized = NormalizedConvTranspose2d(2, 2, 3, stride=2, padding=1)
print(
    "normalized",
    tuple(normalized(small, output_size=(8, 7)).shape),
    f"{normalized(small).abs().mean().item():.5f}",
)
try:
    nn.Conv2d(3, 8, 5, stride=2, padding=5 / 2)(torch.zeros(1, 3, 8, 8))  # a float padding
except TypeError as err:
    print("TypeError:", str(err).split("\n")[0][:72])

values = torch.tensor([-1.26, -0.5, 0.5, 1.5, 2.5, 0.499])
print("round", values.round(), torch.round(values, decimals=1))
noisy = torch.zeros(5)
print("noise in", bool((noisy + torch.empty_like(noisy).uniform_(-0.5, 0.5)).abs().max() <= 0.5))

# -- training -----------------------------------------------------------------------------
images = smooth_images(8)
model = FactorizedPrior()
print(model.g_a, model.g_s, sep="\n")
names = [name for name, _ in model.named_parameters()]
print(len(names), [n for n in names if n.endswith(".quantiles")], names[:3])
main_params = [p for n, p in model.named_parameters() if not n.endswith(".quantiles")]
aux_params = [p for n, p in model.named_parameters() if n.endswith(".quantiles")]
print(sum(p.numel() for p in main_params), sum(p.numel() for p in aux_params))
optimizer = torch.optim.Adam(main_params, lr=2e-3)
aux_optimizer = torch.optim.Adam(aux_params, lr=5e-2)
lmbda = 0.01
num_pixels = images.size(0) * images.size(2) * images.size(3)

for step in range(1, 31):
    model.train()
    optimizer.zero_grad()
    aux_optimizer.zero_grad()
    x_hat, y, likelihoods = model(images)
    bpp = bits_per_pixel(likelihoods, num_pixels)
    mse = F.mse_loss(x_hat, images)
    loss = lmbda * 255**2 * mse + bpp
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(main_params, max_norm=1.0)
    optimizer.step()
    aux = model.aux_loss()
    aux.backward()
    aux_optimizer.step()
    if step % 5 == 0 or step == 1:
        print(
            f"step {step:2d} loss {loss.item():.2f} mse {mse.item():.5f} bpp {bpp.item():.4f} "
            f"aux {aux.item():.3f} grad norm {norm.item():.1f}"
        )

print(y.shape, x_hat.shape, likelihoods.shape, likelihoods.dtype)
print("quantiles", model.entropy_bottleneck.quantiles[:2].detach())

# -- evaluation: rounding and the straight-through estimator --------------------------------
model.eval()
test = smooth_images(2)
with torch.no_grad():
    x_hat, y, likelihoods = model(test)
medians = model.entropy_bottleneck.medians().reshape(1, -1, 1, 1)
symbols, clipped = Quantize.apply(y, medians, 1)
print(
    "symbols",
    symbols.dtype,
    symbols.min().item(),
    symbols.max().item(),
    symbols.unique().numel(),
    "clipped",
    clipped.sum().item(),
    clipped.requires_grad,
)
print(
    "dequantized equal",
    torch.allclose((symbols + medians)[~clipped], y_hat_from(y, medians)[~clipped]),
)
test_pixels = test.size(0) * test.size(2) * test.size(3)
print(
    f"eval bpp {bits_per_pixel(likelihoods, test_pixels).item():.4f} "
    f"psnr {psnr(x_hat.clamp(0, 1), test):.3f} dB"
)
print("likelihoods", likelihoods[0, :6, 0, 0])

y = model.g_a(test[:1]).detach().requires_grad_()
y_st = y + (y.round() - y).detach()
(y_st * torch.arange(y.numel()).reshape(y.shape)).sum().backward()
print(
    "ste grad is identity",
    torch.equal(y.grad.flatten(), torch.arange(y.numel(), dtype=y.dtype)),
    y_st.grad_fn.name(),
)

# -- entropy coding tables, padding to the stride and a checkpoint ------------------------------
bottleneck = model.entropy_bottleneck
length = bottleneck.update()
print(
    "cdf",
    tuple(bottleneck.quantized_cdf.shape),
    bottleneck.quantized_cdf.dtype,
    length,
    bool((bottleneck.quantized_cdf[:, -1] == 2**16).all()),
    bool((bottleneck.quantized_cdf.diff(dim=1) >= 1).all()),
    bottleneck.offset[:4],
)

odd = smooth_images(1, size=16)[:, :, :13, :10]
height, width = odd.shape[2:]
pad_h, pad_w = (-height) % 4, (-width) % 4
padded = F.pad(
    odd, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2), mode="replicate"
)
with torch.inference_mode():
    y = model.g_a(padded)
    index, bits = bottleneck.code_length(y)
    starts = torch.gather(bottleneck.quantized_cdf.unsqueeze(0), 2, index.flatten(2))
    decoded = bottleneck.decode(starts + 1)
    y_hat = (decoded + bottleneck.offset.reshape(1, -1, 1)).reshape(
        y.shape
    ) + bottleneck.medians().reshape(1, -1, 1, 1)
    x_hat = F.pad(
        model.g_s(y_hat),
        (-(pad_w // 2), -(pad_w - pad_w // 2), -(pad_h // 2), -(pad_h - pad_h // 2)),
    )
print(
    tuple(padded.shape),
    tuple(y.shape),
    tuple(x_hat.shape),
    "decoded",
    torch.equal(decoded, index.flatten(2)),
)
print(f"coded {bits.item() / (height * width):.4f} bpp, psnr {psnr(x_hat.clamp(0, 1), odd):.3f} dB")

buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)
state = torch.load(buffer)
print(
    len(state),
    [k.split(".")[-1] for k in state if "matrices" not in k and "g_" not in k],
    state["entropy_bottleneck.quantized_cdf"].dtype,
    x_hat.is_inference(),
)
fresh = FactorizedPrior()
try:
    fresh.load_state_dict(state)
except RuntimeError as err:
    print("RuntimeError:", str(err).split("\n")[1].strip()[:70])
fresh.entropy_bottleneck.quantized_cdf.resize_(state["entropy_bottleneck.quantized_cdf"].shape)
fresh.entropy_bottleneck.offset.resize_(state["entropy_bottleneck.offset"].shape)
print(
    fresh.load_state_dict(state), torch.equal(fresh.entropy_bottleneck.decode(starts + 1), decoded)
)


# -- a context model: a masked convolution predicts each latent's mean and scale ---------------
class MaskedConv2d(nn.Conv2d):
    """A convolution that sees only the latents before the centre in raster order."""

    def __init__(self, *args, mask_type: str = "A", **kwargs):
        super().__init__(*args, **kwargs)
        self.register_buffer("mask", torch.ones_like(self.weight.data))
        _, _, h, w = self.mask.size()
        self.mask[:, :, h // 2, w // 2 + (mask_type == "B") :] = 0
        self.mask[:, :, h // 2 + 1 :] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super().forward(x)


class GaussianConditional(nn.Module):
    def __init__(self, scale_bound: float = 0.11, likelihood_bound: float = 1e-9):
        super().__init__()
        self.scale_bound = scale_bound
        self.likelihood_bound = likelihood_bound

    @staticmethod
    def standardized_cumulative(x):
        return 0.5 * torch.erfc(-(2**-0.5) * x)

    def forward(self, y_hat, scales, means):
        scales = lower_bound(scales, self.scale_bound)
        values = torch.abs(y_hat - means)  # the density is symmetric: use the stabler tail
        upper = self.standardized_cumulative((0.5 - values) / scales)
        lower = self.standardized_cumulative((-0.5 - values) / scales)
        return (upper - lower).clamp_min(self.likelihood_bound)


context = MaskedConv2d(12, 24, 5, padding=2)
entropy_parameters = nn.Sequential(
    nn.Conv2d(24, 24, 1), nn.LeakyReLU(inplace=True), nn.Conv2d(24, 24, 1)
)
conditional = GaussianConditional()
print(context, int((context.weight == 0).sum()), int(context.mask.sum()))
probe = torch.randn(1, 12, 5, 5, requires_grad=True)
context(probe)[0, :, 2, 2].sum().backward()
print(
    "masked weights",
    int((context.weight == 0).sum()),
    context.weight.requires_grad,
    context.weight.is_leaf,
)
print("receptive field\n", (probe.grad.abs().sum(dim=1)[0] > 0).int())

model.train(False)
with torch.no_grad():
    latents = model.g_a(images)
    medians = bottleneck.medians().reshape(1, -1, 1, 1)
    latents = torch.round(latents - medians) + medians
    _, factorized = bottleneck(latents)
print(f"factorized prior {bits_per_pixel(factorized, num_pixels).item():.4f} bpp")
context_params = list(context.parameters()) + list(entropy_parameters.parameters())
context_optimizer = torch.optim.Adam(context_params, lr=1e-2)
for step in range(1, 21):
    context_optimizer.zero_grad()
    scales_hat, means_hat = entropy_parameters(context(latents)).chunk(2, dim=1)
    likelihood = conditional(latents, scales_hat, means_hat)
    rate = bits_per_pixel(likelihood, num_pixels)
    rate.backward()
    context_optimizer.step()
    if step % 5 == 0:
        print(
            f"context step {step:2d} {rate.item():.4f} bpp, scales {scales_hat.mean().item():.4f}"
        )

# the same likelihood from torch.distributions, and a Laplace alternative of equal variance
scales = lower_bound(scales_hat.detach(), 0.11)
normal = Normal(means_hat.detach(), scales)
gauss = normal.cdf(latents + 0.5) - normal.cdf(latents - 0.5)
print("erfc form matches Normal.cdf", torch.allclose(gauss.clamp_min(1e-9), likelihood, atol=1e-5))
laplace = Laplace(means_hat.detach(), scales / math.sqrt(2))
lap = laplace.cdf(latents + 0.5) - laplace.cdf(latents - 0.5)
print(
    f"gaussian {bits_per_pixel(gauss.clamp_min(1e-9), num_pixels).item():.4f} bpp, "
    f"laplace {bits_per_pixel(lap.clamp_min(1e-9), num_pixels).item():.4f} bpp"
)
std = Normal(0.0, 1.0)
print(
    "icdf",
    std.icdf(torch.tensor([0.05, 0.5, 0.975])),
    "cdf",
    std.cdf(torch.tensor([-1.0, 0.0, 2.0])),
)
print(
    "laplace",
    Laplace(0.0, 2.0).icdf(torch.tensor([0.1, 0.5, 0.9])),
    Laplace(0.0, 2.0).log_prob(torch.tensor([1.0])),
)
