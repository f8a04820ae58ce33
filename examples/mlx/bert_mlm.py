"""Masked-language-model pretraining of a tiny BERT, in the shape of MLX's bert example.

A synthetic corpus of sentence pairs is drawn with `mx.random` from a small grammar and
tokenised word by word in Python. Padded int32 batches get BERT's 80/10/10 masking rule
(`bernoulli`, `uniform`, `randint`, `where`). The model: token, position and segment
embeddings, `nn.TransformerEncoder` (post-norm with GELU, and a pre-norm variant), an MLM
head tied to the token embedding by `as_linear`. It trains with a masked, label-smoothed
cross-entropy under AdamW (linear warmup joined to cosine decay, `clip_grad_norm`), eagerly
and as a compiled step; then fill-mask, sentence embeddings, saving and loading, and
typical mistakes. Run on ember with `python -m ember.run bert_mlm.py`.
"""

import math
import os
import tempfile
from functools import partial

from mlx.utils import tree_flatten, tree_map

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD, UNK, CLS, SEP, MASK = range(5)
GRAMMAR = {
    "det": ["the", "a"],
    "adj": ["red", "small", "quick", "old", "green"],
    "noun": ["cat", "dog", "bird", "fox", "child"],
    "verb": ["sees", "chases", "likes", "finds"],
    "place": ["park", "garden", "house"],
}


class Tokenizer:
    """Word-level: whitespace split, words lower-cased (specials kept), specials first."""

    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(SPECIALS + sorted(set(words)))}
        self.inverse = {i: w for w, i in self.vocab.items()}

    def encode(self, text):
        return [self.vocab.get(w if w in SPECIALS else w.lower(), UNK) for w in text.split()]

    def decode(self, ids):
        return " ".join(self.inverse[int(i)] for i in ids)

    def pair(self, a, b):
        ids = [CLS] + self.encode(a) + [SEP] + self.encode(b) + [SEP]
        segments = [0] * (len(self.encode(a)) + 2) + [1] * (len(self.encode(b)) + 1)
        return ids, segments


def sample_corpus(n, key):
    """`n` sentence pairs: "the red cat sees a dog" then "in the park", or its short form."""
    keys = mx.random.split(key, 3)
    picks = {k: mx.random.randint(0, len(v), (n, 2), key=mx.random.split(keys[0], 5)[i]).tolist()
             for i, (k, v) in enumerate(GRAMMAR.items())}
    short = mx.random.bernoulli(0.3, (n,), key=keys[1]).tolist()
    places = mx.random.randint(0, len(GRAMMAR["place"]), (n,), key=keys[2]).tolist()
    pairs = []
    for i in range(n):
        w = {k: [GRAMMAR[k][j] for j in picks[k][i]] for k in GRAMMAR}
        first = f"{w['det'][0]} {w['adj'][0]} {w['noun'][0]} {w['verb'][0]}"
        second = [w["det"][1], w["noun"][1]]
        if not short[i]:
            second.insert(1, w["adj"][1])
        first += " " + " ".join(second)
        pairs.append((first, f"in the {GRAMMAR['place'][places[i]]}"))
    return pairs


def pad_batch(encoded, max_len):
    """Right-padded int32 token and segment ids, and the 0/1 attention mask."""
    ids = [e[0] + [PAD] * (max_len - len(e[0])) for e in encoded]
    seg = [e[1] + [0] * (max_len - len(e[1])) for e in encoded]
    tokens = mx.array(ids, dtype=mx.int32)
    return tokens, mx.array(seg, dtype=mx.int32), (tokens != PAD).astype(mx.int32)


def mask_tokens(tokens, attention, vocab_size, key, prob=0.15):
    """BERT's rule: choose 15% of real tokens; of those 80% -> [MASK], 10% -> a random
    word, 10% kept. Returns the corrupted inputs, the targets and the 0/1 loss mask."""
    k1, k2, k3 = mx.random.split(key, 3)
    maskable = (attention == 1) & (tokens > MASK)
    chosen = mx.random.bernoulli(prob, tokens.shape, key=k1) & maskable
    r = mx.random.uniform(shape=tokens.shape, key=k2)
    random_words = mx.random.randint(len(SPECIALS), vocab_size, tokens.shape, dtype=mx.int32,
                                     key=k3)
    inputs = mx.where(chosen & (r < 0.8), MASK, tokens)
    inputs = mx.where(chosen & (r >= 0.8) & (r < 0.9), random_words, inputs)
    return inputs.astype(mx.int32), tokens, chosen


