"""How each ATen overload runs in ember: the ops whose ATen argument conventions differ from
ember's public function of the same name, written out; every other overload calls
`ember.<name>` (or `nn.functional.<name>`, or the Tensor method) with its arguments as they
come, since the two conventions agree there.

Each implementation is a composition of ember ops, so autograd, vmap and the profiler see
the ops inside it, as PyTorch's composite-implicit kernels are seen through.
"""

from __future__ import annotations

from collections.abc import Callable

import ember
from ember import Tensor
from ember.nn import functional as F


def _dims(dim) -> list:
    """A dim list as a list (an `int[1]` argument may be given as one int)."""
    return [dim] if isinstance(dim, int) else list(dim)


def _all_dims(dim) -> list | None:
    """ATen's reductions read an empty dim list as every dim."""
    return None if dim is None else (_dims(dim) or None)


def _sum_dims(self: Tensor, dim, keepdim=False, *, dtype=None) -> Tensor:
    return ember.sum(self, _all_dims(dim), keepdim, dtype=dtype)


def _mean_dims(self: Tensor, dim, keepdim=False, *, dtype=None) -> Tensor:
    return ember.mean(self, _all_dims(dim), keepdim, dtype=dtype)


def _var(self: Tensor, dim=None, *, correction=None, keepdim=False) -> Tensor:
    return ember.var(self, dim, keepdim=keepdim, correction=correction)


def _std(self: Tensor, dim=None, *, correction=None, keepdim=False) -> Tensor:
    return ember.std(self, dim, keepdim=keepdim, correction=correction)


def _half_softmax(name: str, fn: Callable) -> Callable:
    def run(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
        if half_to_float:
            raise RuntimeError(f"{name} with half to float conversion is not supported on CPU")
        return fn(self, dim)
    return run


def _factory(fn: Callable) -> Callable:
    """A creation op taking ATen's keywords (None means "the default")."""
    def run(*args, dtype=None, layout=None, device=None, pin_memory=None,
            memory_format=None) -> Tensor:
        kw = {"dtype": dtype, "layout": layout, "device": device}
        if memory_format is not None:
            kw["memory_format"] = memory_format
        return fn(*args, **{k: v for k, v in kw.items() if v is not None})
    return run


def _to_copy(self: Tensor, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None) -> Tensor:
    out = self.to(device=device or self.device, dtype=dtype or self.dtype,
                  non_blocking=non_blocking, copy=True)
    if memory_format is not None:
        out = out.contiguous(memory_format=memory_format)
    return out


def _slice(self: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    key = [slice(None)] * self.ndim
    key[dim] = slice(start, end, step)
    return self[tuple(key)]


def _index(self: Tensor, indices: list) -> Tensor:
    return self[tuple(slice(None) if i is None else i for i in indices)]


def _split(self: Tensor, split_size: int, dim: int = 0) -> list:
    return list(ember.split(self, split_size, dim))


def _clone(self: Tensor, *, memory_format=None) -> Tensor:
    if memory_format is None:
        return ember.clone(self)
    return ember.clone(self, memory_format=memory_format)


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups, benchmark, deterministic, cudnn_enabled, allow_tf32) -> Tensor:
    return ember.convolution(input, weight, bias, stride, padding, dilation, transposed,
                             output_padding, groups)


def _grads_of(out: Tensor, wrt: list, grad_out: Tensor) -> list:
    """The gradients of `out` (seeded with `grad_out`) for the tensors of `wrt` that are not
    None; None where `wrt` holds None."""
    want = [t for t in wrt if t is not None]
    got = iter(ember.autograd.grad(out, want, grad_out) if want else ())
    return [None if t is None else next(got) for t in wrt]


def _leaf(t: Tensor | None, needed: bool) -> Tensor | None:
    return None if t is None else t.detach().requires_grad_(needed)


def _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask) -> tuple:
    """The input, weight and bias gradients the mask asks for (None elsewhere), as the
    gradients of the convolution run again."""
    x, w = _leaf(input, output_mask[0]), _leaf(weight, output_mask[1])
    b = None
    if bias_sizes is not None:
        b = ember.zeros(list(bias_sizes), dtype=weight.dtype).requires_grad_(output_mask[2])
    with ember.enable_grad():
        out = ember.convolution(x, w, b, stride, padding, dilation, transposed,
                                output_padding, groups)
        wrt = [x if output_mask[0] else None, w if output_mask[1] else None,
               b if output_mask[2] else None]
        gx, gw, gb = _grads_of(out, wrt, grad_output)
    if output_mask[2] and gb is None:  # (no bias: its gradient is the output's sum)
        gb = grad_output.sum([0] + list(range(2, grad_output.ndim)))
    return gx, gw, gb


