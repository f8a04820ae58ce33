"""A tiny causal transformer language model, in the shape of MLX's transformer_lm example.

The corpus is synthetic: a random phrase of tokens drawn with `mx.random`, repeated, so a
model that attends to the previous phrase predicts the next token exactly. Two models learn
it: one built from `nn.TransformerEncoder` (as MLX's example is), one from hand-written
blocks that call `mx.fast.scaled_dot_product_attention` with rotary position embeddings.
The same file runs on MLX and, via `python -m ember.run transformer_lm.py`, on ember.
"""

import math

from mlx.utils import tree_flatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim


class TransformerLM(nn.Module):
    def __init__(self, vocab_size: int, num_layers: int, dims: int, num_heads: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dims)
        self.pe = nn.SinusoidalPositionalEncoding(dims)
        self.transformer = nn.TransformerEncoder(num_layers, dims, num_heads, norm_first=True)
        self.out_proj = nn.Linear(dims, vocab_size)

    def __call__(self, x):
        L = x.shape[1]
        mask = nn.MultiHeadAttention.create_additive_causal_mask(L)
        x = self.embedding(x)
        x = x + self.pe(mx.arange(L))
        x = self.transformer(x, mask)
        return self.out_proj(x)


class Attention(nn.Module):
    def __init__(self, dims: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dims, 3 * dims, bias=False)
        self.out = nn.Linear(dims, dims, bias=False)
        self.rope = nn.RoPE(dims // num_heads)

    def __call__(self, x, mask):
        B, L, D = x.shape
        q, k, v = mx.split(self.qkv(x), 3, axis=-1)
        q, k, v = (a.reshape(B, L, self.num_heads, -1).transpose(0, 2, 1, 3) for a in (q, k, v))
        q, k = self.rope(q), self.rope(k)
        scale = 1 / math.sqrt(q.shape[-1])
        o = mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
        return self.out(o.transpose(0, 2, 1, 3).reshape(B, L, D))


class Block(nn.Module):
    def __init__(self, dims: int, num_heads: int):
        super().__init__()
        self.attention = Attention(dims, num_heads)
        self.norm1 = nn.RMSNorm(dims)
        self.norm2 = nn.RMSNorm(dims)
        self.mlp = nn.Sequential(nn.Linear(dims, 4 * dims), nn.GELU(), nn.Linear(4 * dims, dims))

    def __call__(self, x, mask):
        x = x + self.attention(self.norm1(x), mask)
        return x + self.mlp(self.norm2(x))


class FastLM(nn.Module):
    def __init__(self, vocab_size: int, num_layers: int, dims: int, num_heads: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dims)
        self.blocks = [Block(dims, num_heads) for _ in range(num_layers)]
        self.norm = nn.RMSNorm(dims)

    def __call__(self, x):
        mask = nn.MultiHeadAttention.create_additive_causal_mask(x.shape[1])
        x = self.embedding(x)
        for block in self.blocks:
            x = block(x, mask)
        return self.embedding.as_linear(self.norm(x))  # tied input and output embeddings


def make_corpus(vocab_size: int, phrase_len: int, repeats: int):
    phrase = mx.random.randint(0, vocab_size, (phrase_len,))
    return mx.tile(phrase, (repeats,))


def iterate_batches(corpus, batch_size: int, context_size: int):
    while True:
        starts = mx.random.randint(0, corpus.size - context_size - 1, (batch_size,))
        idx = starts[:, None] + mx.arange(context_size + 1)[None]
        windows = corpus[idx]
        yield windows[:, :-1], windows[:, 1:]


def loss_fn(model, x, y):
    return nn.losses.cross_entropy(model(x), y, reduction="mean")


def train(model, corpus, num_iters: int = 40, report_every: int = 10):
    mx.eval(model.parameters())
    nparams = sum(v.size for k, v in tree_flatten(model.trainable_parameters()))
    print(f"{type(model).__name__}: {nparams} parameters")
    optimizer = optim.AdamW(learning_rate=1e-3, weight_decay=0.01)
    loss_and_grad_fn = nn.value_and_grad(model, loss_fn)
    batches = iterate_batches(corpus, batch_size=8, context_size=24)
    losses = []
    for it in range(1, num_iters + 1):
        x, y = next(batches)
        loss, grads = loss_and_grad_fn(model, x, y)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        losses.append(loss.item())
        if it % report_every == 0:
            print(f"  iter {it}: train loss {sum(losses) / len(losses):.6f}")
            losses = []


def main():
    mx.random.seed(0)
    vocab_size = 16
    corpus = make_corpus(vocab_size, phrase_len=11, repeats=40)
    print("corpus:", corpus.size, "tokens, phrase", corpus[:11].tolist())
    train(TransformerLM(vocab_size, num_layers=2, dims=32, num_heads=4), corpus)
    train(FastLM(vocab_size, num_layers=2, dims=32, num_heads=4), corpus)


if __name__ == "__main__":
    main()