class Bert(nn.Module):
    def __init__(self, vocab, dims=32, heads=4, layers=2, max_len=16, norm_first=False,
                 activation=nn.gelu):
        super().__init__()
        self.token = nn.Embedding(vocab, dims)
        self.position = nn.Embedding(max_len, dims)
        self.segment = nn.Embedding(2, dims)
        self.embed_norm = nn.LayerNorm(dims, eps=1e-12)
        self.encoder = nn.TransformerEncoder(layers, dims, heads, mlp_dims=2 * dims,
                                             activation=activation, norm_first=norm_first)
        self.head = nn.Linear(dims, dims)
        self.head_norm = nn.LayerNorm(dims, eps=1e-12)
        self.out_bias = mx.zeros((vocab,))

    def encode(self, tokens, segments, attention):
        positions = mx.arange(tokens.shape[1])
        x = self.token(tokens) + self.position(positions) + self.segment(segments)
        mask = mx.log(attention.astype(x.dtype))[:, None, None, :]  # 0 or -inf per key
        return self.encoder(self.embed_norm(x), mask)

    def __call__(self, tokens, segments, attention):
        h = self.head_norm(nn.gelu_approx(self.head(self.encode(tokens, segments, attention))))
        return self.token.as_linear(h) + self.out_bias


def loss_fn(model, inputs, segments, attention, targets, chosen):
    logits = model(inputs, segments, attention)
    weights = chosen.astype(mx.float32)
    losses = nn.losses.cross_entropy(logits, targets, weights=weights, label_smoothing=0.1)
    n = mx.maximum(weights.sum(), 1)
    correct = ((logits.argmax(-1) == targets) & chosen).sum()
    return losses.sum() / n, (correct, n)


def count(tree):
    return sum(v.size for _, v in tree_flatten(tree))


def fill_mask(model, tok, text, k=3):
    ids, seg = tok.pair(*text)
    tokens, segments, attention = pad_batch([(ids, seg)], len(ids))
    logits = model(tokens, segments, attention)[0]
    where = [i for i, t in enumerate(ids) if t == MASK]
    probs = mx.softmax(logits[mx.array(where)], axis=-1)
    top = mx.argpartition(-probs, kth=k - 1, axis=-1)[:, :k]
    top = mx.take_along_axis(top, mx.argsort(-mx.take_along_axis(probs, top, axis=-1)), axis=-1)
    values = mx.topk(probs, k, axis=-1)  # (in the order partition leaves them)
    return [[tok.decode([i]) for i in row] for row in top.tolist()], values


def train(model, tok, corpus, steps, key, compiled, lr, batch=16, max_len=14):
    warm = 6
    schedule = optim.join_schedules(
        [optim.linear_schedule(0.0, lr, warm), optim.cosine_decay(lr, steps - warm, end=lr / 20)],
        [warm])
    optimizer = optim.AdamW(learning_rate=schedule, weight_decay=0.01)
    loss_and_grad = nn.value_and_grad(model, loss_fn)

    def step(*batch_arrays):
        (loss, (correct, n)), grads = loss_and_grad(model, *batch_arrays)
        grads, norm = optim.clip_grad_norm(grads, max_norm=1.0)
        optimizer.update(model, grads)
        return loss, correct, n, norm

    if compiled:
        state = [model.state, optimizer.state]
        step = partial(mx.compile, inputs=state, outputs=state)(step)
    encoded = [tok.pair(a, b) for a, b in corpus]
    for it in range(1, steps + 1):
        key, k_batch, k_mask = mx.random.split(key, 3)
        rows = mx.random.randint(0, len(encoded), (batch,), key=k_batch).tolist()
        tokens, segments, attention = pad_batch([encoded[r] for r in rows], max_len)
        inputs, targets, chosen = mask_tokens(tokens, attention, len(tok.vocab), k_mask)
        loss, correct, n, norm = step(inputs, segments, attention, targets, chosen)
        mx.eval(model.parameters(), optimizer.state)
        if it % 10 == 0 or it == 1:
            print(f"  step {it:2d}: loss {loss.item():.4f}, masked acc {(correct / n).item():.3f}"
                  f" ({int(n.item())} masked), norm {norm.item():.3f},"
                  f" lr {optimizer.learning_rate.item():.2e}")
    return optimizer


