"""LoRA fine-tuning of a tiny language model, in the shape of MLX's lora example (mlx-examples).

A small decoder (RMSNorm, RoPE, `mx.fast.scaled_dot_product_attention`, SwiGLU) learns a
repeating phrase. Frozen, its attention projections get LoRA adapters (`scale * x A B` beside
the frozen weight) that alone learn a reordered phrase in a compiled, length-masked step. The
adapters are saved and reloaded, fused, the model quantized to 4 bits and sampled with a KV
cache; typical mistakes end the run. Run on ember with `python -m ember.run lora_finetune.py`.
"""

import math
import os
import tempfile
from functools import partial

from mlx.utils import tree_flatten, tree_map, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


class LoRALinear(nn.Module):
    @staticmethod
    def from_linear(linear: nn.Linear, rank: int = 4, scale: float = 2.0, dropout: float = 0.0):
        lora = LoRALinear(*reversed(linear.weight.shape), rank, scale, dropout)
        lora.linear = linear
        return lora

    def __init__(self, in_dims, out_dims, rank=4, scale=2.0, dropout=0.0):
        super().__init__()
        self.linear = nn.Linear(in_dims, out_dims, bias=False)
        self.dropout, self.scale, bound = nn.Dropout(p=dropout), scale, 1 / math.sqrt(in_dims)
        self.lora_a = mx.random.uniform(low=-bound, high=bound, shape=(in_dims, rank))
        self.lora_b = mx.zeros((rank, out_dims))

    def __call__(self, x):
        z = (self.dropout(x) @ self.lora_a) @ self.lora_b
        return self.linear(x) + (self.scale * z).astype(x.dtype)

    def fuse(self) -> nn.Linear:
        weight = self.linear.weight
        fused = nn.Linear(weight.shape[1], weight.shape[0], bias=False)
        fused.weight = weight + ((self.scale * self.lora_b.T) @ self.lora_a.T).astype(weight.dtype)
        return fused