def _scores_logsumexp(query, key, attn_mask, is_causal, scale) -> Tensor:
    """log-sum-exp over the keys of the scaled, masked attention scores, one per query."""
    scale = query.shape[-1] ** -0.5 if scale is None else scale
    scores = ember.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        keep = ember.ones(query.shape[-2], key.shape[-2], dtype=ember.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) \
            if attn_mask.dtype == ember.bool else scores + attn_mask
    return scores.logsumexp(-1)


def _flash_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                   scale=None) -> tuple:
    out = F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                         scale=scale)
    with ember.no_grad():
        lse = _scores_logsumexp(query, key, attn_mask, is_causal, scale)
    return out, lse.to(ember.float32)


def _flash_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                            is_causal, *, attn_mask=None, scale=None) -> tuple:
    """The query, key and value gradients, as the gradients of the attention run again
    (`out` and `logsumexp` are what the forward gave; ember needs neither)."""
    if dropout_p > 0:
        raise NotImplementedError("ember's _scaled_dot_product_flash_attention_for_cpu_backward "
                                  "does not replay dropout")
    q, k, v = (t.detach().requires_grad_(True) for t in (query, key, value))
    with ember.enable_grad():
        again = F.scaled_dot_product_attention(q, k, v, attn_mask, 0.0, is_causal, scale=scale)
        return tuple(ember.autograd.grad(again, [q, k, v], grad_out))


def _tuple_of(fn: Callable) -> Callable:
    """`fn`'s named tuple as the plain tuple ATen returns."""
    return lambda *args, **kwargs: tuple(fn(*args, **kwargs))


def _elu(self: Tensor, alpha=1, scale=1, input_scale=1) -> Tensor:
    if scale == 1 and input_scale == 1:
        return F.elu(self, alpha)
    return scale * ember.where(self > 0, self, alpha * ember.expm1(self * input_scale))


# ATen's losses take the reduction as a number: none, mean, sum
_REDUCTIONS = ("none", "mean", "sum")


def _mse_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    return F.mse_loss(self, target, reduction=_REDUCTIONS[reduction])


def _bce_with_logits(self, target, weight=None, pos_weight=None, reduction=1) -> Tensor:
    return F.binary_cross_entropy_with_logits(self, target, weight,
                                              reduction=_REDUCTIONS[reduction],
                                              pos_weight=pos_weight)


def _nll_loss_forward(self, target, weight, reduction: int, ignore_index: int) -> tuple:
    """The loss and the total weight of the targets counted (0 for reduction "none")."""
    out = F.nll_loss(self, target, weight, ignore_index=ignore_index,
                     reduction=_REDUCTIONS[reduction])
    with ember.no_grad():
        if reduction == 0:
            total = ember.zeros((), dtype=self.dtype)
        else:
            kept = target != ignore_index
            w = ember.ones(self.shape[1 if self.ndim > 1 else 0], dtype=self.dtype) \
                if weight is None else weight
            total = (w[target.clamp(min=0)] * kept).sum()
    return out, total


def _max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                             ceil_mode=False) -> tuple:
    return tuple(F.max_pool2d(self, kernel_size, list(stride) or None, padding, dilation,
                              ceil_mode, return_indices=True))


def _avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None) -> Tensor:
    return F.avg_pool2d(self, kernel_size, list(stride) or None, padding, ceil_mode,
                        count_include_pad, divisor_override)


def _native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> tuple:
    """The normalized input and each (example, group)'s mean and 1/std."""
    out = F.group_norm(input, group, weight, bias, eps)
    with ember.no_grad():
        flat = input.reshape(N, group, -1)
        mean = flat.mean(-1)
        rstd = ember.rsqrt(flat.var(-1, correction=0) + eps)
    return out, mean, rstd


def _contiguous(self: Tensor, *, memory_format=0) -> Tensor:
    if memory_format in (0, None):  # (the schema's default: contiguous_format by number)
        return self.contiguous()
    return self.contiguous(memory_format=memory_format)


