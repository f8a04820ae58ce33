"""Mixture-of-experts layers the way mlx-lm writes them (SwitchGLU / switch layers).

A top-k router (`argpartition`, `take_along_axis`, precise softmax), expert products by
`mx.gather_mm` (tokens sorted by expert, `sorted_indices=True`) and `mx.gather_qmm` on
quantized experts, checked against a dense `einsum` reference; `block_masked_mm`,
`segmented_mm`, `addmm`; a load-balancing loss, capacity-limited dispatch, expert-parallel
splitting; a few Adam steps through `gather_mm`, `mx.compile`, `nn.quantize` with a
class_predicate, half precision, and typical mistakes caught.
"""

import math

from mlx.utils import tree_flatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

D, H, E, K = 32, 64, 4, 2  # model width, expert hidden width, experts, experts per token


def show(name, a, decimals=4):
    vals = [round(v, decimals) for v in a.reshape(-1)[:4].tolist()]
    print(f"{name}: {a.dtype} {a.shape} {vals}")


def try_(label, fn):
    try:
        out = fn()
        mx.eval(out)
        if isinstance(out, (list, tuple)):
            print(f"{label}: no error, {type(out).__name__} of {len(out)}")
        else:
            print(f"{label}: no error, {out.dtype} {out.shape}")
    except Exception as e:  # noqa: BLE001
        print(f"{label}: {type(e).__name__}: {e}")