class Attention(nn.Module):
    def __init__(self, dims: int, n_heads: int):
        super().__init__()
        self.n_heads, self.scale = n_heads, (dims // n_heads) ** -0.5
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (
            nn.Linear(dims, dims, bias=False) for _ in range(4))
        self.rope = nn.RoPE(dims // n_heads, traditional=True, base=10000)

    def __call__(self, x, mask=None, cache=None):
        B, L, D = x.shape
        q, k, v = (p(x).reshape(B, L, self.n_heads, -1).transpose(0, 2, 1, 3)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        offset = 0 if cache is None else cache[0].shape[2]
        q, k = self.rope(q, offset=offset), self.rope(k, offset=offset)
        if cache is not None:
            k, v = mx.concatenate([cache[0], k], axis=2), mx.concatenate([cache[1], v], axis=2)
        o = mx.fast.scaled_dot_product_attention(q, k, v, scale=self.scale, mask=mask)
        return self.o_proj(o.transpose(0, 2, 1, 3).reshape(B, L, D)), (k, v)


class Block(nn.Module):
    def __init__(self, dims: int, n_heads: int, hidden: int):
        super().__init__()
        self.attention = Attention(dims, n_heads)
        self.attention_norm, self.mlp_norm = nn.RMSNorm(dims, eps=1e-5), nn.RMSNorm(dims, eps=1e-5)
        self.gate_proj, self.up_proj = (nn.Linear(dims, hidden, bias=False) for _ in range(2))
        self.down_proj = nn.Linear(hidden, dims, bias=False)

    def __call__(self, x, mask=None, cache=None):
        h, cache = self.attention(self.attention_norm(x), mask, cache)
        x, y = x + h, self.mlp_norm(x + h)
        return x + self.down_proj(nn.silu(self.gate_proj(y)) * self.up_proj(y)), cache


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 32, dims: int = 32, n_heads: int = 4, n_layers: int = 2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dims)
        self.layers = [Block(dims, n_heads, 2 * dims) for _ in range(n_layers)]
        self.norm = nn.RMSNorm(dims, eps=1e-5)
        self.lm_head = nn.Linear(dims, vocab, bias=False)

    def __call__(self, inputs, cache=None, mask="causal"):
        h, L = self.embed_tokens(inputs), inputs.shape[1]
        if cache is not None:  # generating: an explicit additive mask for the prompt
            mask = nn.MultiHeadAttention.create_additive_causal_mask(L, h.dtype) if L > 1 else None
        cache = cache or [None] * len(self.layers)
        for i, layer in enumerate(self.layers):
            h, cache[i] = layer(h, mask, cache[i])
        return self.lm_head(self.norm(h)), cache


def loss_fn(model, inputs, targets, lengths):
    logits, _ = model(inputs)
    mask = mx.arange(inputs.shape[1])[None, :] < lengths[:, None]
    ce, ntoks = nn.losses.cross_entropy(logits, targets) * mask, mask.sum()
    return ce.astype(mx.float32).sum() / ntoks, ntoks


def batches(phrase, key, batch_size=4, length=12):
    corpus = mx.tile(phrase, (8,))
    while True:
        key, k1, k2 = mx.random.split(key, 3)
        starts = mx.random.randint(0, corpus.size - length - 1, (batch_size,), key=k1)
        windows = corpus[starts[:, None] + mx.arange(length + 1)]
        lengths = mx.random.randint(length // 2, length + 1, (batch_size,), key=k2)
        yield windows[:, :-1], windows[:, 1:], lengths


def top_p_sample(logits, top_p, temp, key):
    probs = mx.softmax(logits / temp, axis=-1)
    order = mx.argsort(probs, axis=-1)
    sorted_probs = mx.take_along_axis(probs, order, axis=-1)
    kept = mx.where(mx.cumsum(sorted_probs, axis=-1) > 1 - top_p, sorted_probs, 0)
    choice = mx.random.categorical(mx.log(kept), key=key)
    return mx.take_along_axis(order, choice[:, None], axis=-1).squeeze(1)


def generate(model, prompt, n, sampler, key):
    (logits, cache), tokens = model(prompt[None], cache=[None] * len(model.layers)), []
    for _ in range(n):
        key, sub = mx.random.split(key)
        token = sampler(logits[:, -1, :], sub)
        tokens.append(token.item())
        logits, cache = model(token[:, None], cache=cache)
    return tokens, cache


def add_adapters(model, dropout=0.0):
    for layer in model.layers:
        attn = layer.attention
        attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj = (
            LoRALinear.from_linear(p, rank=4, scale=2.0, dropout=dropout)
            for p in (attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj))


def main():
    count = lambda tree: sum(v.size for _, v in tree_flatten(tree))
    k_old, k_new, k_data, k_gen = mx.random.split(mx.random.key(3), 4)
    mx.random.seed(11)
    old_phrase = mx.random.randint(0, 32, (7,), key=k_old)
    new_phrase = mx.random.permutation(old_phrase, key=k_new)
    print("phrases:", old_phrase.tolist(), new_phrase.tolist(), old_phrase.dtype)
    model = TinyLM()
    mx.eval(model.parameters())
    print(f"model: {count(model.parameters())} parameters, lm_head {model.lm_head.weight.shape}")
    optimizer = optim.AdamW(learning_rate=optim.cosine_decay(3e-3, 30, end=3e-4), weight_decay=0.0)
    loss_and_grad = nn.value_and_grad(model, loss_fn)
    data = batches(old_phrase, k_data)
    for it in range(1, 31):
        (loss, ntoks), grads = loss_and_grad(model, *next(data))
        grads, norm = optim.clip_grad_norm(grads, max_norm=1.0)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        if it % 10 == 0:
            print(f"pretrain {it}: loss {loss.item():.4f}, {ntoks} tokens, norm {norm.item():.3f}")
    base_weights = tree_flatten(model.parameters())
    add_adapters(model, dropout=0.1)
    model.freeze()
    model.unfreeze(keys=["lora_a", "lora_b"], strict=False)
    trainable, total = count(model.trainable_parameters()), count(model.parameters())
    print(f"LoRA: {trainable} trainable of {total} ({100 * trainable / total:.3f}%)")
    print("trainable:", [k for k, _ in tree_flatten(model.trainable_parameters())][:3])
    schedule = optim.join_schedules(
        [optim.linear_schedule(1e-4, 2e-2, 5), optim.cosine_decay(2e-2, 35, end=1e-4)], [5])
    optimizer = optim.AdamW(learning_rate=schedule, betas=[0.9, 0.98], bias_correction=True)
    loss_and_grad = nn.value_and_grad(model, loss_fn)
    state = [model.state, optimizer.state, mx.random.state]
    @partial(mx.compile, inputs=state, outputs=state)
    def step(inputs, targets, lengths):
        (loss, ntoks), grads = loss_and_grad(model, inputs, targets, lengths)
        grads, _ = optim.clip_grad_norm(grads, max_norm=2.0)
        optimizer.update(model, grads)
        return loss, ntoks
    model.train()
    data = batches(new_phrase, k_data)
    for it in range(1, 41):
        loss, ntoks = step(*next(data))
        mx.eval(state)
        if it % 10 == 0:
            print(f"lora {it}: loss {loss.item():.4f}, lr {optimizer.learning_rate.item():.3e}")
    model.eval()
    print("optimizer step:", optimizer.state["step"], "keys:", sorted(optimizer.state.keys()))
    prompt = new_phrase[:4]
    probe = mx.concatenate([new_phrase, prompt[:3]])[None]
    logits, _ = model(probe)
    adapters = dict(tree_flatten(model.trainable_parameters()))
    with tempfile.TemporaryDirectory() as tmp:
        st, npz = os.path.join(tmp, "adapters.safetensors"), os.path.join(tmp, "adapters.npz")
        mx.save_safetensors(st, adapters, metadata={"rank": "4"})
        mx.savez(npz, **tree_map(lambda a: a.astype(mx.float16), adapters))
        (loaded, meta), half = mx.load(st, return_metadata=True), mx.load(npz)
        print("saved:", len(loaded), "arrays, metadata", meta, "npz", half[sorted(half)[0]].dtype)
        fresh = TinyLM().load_weights(base_weights)
        add_adapters(fresh)
        fresh.load_weights(st, strict=False).eval()
        print("reloaded logits match:", mx.allclose(fresh(probe)[0], logits, atol=1e-6).item())
        diff = mx.abs(fresh.load_weights(npz, strict=False)(probe)[0] - logits).max()
        print(f"float16 adapters: max logit change below 1e-2: {diff.item() < 1e-2}")
    fused = [(n, m.fuse()) for n, m in model.named_modules() if isinstance(m, LoRALinear)]
    model.update_modules(tree_unflatten(fused))
    print("fused", len(fused), "layers:", type(model.layers[0].attention.q_proj).__name__,
          "logits close:", mx.allclose(model(probe)[0], logits, atol=1e-4).item())
    w = model.lm_head.weight
    wq, scales, biases = mx.quantize(w, group_size=32, bits=4)
    w_hat = mx.dequantize(wq, scales, biases, group_size=32, bits=4)
    print("quantize:", wq.shape, wq.dtype, scales.shape, scales.dtype,
          f"max error {mx.abs(w - w_hat).max().item():.4f}")
    greedy = lambda logits, key: mx.argmax(logits, axis=-1)
    tokens, cache = generate(model, prompt, 8, greedy, k_gen)
    print("target:", new_phrase[4:].tolist() + new_phrase[:4].tolist())
    print("greedy:", tokens, "cache", cache[0][0].shape, cache[0][0].dtype)
    only_linear = lambda path, m: isinstance(m, nn.Linear) and m.weight.shape[-1] % 32 == 0
    nn.quantize(model, group_size=32, bits=4, class_predicate=only_linear)
    print("quantized:", type(model.layers[1].attention.v_proj).__name__,
          type(model.embed_tokens).__name__, count(model.parameters()), "parameters")
    print("greedy q4:", generate(model, prompt, 8, greedy, k_gen)[0])
    sample = lambda logits, key: mx.random.categorical(logits * (1 / 0.7), key=key)
    print("temp 0.7:", generate(model, prompt, 8, sample, k_gen)[0])
    nucleus = lambda logits, key: top_p_sample(logits, 0.9, 1.0, key)
    print("top-p 0.9:", generate(model, prompt, 8, nucleus, k_gen)[0])
    probs = mx.sort(mx.softmax(model(prompt[None])[0][0, -1]))[::-1]
    print("top probs:", [round(p, 2) for p in probs[:3].tolist()])
    mistakes = [
        lambda: mx.zeros((2, 3)) @ mx.zeros((4, 5)),
        lambda: fresh.load_weights([(k, v.T if k.endswith("gate_proj.weight") else v)
                                    for k, v in tree_flatten(fresh.parameters())], strict=True),
        lambda: mx.quantize(w, group_size=48, bits=4),
        lambda: mx.quantize(w.astype(mx.int32), group_size=32, bits=4),
        lambda: mx.array([[1, 2]]) @ mx.array([[3], [4]]),
        lambda: nn.losses.cross_entropy(logits, probe.astype(mx.float32)).sum().item(),
        lambda: mx.random.categorical(logits, num_samples=2, shape=(1, 2)),
        lambda: mx.fast.scaled_dot_product_attention(logits, logits, logits, scale=1, mask="causl"),
        lambda: fresh.unfreeze(keys=["lora_c"], strict=True),
    ]
    for mistake in mistakes:
        try:
            print("no error", mistake())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")

if __name__ == "__main__":
    main()
