"""Quantized inference and generation, the way mlx-lm runs small models.

`mx.quantize` / `dequantize` / `quantized_matmul`; a tiny decoder (RMSNorm, RoPE, fast SDPA,
SwiGLU, tied embeddings) quantized by `nn.quantize` generates with a KV cache (greedy,
temperature, top-k, top-p), is saved and reloaded; typical mistakes are caught.
"""

import math
import os
import tempfile

from mlx.utils import tree_flatten

import mlx.core as mx
import mlx.nn as nn


def show(name, a, decimals=4):
    vals = [round(v, decimals) for v in a.reshape(-1)[:4].tolist()]
    print(f"{name}: {a.dtype} {a.shape} {vals}")


def try_(label, fn):
    try:
        mx.eval(fn()), print(f"{label}: no error")
    except Exception as e:  # noqa: BLE001
        print(f"{label}: {type(e).__name__}: {e}")


def packing():
    print("== quantize / dequantize ==")
    w = mx.random.normal((8, 128), key=mx.random.key(1))
    for gs, bits in [(32, 2), (64, 3), (128, 4), (32, 6), (64, 8)]:
        wq, scales, biases = mx.quantize(w, group_size=gs, bits=bits)
        w_hat = mx.dequantize(wq, scales, biases, group_size=gs, bits=bits)
        print(f"gs={gs} bits={bits}: packed {wq.dtype} {wq.shape}, scales {scales.dtype} "
              f"{scales.shape}, biases {biases.shape}, max err {mx.abs(w - w_hat).max():.3f}")
    wq, scales, biases = packed = mx.quantize(w.astype(mx.float16), 64, 4)
    print("float16 in:", type(packed).__name__, wq.dtype, scales.dtype, biases.dtype)
    show("scales", scales), show("biases", biases)
    print("dequantize:", mx.dequantize(wq, scales, biases, 64, 4).dtype,
          mx.dequantize(wq, scales, biases, 64, 4, dtype=mx.bfloat16).dtype)


def qmatmul():
    print("== quantized_matmul ==")
    k1, k2 = mx.random.split(mx.random.key(2))
    x = mx.random.normal((3, 64), key=k1)
    w = mx.random.normal((32, 64), key=k2)
    for bits in (4, 8):
        wq, s, b = mx.quantize(w, group_size=32, bits=bits)
        y = mx.quantized_matmul(x, wq, s, b, transpose=True, group_size=32, bits=bits)
        ref = x @ mx.dequantize(wq, s, b, group_size=32, bits=bits).T
        close = mx.allclose(y, ref, atol=1e-4).item()
        print(f"bits={bits} transpose=True: {y.shape} {y.dtype} close={close}")
    w2 = mx.random.normal((64, 64), key=k2)
    wq, s, b = mx.quantize(w2, group_size=64, bits=4)
    y = mx.quantized_matmul(x, wq, s, b, transpose=False, group_size=64, bits=4)
    ref = x @ mx.dequantize(wq, s, b, group_size=64, bits=4)
    print(f"transpose=False: {y.shape} close={mx.allclose(y, ref, atol=1e-4).item()}")
    print("batched:", mx.quantized_matmul(mx.ones((2, 5, 64)), wq, s, b, True, 64, 4).shape)
    wq, s, b = mx.quantize(w2.astype(mx.float16), 64, 4)  # a float16 model, as mlx-lm's
    show("float16", mx.quantized_matmul(x.astype(mx.float16), wq, s, b, True, 64, 4)[0], 2)