def main():
    mx.random.seed(7)
    k_corpus, k_show, k_train, k_train2, k_eval = mx.random.split(mx.random.key(42), 5)
    corpus = sample_corpus(96, k_corpus)
    words = [w for pair in corpus for s in pair for w in s.split()]
    tok = Tokenizer(words)
    print(f"corpus: {len(corpus)} pairs, {len(words)} words, vocab {len(tok.vocab)}")
    print("pair 0:", corpus[0])
    ids, seg = tok.pair(*corpus[0])
    print("ids:", ids)
    print("segments:", seg)
    print("decode:", tok.decode(ids), "| unknown:", tok.encode("the purple cat"))
    encoded = [tok.pair(a, b) for a, b in corpus[:4]]
    tokens, segments, attention = pad_batch(encoded, 14)
    print("batch:", tokens.shape, tokens.dtype, "lengths", attention.sum(axis=1).tolist())
    inputs, targets, chosen = mask_tokens(tokens, attention, len(tok.vocab), k_show, prob=0.3)
    print("chosen:", chosen.sum().item(), "of", attention.sum().item(),
          "| to [MASK]:", ((inputs == MASK) & chosen).sum().item(),
          "| random:", ((inputs != MASK) & (inputs != targets)).sum().item(),
          "| kept:", ((inputs == targets) & chosen).sum().item())
    print("masked row 0:", tok.decode(inputs[0][: attention[0].sum().item()].tolist()))
    big = mx.random.bernoulli(0.15, (4000,), key=k_show)
    r = mx.random.uniform(shape=(4000,), key=k_eval)
    print(f"rule on 4000 draws: chosen {big.mean().item():.4f}, mask {(r < 0.8).mean().item():.4f},"
          f" random {((r >= 0.8) & (r < 0.9)).mean().item():.4f}")
    causal = nn.MultiHeadAttention.create_additive_causal_mask(4)
    pad_mask = mx.log(attention[:2, -4:].astype(mx.float32))[:, None, None, :]
    print("causal mask:", causal.dtype, causal[1].tolist(),
          "| with padding:", (causal + pad_mask).shape)
    print("mask row (finite):", mx.isfinite(causal + pad_mask)[1, 0].astype(mx.int32).tolist())

    model = Bert(len(tok.vocab))
    mx.eval(model.parameters())
    params = tree_flatten(model.parameters())
    vocab_sized = [k for k, v in params if v.shape == (len(tok.vocab), 32)]
    print(f"model: {count(model.parameters())} parameters in {len(params)} arrays;"
          f" (vocab, dims) matrices: {vocab_sized} (the output layer is tied)")
    print("first keys:", [k for k, _ in params[:4]])
    print("encoder layer:", type(model.encoder.layers[0]).__name__, "norm_first",
          model.encoder.layers[0].norm_first, "mlp", model.encoder.layers[0].linear1.weight.shape)
    logits = model(tokens, segments, attention)
    print("logits:", logits.shape, logits.dtype, f"initial loss "
          f"{loss_fn(model, inputs, segments, attention, targets, chosen)[0].item():.4f}"
          f" (log V = {math.log(len(tok.vocab)):.4f})")
    print("post-norm BERT, eager:")
    train(model, tok, corpus, 60, k_train, compiled=False, lr=3e-3)
    print("pre-norm BERT (gelu_fast_approx), compiled step:")
    pre = Bert(len(tok.vocab), norm_first=True, activation=nn.gelu_fast_approx)
    mx.eval(pre.parameters())
    optimizer = train(pre, tok, corpus, 30, k_train2, compiled=True, lr=5e-3)
    print("optimizer state:", optimizer.state["step"].item(), sorted(optimizer.state.keys())[:2])

    model.eval()
    eval_batch = [tok.pair(a, b) for a, b in sample_corpus(32, k_eval)]
    tokens, segments, attention = pad_batch(eval_batch, 14)
    inputs, targets, chosen = mask_tokens(tokens, attention, len(tok.vocab), k_eval)
    for name, m in (("post-norm", model), ("pre-norm", pre)):
        loss, (correct, n) = loss_fn(m, inputs, segments, attention, targets, chosen)
        print(f"held-out {name}: loss {loss.item():.4f}, masked acc {(correct / n).item():.3f}")
    plain = nn.losses.cross_entropy(model(inputs, segments, attention), targets, reduction="none")
    print(f"unsmoothed masked loss {(plain * chosen).sum().item() / chosen.sum().item():.4f}")

    for text in [("the red [MASK] sees a dog", "in the park"),
                 ("a small cat [MASK] the fox", "in the [MASK]")]:
        words_k, values = fill_mask(model, tok, text)
        print("fill:", text[0], "|", text[1], "->", words_k)
        print("  topk:", [[round(v, 3) for v in row] for row in values.tolist()],
              "sorted:", [[round(v, 3) for v in row] for row in mx.sort(values)[:, ::-1].tolist()])
    scores = model(tokens, segments, attention)[0, 5]
    print("argpartition kth=3:", mx.argpartition(-scores, kth=3).tolist()[:4],
          "| partition:", [round(v, 2) for v in mx.partition(scores, kth=-4).tolist()[-4:]],
          "| argsort top:", mx.argsort(-scores)[:4].tolist())

    sentences = ["the red cat sees a dog", "the red cat likes a dog",
                 "a quick bird finds the house"]
    enc = [tok.pair(s, "in the park") for s in sentences]
    tokens, segments, attention = pad_batch(enc, 12)
    hidden = model.encode(tokens, segments, attention)
    weight = attention[..., None].astype(hidden.dtype)
    pooled = (hidden * weight).sum(axis=1) / weight.sum(axis=1)
    unit = pooled / mx.linalg.norm(pooled, axis=-1, keepdims=True)
    sims = unit @ unit.T
    print("pooled:", pooled.shape, "cosine 0-1 > 0-2:", (sims[0, 1] > sims[0, 2]).item(),
          f"diag {mx.diag(sims).min().item():.4f}")
    loss_sim = nn.losses.cosine_similarity_loss(pooled[:1], pooled[1:2])
    print(f"cosine_similarity_loss close to matmul: "
          f"{mx.allclose(loss_sim[0], sims[0, 1], atol=1e-5).item()}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bert.safetensors")
        model.save_weights(path)
        fresh = Bert(len(tok.vocab))
        before = mx.array_equal(fresh.token.weight, model.token.weight).item()
        fresh.load_weights(path).eval()
        loaded = mx.load(path)
        print("saved:", len(loaded), "arrays,", loaded["token.weight"].dtype,
              "| equal before", before, "after",
              mx.array_equal(fresh(tokens, segments, attention),
                             model(tokens, segments, attention)).item())
        half = tree_map(lambda a: a.astype(mx.float16), model.parameters())
        fresh.update(half)
        print("float16 model logits dtype:", fresh(tokens, segments, attention).dtype)
    q16 = mx.zeros((1, 2, 3, 4), dtype=mx.float16)

    mistakes = [
        lambda: model(tokens.astype(mx.float32), segments, attention),
        lambda: nn.losses.cross_entropy(logits, targets[:2]),
        lambda: nn.losses.cross_entropy(logits, targets, label_smoothing=1.5),
        lambda: mx.random.bernoulli(0.15, (3, 4), key=k_show) & mx.ones((4, 3), dtype=mx.bool_),
        lambda: mx.topk(logits[0, 0], 100),
        lambda: mx.argpartition(logits[0, 0], kth=99),
        lambda: optim.join_schedules([optim.linear_schedule(0, 1, 5)], [5]),
        lambda: mx.random.randint(0, 10, (2,), dtype=mx.float32),
        lambda: nn.TransformerEncoder(1, 30, 4),
        lambda: model.load_weights([("token.weight", mx.zeros((3, 3)))]),
        lambda: mx.where(chosen, MASK, mx.zeros((2, 2))),
        lambda: mx.fast.scaled_dot_product_attention(q16, q16, q16, scale=0.5,
                                                     mask=mx.zeros((3, 3))),
    ]
    for mistake in mistakes:
        try:
            out = mistake()
            print("no error", out.shape if hasattr(out, "shape") else out)
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