def gather_sort(x, indices):
    """Tokens repeated once per chosen expert, sorted by expert (mlx-lm's `_gather_sort`)."""
    *_, m = indices.shape
    indices = indices.flatten()
    order = mx.argsort(indices)
    inv_order = mx.argsort(order)
    return x.flatten(0, -3)[order // m], indices[order], inv_order


def scatter_unsort(x, inv_order, shape):
    return mx.unflatten(x[inv_order], 0, shape)


class SwitchLinear(nn.Module):
    def __init__(self, din, dout, experts, key):
        super().__init__()
        scale = math.sqrt(1 / din)
        self.weight = mx.random.uniform(-scale, scale, (experts, dout, din), key=key)

    def __call__(self, x, indices, sorted_indices=False):
        return mx.gather_mm(x, self["weight"].swapaxes(-1, -2), rhs_indices=indices,
                            sorted_indices=sorted_indices)

    def to_quantized(self, group_size=64, bits=4, mode="affine"):
        return QuantizedSwitchLinear(self, group_size, bits)


class QuantizedSwitchLinear(nn.Module):
    def __init__(self, linear, group_size, bits):
        super().__init__()
        self.group_size, self.bits = group_size, bits
        self.weight, self.scales, self.biases = mx.quantize(linear.weight, group_size, bits)
        self.freeze()

    def __call__(self, x, indices, sorted_indices=False):
        return mx.gather_qmm(x, self["weight"], self["scales"], self["biases"],
                             rhs_indices=indices, transpose=True, group_size=self.group_size,
                             bits=self.bits, sorted_indices=sorted_indices)


class SwitchGLU(nn.Module):
    def __init__(self, key):
        super().__init__()
        k1, k2, k3 = mx.random.split(key, 3)
        self.gate_proj = SwitchLinear(D, H, E, k1)
        self.up_proj = SwitchLinear(D, H, E, k2)
        self.down_proj = SwitchLinear(H, D, E, k3)

    def __call__(self, x, indices, sort=True):
        x = mx.expand_dims(x, (-2, -3))
        idx, inv_order = indices, None
        if sort:
            x, idx, inv_order = gather_sort(x, indices)
        idx = mx.stop_gradient(idx)
        up = self.up_proj(x, idx, sorted_indices=sort)
        gate = self.gate_proj(x, idx, sorted_indices=sort)
        x = self.down_proj(nn.silu(gate) * up, idx, sorted_indices=sort)
        if sort:
            x = scatter_unsort(x, inv_order, indices.shape)
        return x.squeeze(-2)


class MoEBlock(nn.Module):
    def __init__(self, key):
        super().__init__()
        k1, k2 = mx.random.split(key)
        self.gate = nn.Linear(D, E, bias=False)
        self.gate.weight = mx.random.normal((E, D), key=k1) * 0.3
        self.switch_mlp = SwitchGLU(k2)

    def route(self, x):
        gates = self.gate(x)
        inds = mx.stop_gradient(mx.argpartition(-gates, kth=K - 1, axis=-1)[..., :K])
        scores = mx.softmax(mx.take_along_axis(gates, inds, axis=-1), axis=-1, precise=True)
        return gates, inds, scores

    def __call__(self, x, sort=True):
        _, inds, scores = self.route(x)
        y = self.switch_mlp(x, inds, sort=sort)
        return (y * scores[..., None]).sum(axis=-2)


def dense_reference(block, x):
    """Every expert on every token by einsum, then the router's weights pick K of them."""
    gates, inds, scores = block.route(x)
    mlp = block.switch_mlp
    g = mx.einsum("btd,ehd->bteh", x, mlp.gate_proj.weight)
    u = mx.einsum("btd,ehd->bteh", x, mlp.up_proj.weight)
    y = mx.einsum("bteh,edh->bted", nn.silu(g) * u, mlp.down_proj.weight)
    w = mx.zeros(gates.shape)
    w = mx.put_along_axis(w, inds, scores, axis=-1)
    return mx.einsum("bted,bte->btd", y, w)


def router(block, x):
    print("== router ==")
    gates, inds, scores = block.route(x)
    show("gates", gates)
    print("top-k experts:", inds.dtype, inds.shape, mx.sort(inds, axis=-1)[0].tolist())
    print("argpartition order:", inds[1].tolist())
    show("scores", scores)
    print("scores sum to 1:", mx.allclose(scores.sum(-1), mx.ones(scores.shape[:-1])).item())
    probs = mx.softmax(gates, axis=-1, precise=True)
    top = mx.take_along_axis(probs, inds, axis=-1)
    norm = top / top.sum(-1, keepdims=True)
    print("softmax-then-normalise equals top-k softmax:", mx.allclose(norm, scores).item())
    full = mx.argsort(-gates, axis=-1)[..., :K]
    same = mx.array_equal(mx.sort(full, axis=-1), mx.sort(inds, axis=-1))
    print("argpartition picks the argsort top-k:", same.item())
    return inds, scores


def gathered_products(block, x, inds):
    print("== gather_mm ==")
    a = mx.random.normal((3, 2, 5), key=mx.random.key(10))
    b = mx.random.normal((4, 5, 6), key=mx.random.key(11))
    lhs, rhs = mx.array([0, 2, 1, 2]), mx.array([3, 0, 0, 1])
    out = mx.gather_mm(a, b, lhs, rhs)
    ref = mx.stack([a[i] @ b[j] for i, j in zip(lhs.tolist(), rhs.tolist())])
    show("gather_mm", out)
    print("equals take + matmul:", mx.allclose(out, ref, atol=1e-5).item())
    print("only rhs:", mx.gather_mm(a[:1], b, None, rhs).shape,
          "only lhs:", mx.gather_mm(a, b[:1], lhs, None).shape)
    print("2-d indices:", mx.gather_mm(a, b, lhs.reshape(2, 2), rhs.reshape(2, 2)).shape,
          "broadcast:", mx.gather_mm(a, b, mx.array([[0], [1]]), mx.array([1, 2, 3])).shape)
    print("vector lhs:", mx.gather_mm(a[0, 0], b, None, rhs).shape,
          "vector rhs:", mx.gather_mm(a, b[0, :, 0], lhs, None).shape)
    print("no indices is matmul:", mx.array_equal(mx.gather_mm(a[:1], b[:1]), a[:1] @ b[:1]).item())
    print("uint8 / int64 indices:", mx.allclose(mx.gather_mm(a, b, lhs.astype(mx.uint8),
                                                             rhs.astype(mx.int64)), ref).item())

    # tokens sorted by expert, as SwitchGLU does for large batches
    xs = mx.expand_dims(x, (-2, -3))
    x_sorted, idx_sorted, inv = gather_sort(xs, inds)
    print("sorted expert ids:", idx_sorted.tolist())
    print("sort of ids equals gathered ids:",
          mx.array_equal(mx.sort(inds.flatten()), idx_sorted).item())
    print("inverse order restores:", mx.array_equal(idx_sorted[inv], inds.flatten()).item())
    w = block.switch_mlp.up_proj.weight.swapaxes(-1, -2)
    y_sorted = mx.gather_mm(x_sorted, w, rhs_indices=idx_sorted, sorted_indices=True)
    y_plain = mx.gather_mm(xs, w, rhs_indices=inds)
    print("sorted shape", y_sorted.shape, "unsorted shape", y_plain.shape)
    back = scatter_unsort(y_sorted, inv, inds.shape)
    print("sorted path equals unsorted:", mx.allclose(back, y_plain, atol=1e-5).item())

    y = block(x)
    y_nosort = block(x, sort=False)
    ref = dense_reference(block, x)
    show("moe out", y)
    print("sorted == unsorted == dense einsum:", mx.allclose(y, y_nosort, atol=1e-5).item(),
          mx.allclose(y, ref, atol=1e-5).item())


def quantized_experts(block, x, inds):
    print("== gather_qmm ==")
    w = block.switch_mlp.up_proj.weight  # (E, H, D)
    xs = mx.expand_dims(x, (-2, -3))
    for gs, bits in [(32, 4), (32, 8), (32, 2)]:
        wq, scales, biases = mx.quantize(w, group_size=gs, bits=bits)
        y = mx.gather_qmm(xs, wq, scales, biases, rhs_indices=inds, transpose=True,
                          group_size=gs, bits=bits)
        w_hat = mx.dequantize(wq, scales, biases, group_size=gs, bits=bits)
        ref = mx.gather_mm(xs, w_hat.swapaxes(-1, -2), rhs_indices=inds)
        print(f"gs={gs} bits={bits}: packed {wq.shape}, out {y.dtype} {y.shape}, "
              f"equals dequantized gather_mm: {mx.allclose(y, ref, atol=1e-4).item()}")
    # transpose=False: weights stored (E, D, H), quantized along H
    wt = w.swapaxes(-1, -2)
    wq, scales, biases = mx.quantize(wt, group_size=32, bits=4)
    y = mx.gather_qmm(xs, wq, scales, biases, rhs_indices=inds, transpose=False,
                      group_size=32, bits=4)
    ref = mx.gather_mm(xs, mx.dequantize(wq, scales, biases, 32, 4), rhs_indices=inds)
    show("transpose=False", y)
    print("equals dequantized gather_mm:", mx.allclose(y, ref, atol=1e-4).item())
    x_sorted, idx_sorted, inv = gather_sort(xs, inds)
    wq, scales, biases = mx.quantize(w, group_size=32, bits=4)
    ys = mx.gather_qmm(x_sorted, wq, scales, biases, rhs_indices=idx_sorted, group_size=32,
                       bits=4, sorted_indices=True)
    yu = mx.gather_qmm(xs, wq, scales, biases, rhs_indices=inds, group_size=32, bits=4)
    print("sorted gather_qmm equals unsorted:",
          mx.allclose(scatter_unsort(ys, inv, inds.shape), yu, atol=1e-5).item())
    both = mx.gather_qmm(xs.flatten(0, -3), wq, scales, biases, lhs_indices=mx.array([0, 3, 5]),
                         rhs_indices=mx.array([1, 1, 2]), group_size=32, bits=4)
    show("lhs and rhs indices", both)
    print("no indices is quantized_matmul:", mx.array_equal(
        mx.gather_qmm(x, wq[0], scales[0], biases[0], group_size=32, bits=4),
        mx.quantized_matmul(x, wq[0], scales[0], biases[0], group_size=32, bits=4)).item())


def masked_and_segmented():
    print("== block_masked_mm / segmented_mm / addmm ==")
    a = mx.random.normal((64, 96), key=mx.random.key(20))
    b = mx.random.normal((96, 64), key=mx.random.key(21))
    mask_out = mx.array([[True, False], [True, True]])
    out = mx.block_masked_mm(a, b, 32, mask_out=mask_out)
    full = a @ b
    print("masked block is zero:", (out[:32, 32:] == 0).all().item(),
          "kept blocks equal:", mx.allclose(out[32:], full[32:], atol=1e-4).item())
    mask_lhs = mx.array([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]])
    out = mx.block_masked_mm(a, b, 32, mask_lhs=mask_lhs)
    scaled = a * mx.repeat(mx.repeat(mask_lhs, 32, 0), 32, 1)
    print("float lhs mask scales blocks:", mx.allclose(out, scaled @ b, atol=1e-4).item())
    show("block_masked_mm", out, 3)
    segs = mx.array([[0, 10], [10, 40], [40, 96], [5, 5]])
    seg = mx.segmented_mm(a[:4], b[:, :3], segs)
    parts = [a[:4, s:e] @ b[s:e, :3] for s, e in segs.tolist()]
    print("segmented_mm:", seg.shape, "segments sum to matmul:",
          mx.allclose(seg.sum(0), a[:4] @ b[:, :3], atol=1e-4).item(),
          "each equals slice matmul:", mx.allclose(seg, mx.stack(parts), atol=1e-4).item())
    print("empty segment is zero:", (seg[3] == 0).all().item())
    c = mx.random.normal((4, 3), key=mx.random.key(22))
    r = mx.addmm(c, a[:4], b[:, :3], alpha=0.5, beta=2.0)
    print("addmm:", mx.allclose(r, 0.5 * (a[:4] @ b[:, :3]) + 2.0 * c, atol=1e-4).item())
    show("addmm", r)