class Attention(nn.Module):
    def __init__(self, dims, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(dims, dims, bias=False)
        self.k_proj = nn.Linear(dims, dims, bias=False)
        self.v_proj = nn.Linear(dims, dims, bias=False)
        self.o_proj = nn.Linear(dims, dims, bias=False)
        self.rope = nn.RoPE(dims // heads, traditional=False, base=10000)

    def __call__(self, x, mask=None, cache=None):
        B, L, D = x.shape
        q, k, v = (p(x).reshape(B, L, self.heads, -1).transpose(0, 2, 1, 3)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        offset = 0 if cache is None else cache[0].shape[2]
        q, k = self.rope(q, offset=offset), self.rope(k, offset=offset)
        if cache is not None:
            k = mx.concatenate([cache[0], k], axis=2)
            v = mx.concatenate([cache[1], v], axis=2)
        scale = 1 / math.sqrt(q.shape[-1])
        o = mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
        return self.o_proj(o.transpose(0, 2, 1, 3).reshape(B, L, D)), (k, v)


class Block(nn.Module):
    def __init__(self, dims, heads, hidden):
        super().__init__()
        self.attn = Attention(dims, heads)
        self.norm1, self.norm2 = nn.RMSNorm(dims, eps=1e-5), nn.RMSNorm(dims, eps=1e-5)
        self.gate = nn.Linear(dims, hidden, bias=False)
        self.up = nn.Linear(dims, hidden, bias=False)
        self.down = nn.Linear(hidden, dims, bias=False)

    def __call__(self, x, mask=None, cache=None):
        h, cache = self.attn(self.norm1(x), mask, cache)
        x, y = x + h, self.norm2(x + h)
        return x + self.down(nn.silu(self.gate(y)) * self.up(y)), cache


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dims=64, heads=4, hidden=128, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dims)
        self.blocks = [Block(dims, heads, hidden) for _ in range(layers)]
        self.norm = nn.RMSNorm(dims)

    def __call__(self, tokens, cache=None):
        mask = "causal" if tokens.shape[1] > 1 else None
        x, new = self.embed(tokens), []
        for block, c in zip(self.blocks, cache or [None] * len(self.blocks)):
            x, c = block(x, mask, c)
            new.append(c)
        return self.embed.as_linear(self.norm(x)), new


def sample(logits, temp, key, top_k=0, top_p=1.0):
    if temp == 0:
        return mx.argmax(logits, axis=-1)
    logits = logits / temp
    if top_k:
        kth = mx.argpartition(-logits, kth=top_k - 1, axis=-1)[..., top_k - 1:top_k]
        thresh = mx.take_along_axis(logits, kth, axis=-1)
        logits = mx.where(logits < thresh, -mx.inf, logits)
    if top_p < 1.0:
        probs = mx.softmax(logits, axis=-1)
        sorted_p = -mx.sort(-probs, axis=-1)
        kept = mx.where(mx.cumsum(sorted_p, axis=-1) - sorted_p < top_p, sorted_p, 1.0)
        logits = mx.where(probs >= kept.min(axis=-1, keepdims=True), logits, -mx.inf)
    return mx.random.categorical(logits, axis=-1, key=key)


def generate(model, prompt, steps, temp=0.0, seed=0, **kw):
    logits, cache = model(prompt)
    keys, out = mx.random.split(mx.random.key(seed), steps), []
    for i in range(steps):
        tok = sample(logits[:, -1, :], temp, keys[i], **kw)
        out.append(tok.item())
        logits, cache = model(tok[:, None], cache)
    return out, cache


def rope16(x, offset):
    return mx.fast.rope(x, x.shape[-1], traditional=False, base=1e4, scale=1.0, offset=offset)


def fast_ops():
    print("== mx.fast against nn ==")
    x = mx.random.normal((2, 4, 5, 16), key=mx.random.key(3))
    w = mx.random.uniform(shape=(16,), key=mx.random.key(4))
    ref = x * mx.rsqrt(mx.mean(x * x, axis=-1, keepdims=True) + 1e-5) * w
    print("rms_norm:", mx.allclose(mx.fast.rms_norm(x, w, 1e-5), ref, atol=1e-5).item())
    ln = nn.LayerNorm(16, affine=False)
    ln_fast = mx.fast.layer_norm(x, None, None, 1e-5)
    print("layer_norm:", mx.allclose(ln_fast, ln(x), atol=1e-5).item())
    for trad in (False, True):
        rope = nn.RoPE(8, traditional=trad, base=500.0, scale=0.5)
        fast = mx.fast.rope(x, 8, traditional=trad, base=500.0, scale=0.5, offset=3)
        print(f"rope traditional={trad}:", mx.allclose(fast, rope(x, offset=3), atol=1e-5).item())
        show("  rope", fast[0, 0, 1])
    per_row = rope16(x, mx.array([2, 9]))  # one offset per sequence, as a batched KV cache
    rows = mx.concatenate([rope16(x[:1], 2), rope16(x[1:], 9)])
    print("rope offset per batch entry:", mx.allclose(per_row, rows, atol=1e-5).item())


def keep_down_float(path, module):
    return isinstance(module, (nn.Linear, nn.Embedding)) and "down" not in path


def main():
    mx.random.seed(0)
    packing()
    qmatmul()
    fast_ops()

    print("== layers ==")
    lin = nn.Linear(64, 32)
    ql = nn.QuantizedLinear.from_linear(lin, group_size=32, bits=4)
    x = mx.random.normal((2, 64), key=mx.random.key(5))
    print("QuantizedLinear:", ql.weight.dtype, ql.weight.shape, ql.scales.shape, "bias" in ql)
    print("  max diff vs float:", f"{mx.abs(ql(x) - lin(x)).max().item():.3f}")
    emb = nn.Embedding(64, 64)
    qe = nn.QuantizedEmbedding.from_embedding(emb, group_size=64, bits=8)
    ids = mx.array([[1, 5, 63]])
    print("QuantizedEmbedding:", qe(ids).shape, qe(ids).dtype,
          f"{mx.abs(qe(ids) - emb(ids)).max().item():.3f}")
    print("  as_linear:", qe.as_linear(mx.ones((1, 64))).shape, "repr:", ql)

    model = TinyLM()
    mx.eval(model.parameters())
    prompt = mx.array([[3, 14, 15, 9, 26]])
    ref_logits, _ = model(prompt)
    show("  logits", ref_logits[0, -1])
    qmodel = TinyLM()
    qmodel.update(model.parameters())
    nn.quantize(qmodel, group_size=64, bits=4, class_predicate=keep_down_float)
    q_logits, _ = qmodel(prompt)
    print("quantized max abs diff:", f"{mx.abs(q_logits - ref_logits).max().item():.3f}")
    print("argmax agree:", (q_logits.argmax(-1) == ref_logits.argmax(-1)).sum().item(), "of 5")
    for k, v in tree_flatten(qmodel.parameters())[:8]:
        print(f"  {k}: {v.dtype} {v.shape}")
    print("  types:", type(qmodel.embed).__name__, type(qmodel.blocks[0].down).__name__,
          type(qmodel.blocks[0].attn.q_proj).__name__)

    print("== generation ==")
    greedy, cache = generate(qmodel, prompt, 6)
    print("greedy:", greedy, "cache", cache[0][0].shape)
    full, _ = qmodel(mx.concatenate([prompt, mx.array([greedy[:1]])], axis=1))
    step, _ = qmodel(mx.array([[greedy[0]]]), qmodel(prompt)[1])
    print("cache matches full pass:", mx.allclose(step[0, -1], full[0, 5], atol=1e-4).item())
    print("temp 0.8:", generate(qmodel, prompt, 6, temp=0.8, seed=7)[0])
    print("top_k 5:", generate(qmodel, prompt, 6, temp=1.0, seed=8, top_k=5)[0])
    print("top_p 0.9:", generate(qmodel, prompt, 6, temp=1.0, seed=9, top_p=0.9)[0])
    print("float greedy:", generate(model, prompt, 6)[0])

    print("== save / load ==")
    with tempfile.TemporaryDirectory() as d:
        for ext in ("npz", "safetensors"):
            path = os.path.join(d, f"q.{ext}")
            qmodel.save_weights(path)
            fresh = TinyLM()
            nn.quantize(fresh, 64, 4, class_predicate=keep_down_float)
            fresh.load_weights(path)
            same = mx.array_equal(fresh(prompt)[0], q_logits).item()
            print(f"{ext}: reloaded logits equal {same}")
        try_("load into float model", lambda: TinyLM().load_weights(path))

    print("== mistakes ==")
    try_("group size 64 on 96", lambda: mx.quantize(mx.zeros((4, 96)), 64, 4))
    try_("bits 5", lambda: mx.quantize(mx.zeros((4, 64)), 64, 5))  # (MLX accepts 1 and 5)
    try_("rope float offset", lambda: rope16(mx.zeros((1, 2, 8)), 1.5))
    try_("rope offsets for 3 of 2", lambda: rope16(mx.zeros((2, 1, 8)), mx.array([1, 2, 3])))
    try_("rope 2-d input", lambda: rope16(mx.zeros((2, 8)), 0))
    try_("group size 16", lambda: mx.quantize(mx.zeros((4, 64)), 16, 4))
    wq, s, b = mx.quantize(mx.zeros((32, 64)), 64, 4)
    try_("qmm shape", lambda: mx.quantized_matmul(mx.zeros((2, 32)), wq, s, b, True, 64, 4))
    try_("qmm 1-d weight", lambda: mx.quantized_matmul(mx.zeros((2, 64)), wq[0], s[0], b[0]))
    try_("dequantize scales", lambda: mx.dequantize(wq, s[:16], b, 64, 4))
    odd = nn.Sequential(nn.Linear(64, 64), nn.Linear(48, 64))
    try_("nn.quantize 48 inputs", lambda: nn.quantize(odd, 32, 4))
    nn.quantize(odd, 32, 4, class_predicate=lambda p, m: m.weight.shape[1] % 32 == 0)
    print("skipping it:", [type(m).__name__ for m in odd.layers])


if __name__ == "__main__":
    main()