def _index_put_(self: Tensor, indices: list, values: Tensor, accumulate=False) -> Tensor:
    return self.index_put_(tuple(indices), values, accumulate)


# `name.overload` (or `name` for all its overloads) -> the implementation
IMPLS: dict[str, Callable] = {
    # (the Scalar overloads take alpha positionally; ember's functions as keywords)
    "add.Scalar": lambda self, other, alpha=1: ember.add(self, other, alpha=alpha),
    "sub.Scalar": lambda self, other, alpha=1: ember.sub(self, other, alpha=alpha),
    "rsub.Scalar": lambda self, other, alpha=1: ember.rsub(self, other, alpha=alpha),
    "sum.dim_IntList": _sum_dims, "mean.dim": _mean_dims, "var.correction": _var,
    "std.correction": _std,
    "_softmax": _half_softmax("softmax", F.softmax),
    "_log_softmax": _half_softmax("log_softmax", F.log_softmax),
    "zeros": _factory(ember.zeros), "ones": _factory(ember.ones),
    "empty.memory_format": _factory(ember.empty), "full": _factory(ember.full),
    "arange": _factory(ember.arange), "_to_copy": _to_copy, "clone": _clone,
    "view": lambda self, size: self.view(size),
    "view.dtype": lambda self, dtype: self.view(dtype),
    "_unsafe_view": lambda self, size: self.reshape(size),
    "expand": lambda self, size, *, implicit=False: self.expand(size),
    "slice.Tensor": _slice, "index.Tensor": _index, "split.Tensor": _split,
    "squeeze.default": lambda self: self.squeeze(),
    "_convolution": _convolution, "convolution_backward": _convolution_backward,
    "_scaled_dot_product_flash_attention_for_cpu": _flash_for_cpu,
    "_scaled_dot_product_flash_attention_for_cpu_backward": _flash_for_cpu_backward,
    "max.dim": _tuple_of(ember.max), "min.dim": _tuple_of(ember.min),
    "topk": _tuple_of(ember.topk), "sort": _tuple_of(ember.sort), "elu": _elu,
    "mse_loss": _mse_loss, "binary_cross_entropy_with_logits": _bce_with_logits,
    "nll_loss_forward": _nll_loss_forward, "max_pool2d_with_indices": _max_pool2d_with_indices,
    "avg_pool2d": _avg_pool2d, "native_group_norm": _native_group_norm,
    "empty_like": _factory(ember.empty_like), "zeros_like": _factory(ember.zeros_like),
    "ones_like": _factory(ember.ones_like), "full_like": _factory(ember.full_like),
    "rand": _factory(ember.rand), "randn": _factory(ember.randn),
    "constant_pad_nd": lambda self, pad, value=0: F.pad(self, list(pad), value=value),
    "repeat": lambda self, repeats: self.repeat(list(repeats)),
    "roll": lambda self, shifts, dims=(): ember.roll(self, shifts, _dims(dims) or None),
    "copy_": lambda self, src, non_blocking=False: self.copy_(
        src if isinstance(src, Tensor) else ember.tensor(src), non_blocking),
    "scatter.reduce": lambda self, dim, index, src, *, reduce: ember.scatter(
        self, dim, index, src, reduce=reduce),
    "scatter.value_reduce": lambda self, dim, index, value, *, reduce: ember.scatter(
        self, dim, index, value, reduce=reduce),
    "scatter_reduce.two": lambda self, dim, index, src, reduce, *, include_self=True:
        ember.scatter_reduce(self, dim, index, src, reduce, include_self=include_self),
    "unbind.int": lambda self, dim=0: list(ember.unbind(self, dim)),
    "contiguous": _contiguous, "index_put_": _index_put_,
    "alias": lambda self: self.view(self.shape),
    "bernoulli_.float": lambda self, p=0.5, *, generator=None: self.bernoulli_(
        p, generator=generator),
}


def implementation(name: str, overload: str) -> Callable:
    """What runs `aten.<name>.<overload>`."""
    fn = IMPLS.get(f"{name}.{overload}") or IMPLS.get(name)
    if fn is not None:
        return fn
    for space in (ember, F):
        fn = getattr(space, name, None)
        if callable(fn):
            return fn
    method = getattr(Tensor, name)
    return lambda self, *args, **kwargs: method(self, *args, **kwargs)