def balancing_and_capacity(block, x):
    print("== load balancing / capacity ==")
    gates, inds, _ = block.route(x)
    probs = mx.softmax(gates, axis=-1, precise=True)
    flat = inds.reshape(-1)
    counts = mx.zeros((E,)).at[flat].add(1)
    print("tokens per expert:", counts.tolist())
    frac = counts / flat.size
    mean_prob = mx.mean(probs.reshape(-1, E), axis=0)
    aux = E * mx.sum(frac * mean_prob)
    print(f"aux loss: {aux.item():.5f}", "counts dtype", counts.dtype)
    onehot = (flat[:, None] == mx.arange(E)).astype(mx.int32)
    print("one-hot counts equal:", mx.array_equal(onehot.sum(0), counts.astype(mx.int32)).item())
    # capacity-limited dispatch: each expert keeps its first `capacity` tokens
    capacity = 3
    top1 = mx.argmax(gates, axis=-1).reshape(-1).astype(mx.int32)
    oh = (top1[:, None] == mx.arange(E)).astype(mx.int32)
    pos = mx.cumsum(oh, axis=0) * oh - 1
    slot = (pos * oh).sum(-1)
    kept = mx.where(slot < capacity, top1, -1)
    print("top-1 experts:", top1.tolist())
    print("slots:", slot.tolist())
    print("kept:", kept.tolist(), "dropped:", (kept < 0).sum().item())
    dispatch = mx.zeros((E, capacity, D))
    tok = x.reshape(-1, D)
    keep = kept >= 0
    rows = mx.where(keep, top1, 0)
    cols = mx.where(keep, slot, 0)
    dispatch = dispatch.at[rows, cols].add(mx.where(keep[:, None], tok, 0.0))
    print("dispatched tokens:", (mx.abs(dispatch).sum(-1) > 0).sum().item(),
          "buffer", dispatch.shape)


def expert_parallel(block, x):
    print("== expert parallel ==")
    _, inds, scores = block.route(x)
    mlp = block.switch_mlp
    names = ("gate_proj", "up_proj", "down_proj")
    halves = {n: mx.split(getattr(mlp, n).weight, 2, axis=0) for n in names}
    xs = mx.expand_dims(x, (-2, -3))
    y = 0
    for r in range(2):
        lo = r * (E // 2)
        local = mx.where((inds >= lo) & (inds < lo + E // 2), inds - lo, 0)
        mine = ((inds >= lo) & (inds < lo + E // 2)).astype(x.dtype)
        g = mx.gather_mm(xs, halves["gate_proj"][r].swapaxes(-1, -2), rhs_indices=local)
        u = mx.gather_mm(xs, halves["up_proj"][r].swapaxes(-1, -2), rhs_indices=local)
        d = mx.gather_mm(nn.silu(g) * u, halves["down_proj"][r].swapaxes(-1, -2),
                         rhs_indices=local).squeeze(-2)
        y = y + (d * (scores * mine)[..., None]).sum(-2)
        print(f"rank {r}: experts {lo}..{lo + E // 2 - 1}, tokens {int(mine.sum().item())}")
    print("split pieces:", [p.shape for p in halves["up_proj"]])
    joined = mx.concatenate(halves["up_proj"], axis=0)
    print("concatenate restores:", mx.array_equal(joined, mlp.up_proj.weight).item())
    print("two ranks equal one:", mx.allclose(y, block(x), atol=1e-5).item())


def train(x, target):
    print("== training through gather_mm ==")
    model = MoEBlock(mx.random.key(3))
    opt = optim.Adam(learning_rate=3e-3)

    def loss_fn(m, x, t):
        return nn.losses.mse_loss(m(x), t)

    step = nn.value_and_grad(model, loss_fn)
    for i in range(6):
        loss, grads = step(model, x, target)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        if i == 0:
            g = grads["switch_mlp"]["up_proj"]["weight"]
            used = mx.zeros((E,)).at[model.route(x)[1].reshape(-1)].add(1) > 0
            per_expert = mx.sqrt((g * g).sum(axis=(1, 2)))
            print("grad shapes:", [(k, v.shape) for k, v in tree_flatten(grads)])
            print("unused experts get zero grad:",
                  mx.array_equal(per_expert == 0, mx.logical_not(used)).item())
            print("router grad nonzero:", (mx.abs(grads["gate"]["weight"]).sum() > 0).item())
        print(f"step {i}: loss {loss.item():.5f}")
    return model


def compiled(model, x):
    print("== compile ==")
    fwd = mx.compile(lambda x: model(x))
    y1, y2 = fwd(x), fwd(x * 2)
    print("compiled equals eager:", mx.allclose(y1, model(x), atol=1e-5).item(),
          mx.allclose(y2, model(x * 2), atol=1e-5).item())
    show("compiled", y1)


def quantize_model(model, x):
    print("== nn.quantize ==")
    y = model(x)

    def pred(path, m):
        if isinstance(m, nn.Linear):
            return False
        return hasattr(m, "to_quantized") and {"group_size": 32, "bits": 8}

    nn.quantize(model, class_predicate=pred)
    mlp = model.switch_mlp
    print("types:", type(model.gate).__name__, type(mlp.up_proj).__name__)
    print("params:", sorted(k for k, _ in tree_flatten(model.parameters())))
    print("trainable:", sorted(k for k, _ in tree_flatten(model.trainable_parameters())))
    yq = model(x)
    print("quantized output close:", mx.allclose(yq, y, atol=5e-2).item())
    show("quantized out", yq, 3)


def half_precision(block, x, inds):
    print("== float16 / bfloat16 ==")
    xs = mx.expand_dims(x, (-2, -3))
    w = block.switch_mlp.up_proj.weight.swapaxes(-1, -2)
    for dt in (mx.float16, mx.bfloat16):
        try_(f"gather_mm {dt}", lambda dt=dt: mx.gather_mm(xs.astype(dt), w.astype(dt),
                                                            rhs_indices=inds))
    mixed = mx.gather_mm(xs.astype(mx.float16), w, rhs_indices=inds)
    print("float16 x float32:", mixed.dtype)
    try_("bfloat16 x float16", lambda: mx.gather_mm(xs.astype(mx.bfloat16),
                                                    w.astype(mx.float16), rhs_indices=inds))
    try_("float64 (cpu stream)", lambda: mx.gather_mm(xs.astype(mx.float64), w,
                                                      rhs_indices=inds, stream=mx.cpu))
    ref = mx.gather_mm(xs, w, rhs_indices=inds)
    print("float16 x float32 rounds x:", mx.allclose(mixed, ref, atol=0.05).item(),
          mx.array_equal(mixed, mx.gather_mm(xs.astype(mx.float16).astype(mx.float32), w,
                                             rhs_indices=inds)).item())
    for dt in (mx.float16, mx.bfloat16):
        wq, s, b = mx.quantize(block.switch_mlp.up_proj.weight.astype(dt), 32, 4)
        yq = mx.gather_qmm(xs.astype(dt), wq, s, b, rhs_indices=inds, group_size=32, bits=4)
        ref = mx.gather_qmm(xs, wq, s.astype(mx.float32), b.astype(mx.float32), rhs_indices=inds,
                            group_size=32, bits=4)
        print(f"gather_qmm {dt}: scales {s.dtype}, out {yq.dtype}, close to float32:",
              mx.allclose(yq.astype(mx.float32), ref, atol=0.05).item(), "float32 x gives",
              mx.gather_qmm(xs, wq, s, b, rhs_indices=inds, group_size=32, bits=4).dtype)
        show(f"  {dt}", yq, 2)
    gq = mx.grad(lambda w: mx.gather_mm(xs, w, rhs_indices=inds).sum())(w)
    print("grad through gather_mm:", gq.dtype, gq.shape)
    g16 = mx.grad(lambda w: mx.gather_mm(xs.astype(mx.float16), w, rhs_indices=inds).sum())
    try_("grad through float16 gather_mm", lambda: g16(w.astype(mx.float16)))


def mistakes(block):
    print("== typical mistakes ==")
    a = mx.random.normal((4, 2, 3), key=mx.random.key(30))
    b = mx.random.normal((3, 3, 5), key=mx.random.key(31))
    ok = mx.gather_mm(a, b, mx.array([5]), mx.array([4]))
    print("index past the batch wraps (no error):",
          mx.allclose(ok[0], a[1] @ b[1]).item())
    try_("float indices", lambda: mx.gather_mm(a, b, mx.array([0.0, 1.0]), mx.array([1, 2])))
    try_("bool indices", lambda: mx.gather_mm(a, b, mx.array([True]), mx.array([1])))
    try_("index shapes", lambda: mx.gather_mm(a, b, mx.array([0, 1, 2]), mx.array([1, 2])))
    try_("default lhs vs rhs", lambda: mx.gather_mm(a, b, None, mx.array([1, 2])))
    try_("inner dims", lambda: mx.gather_mm(a, b[:, :2], None, mx.array([1, 2, 0, 0])))
    try_("int operands", lambda: mx.gather_mm(a.astype(mx.int32), b.astype(mx.int32),
                                              mx.array([0]), mx.array([1])))
    try_("0-d operand", lambda: mx.gather_mm(mx.array(1.0), b, None, mx.array([1])))
    try_("sorted flag, both indices", lambda: mx.gather_mm(a, b, mx.array([0, 1]),
                                                           mx.array([1, 2]), sorted_indices=True))
    w = mx.random.normal((E, 32, 64), key=mx.random.key(32))
    try_("quantize group_size 48", lambda: mx.quantize(w, group_size=48, bits=4))
    try_("quantize bits 5 gs 64", lambda: mx.quantize(w, group_size=64, bits=5))
    try_("quantize bits 7", lambda: mx.quantize(w, group_size=64, bits=7))
    try_("quantize last dim", lambda: mx.quantize(w[..., :40], group_size=32, bits=4))
    wq, s, bb = mx.quantize(w, group_size=32, bits=4)
    x = mx.random.normal((3, 1, 64), key=mx.random.key(33))
    try_("gather_qmm", lambda: mx.gather_qmm(x, wq, s, bb, rhs_indices=mx.array([0, 3, 1]),
                                             group_size=32, bits=4))
    try_("gather_qmm wrong group", lambda: mx.gather_qmm(x, wq, s, bb, rhs_indices=mx.array([0]),
                                                         group_size=64, bits=4))
    try_("gather_qmm x dims", lambda: mx.gather_qmm(x[..., :32], wq, s, bb,
                                                    rhs_indices=mx.array([0]), group_size=32,
                                                    bits=4))
    try_("gather_qmm float indices", lambda: mx.gather_qmm(x, wq, s, bb,
                                                           rhs_indices=mx.array([0.5]),
                                                           group_size=32, bits=4))
    try_("gather_qmm int x", lambda: mx.gather_qmm(x.astype(mx.int32), wq, s, bb,
                                                   rhs_indices=mx.array([0]), group_size=32,
                                                   bits=4))
    try_("gather_qmm unpacked w", lambda: mx.gather_qmm(x, w, s, bb, rhs_indices=mx.array([0]),
                                                        group_size=32, bits=4))
    a64, b64 = mx.zeros((64, 64)), mx.zeros((64, 64))
    try_("block size 16", lambda: mx.block_masked_mm(a64, b64, 16,
                                                     mask_out=mx.ones((4, 4), mx.bool_)))
    try_("mask shape", lambda: mx.block_masked_mm(a64, b64, 32, mask_out=mx.ones((3, 2), mx.bool_)))
    try_("segments shape", lambda: mx.segmented_mm(a64, b64, mx.array([0, 64])))
    try_("segments float", lambda: mx.segmented_mm(a64, b64, mx.array([[0.0, 64.0]])))
    try_("segmented batched", lambda: mx.segmented_mm(a, b, mx.array([[0, 3]])))
    xs = mx.ones((2, 1, 3))
    try_("vmap of gather_mm", lambda: mx.vmap(
        lambda y: mx.gather_mm(y, b, None, mx.array([0, 2])))(mx.stack([xs, xs])))
    try_("jvp of gather_mm", lambda: mx.jvp(
        lambda y: mx.gather_mm(y, b, None, mx.array([0, 2])), [xs], [xs])[1][0])
    try_("grad of segmented_mm", lambda: mx.grad(
        lambda y: mx.segmented_mm(y, mx.ones((3, 2)), mx.array([[0, 2]])).sum())(xs[0]))
    try_("where uint32 ids, -1", lambda: mx.where(mx.array([True]), mx.array([1], mx.uint32), -1))
    try_("argpartition kth", lambda: mx.argpartition(mx.zeros((2, E)), kth=E, axis=-1))
    try_("take_along_axis dims", lambda: mx.take_along_axis(mx.zeros((2, E)), mx.array([0, 1]),
                                                           axis=-1))


def main():
    mx.random.seed(0)
    block = MoEBlock(mx.random.key(1))
    x = mx.random.normal((2, 5, D), key=mx.random.key(2))
    inds, _ = router(block, x)
    gathered_products(block, x, inds)
    quantized_experts(block, x, inds)
    masked_and_segmented()
    balancing_and_capacity(block, x)
    expert_parallel(block, x)
    target = mx.random.normal((2, 5, D), key=mx.random.key(4)) * 0.1
    model = train(x, target)
    compiled(model, x)
    half_precision(block, x, inds)
    quantize_model(model, x)
    mistakes(block)


if __name__ == "__main__":
    main()
