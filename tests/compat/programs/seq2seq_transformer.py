"""An encoder-decoder Transformer ("Attention is all you need", as the PyTorch translation
tutorial writes it) learning to reverse variable-length digit strings: sinusoidal positional
encoding, scaled embeddings, padding masks, label-smoothed cross entropy, a Noam schedule,
greedy decoding and a small beam search; then the same model from encoder/decoder layers,
nn.MultiheadAttention on its own, and the mistakes people make with masks and shapes."""

import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

PAD, BOS, EOS = 0, 1, 2
VOCAB = 13  # 3 specials + 10 digits
MAXLEN = 7


def make_batch(n: int):
    """Digit strings of length 3..6, padded; the target is the reversed string."""
    lengths = torch.randint(3, 7, (n,))
    src = torch.full((n, MAXLEN), PAD)
    tgt = torch.full((n, MAXLEN + 1), PAD)
    for i, length in enumerate(lengths.tolist()):
        digits = torch.randint(3, VOCAB, (length,))
        src[i, :length] = digits
        src[i, length] = EOS
        tgt[i, 0] = BOS
        tgt[i, 1:length + 1] = digits.flip(0)
        tgt[i, length + 1] = EOS
    return src, tgt


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, dropout: float = 0.1, maxlen: int = 64):
        super().__init__()
        den = torch.exp(-torch.arange(0, d_model, 2) * math.log(10000) / d_model)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pe = torch.zeros((maxlen, d_model))
        pe[:, 0::2] = torch.sin(pos * den)
        pe[:, 1::2] = torch.cos(pos * den)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pos_embedding", pe.unsqueeze(-2))

    def forward(self, x):  # (S, N, E)
        return self.dropout(x + self.pos_embedding[: x.size(0), :])


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, emb_size: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD)
        self.emb_size = emb_size

    def forward(self, tokens):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class Seq2SeqTransformer(nn.Module):
    def __init__(self, d_model=32, nhead=4, layers=2, ff=64, dropout=0.1, attn_dropout=0.0):
        super().__init__()
        # (dropout inside the layers with Adam's eps=1e-9 makes 20 steps chaotic: torch's own
        # loss moves in its 3rd decimal between one and two threads; without it, past ~30 steps)
        self.transformer = nn.Transformer(d_model, nhead, layers, layers, ff, attn_dropout)
        self.generator = nn.Linear(d_model, VOCAB)
        self.src_emb = TokenEmbedding(VOCAB, d_model)
        self.tgt_emb = TokenEmbedding(VOCAB, d_model)
        self.pos = PositionalEncoding(d_model, dropout)

    def forward(self, src, tgt, src_mask, tgt_mask, src_pad, tgt_pad, mem_pad):
        s = self.pos(self.src_emb(src))
        t = self.pos(self.tgt_emb(tgt))
        out = self.transformer(s, t, src_mask, tgt_mask, None, src_pad, tgt_pad, mem_pad)
        return self.generator(out)

    def encode(self, src, src_mask):
        return self.transformer.encoder(self.pos(self.src_emb(src)), src_mask)

    def decode(self, tgt, memory, tgt_mask):
        return self.transformer.decoder(self.pos(self.tgt_emb(tgt)), memory, tgt_mask)


def create_mask(src, tgt):  # (S, N) and (T, N)
    s, t = src.shape[0], tgt.shape[0]
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(t)
    src_mask = torch.zeros((s, s)).type(torch.bool)
    return src_mask, tgt_mask, (src == PAD).transpose(0, 1), (tgt == PAD).transpose(0, 1)


print("== data and masks ==")
src_b, tgt_b = make_batch(4)
print(src_b.tolist())
print(tgt_b.tolist())
print(nn.Transformer.generate_square_subsequent_mask(4))
m = nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64)
print(m.dtype, m.shape, torch.isinf(m).sum().item())

model = Seq2SeqTransformer()
print(model)
n_params = sum(p.numel() for p in model.parameters())
n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("parameters:", n_params, n_train)
keys = list(model.state_dict().keys())
print(len(keys), keys[:6], keys[-4:])
print("buffers:", [(n, tuple(b.shape)) for n, b in model.named_buffers()])
print("pe row 1:", [f"{v:.5f}" for v in model.pos.pos_embedding[1, 0, :6].tolist()])

print("== training ==")
criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
d_model, warmup, factor = 32, 20, 0.2


def noam(step):
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam)
src_all, tgt_all = make_batch(64)
for step in range(24):
    idx = torch.arange(step * 16, step * 16 + 16) % 64
    src = src_all[idx].T
    tgt = tgt_all[idx].T
    tgt_in, tgt_out = tgt[:-1], tgt[1:]
    src_mask, tgt_mask, src_pad, tgt_pad = create_mask(src, tgt_in)
    logits = model(src, tgt_in, src_mask, tgt_mask, src_pad, tgt_pad, src_pad)
    loss = criterion(logits.reshape(-1, VOCAB), tgt_out.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    if step % 6 == 0 or step == 23:
        print(f"step {step:2d} loss {loss.item():.4f} grad_norm {norm.item():.4f} "
              f"lr {scheduler.get_last_lr()[0]:.6f}")
print("logits", tuple(logits.shape), logits.grad_fn.__class__.__name__, loss.grad_fn.name())

print("== decoding ==")
model.eval()


def greedy_decode(src, max_len):
    src_mask = torch.zeros((src.shape[0], src.shape[0])).type(torch.bool)
    memory = model.encode(src, src_mask)
    ys = torch.full((1, 1), BOS, dtype=torch.long)
    for _ in range(max_len - 1):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(ys.size(0)).type(torch.bool)
        out = model.decode(ys, memory, tgt_mask)
        prob = model.generator(out[-1])
        next_word = prob.argmax(dim=1).item()
        ys = torch.cat([ys, torch.full((1, 1), next_word, dtype=torch.long)], dim=0)
        if next_word == EOS:
            break
    return ys.flatten().tolist(), prob.softmax(-1).max().item()


def beam_search(src, beam=3, max_len=8):
    memory = model.encode(src, None)
    beams = [([BOS], 0.0)]
    for _ in range(max_len):
        candidates = []
        for seq, score in beams:
            if seq[-1] == EOS:
                candidates.append((seq, score))
                continue
            ys = torch.tensor(seq).unsqueeze(1)
            mask = nn.Transformer.generate_square_subsequent_mask(len(seq))
            out = model.decode(ys, memory, mask)
            logp = F.log_softmax(model.generator(out[-1]), dim=-1)[0]
            top = torch.topk(logp, beam)
            for lp, tok in zip(top.values.tolist(), top.indices.tolist()):
                candidates.append((seq + [tok], score + lp))
        beams = sorted(candidates, key=lambda c: -c[1])[:beam]
    return beams


with torch.no_grad():
    for i in range(3):
        src = src_all[i : i + 1].T
        length = int((src != PAD).sum())
        toks, p = greedy_decode(src[:length], 9)
        print(f"src {src[:length].flatten().tolist()} greedy {toks} p_last {p:.4f}")
with torch.inference_mode():
    src = src_all[5:6].T
    for seq, score in beam_search(src[: int((src != PAD).sum())]):
        print(f"beam {seq} score {score:.3f}")
    src = src_all[:8].T
    tgt = tgt_all[:8].T
    src_mask, tgt_mask, src_pad, tgt_pad = create_mask(src, tgt[:-1])
    logits = model(src, tgt[:-1], src_mask, tgt_mask, src_pad, tgt_pad, src_pad)
    pred = logits.argmax(-1)
    keep = tgt[1:] != PAD
    acc = (pred[keep] == tgt[1:][keep]).float().mean()
    print(f"teacher-forced accuracy {acc.item():.4f}", logits.requires_grad,
          torch.is_inference_mode_enabled())

print("== nn.Transformer options ==")
torch.manual_seed(1)
x_src = torch.randn(2, 5, 16)
x_tgt = torch.randn(2, 4, 16)
for kwargs in [dict(activation="gelu", batch_first=True),
               dict(activation=F.silu, batch_first=True, norm_first=True),
               dict(batch_first=True, bias=False, layer_norm_eps=1e-6),
               dict(activation=nn.GELU(), batch_first=True, norm_first=True, bias=False)]:
    torch.manual_seed(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tr = nn.Transformer(16, 2, 1, 1, 32, 0.0, **kwargs).eval()
    n = sum(p.numel() for p in tr.parameters())
    causal = tr.generate_square_subsequent_mask(4)
    out = tr(x_src, x_tgt, tgt_mask=causal, tgt_is_causal=True)
    name = kwargs.get("activation", "relu")
    name = name if isinstance(name, str) else type(name).__name__ if isinstance(
        name, nn.Module) else name.__name__
    print(f"{name:5s} params {n:5d} out {tuple(out.shape)} abs-mean {out.abs().mean().item():.4f} "
          f"[0,0,:3] {[round(v, 4) for v in out[0, 0, :3].tolist()]} warnings {len(w)}")
    for wi in w:
        print("  warning:", wi.category.__name__, str(wi.message)[:110])

torch.manual_seed(2)
tr = nn.Transformer(16, 2, 1, 1, 32, 0.0, batch_first=True)
out = tr(x_src, x_tgt, src_mask=tr.generate_square_subsequent_mask(5), src_is_causal=True,
         tgt_mask=tr.generate_square_subsequent_mask(4), tgt_is_causal=True,
         memory_mask=torch.zeros(4, 5, dtype=torch.bool))
out[:, -1, :3].sum().backward()
print(f"all causal: {out[1, 2, :4]} grad {tr.encoder.layers[0].linear1.bias.grad.norm():.5f}")

print("== encoder/decoder stacks ==")
torch.manual_seed(3)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    enc_layer = nn.TransformerEncoderLayer(16, 4, 32, 0.0, batch_first=False)
    encoder = nn.TransformerEncoder(enc_layer, 2, norm=nn.LayerNorm(16))
for wi in w:
    print("warning:", wi.category.__name__, wi.message)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, norm_first=True,
                                                     batch_first=True), 1)
    nn.TransformerEncoder(nn.TransformerEncoderLayer(18, 3, 33, batch_first=True), 1)
    nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 1,
                          enable_nested_tensor=False)
for wi in w:
    print("warning:", wi.message)
dec_layer = nn.TransformerDecoderLayer(16, 4, 32, 0.0, activation="gelu")
decoder = nn.TransformerDecoder(dec_layer, 2, norm=nn.LayerNorm(16))
print(encoder.layers[0])
print(decoder.norm, len(decoder.layers), encoder.num_layers)
print("same init across copies:",
      torch.equal(encoder.layers[0].linear1.weight, encoder.layers[1].linear1.weight))
src = torch.randn(6, 3, 16)
tgt = torch.randn(5, 3, 16)
src_pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] * 3 + [True] * 3])
tgt_pad = torch.tensor([[False] * 5, [False] * 5, [False] * 3 + [True] * 2])
causal = nn.Transformer.generate_square_subsequent_mask(5)
memory = encoder(src, src_key_padding_mask=src_pad)
out = decoder(tgt, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_pad,
              memory_key_padding_mask=src_pad, tgt_is_causal=True)
print("memory", tuple(memory.shape), f"{memory.abs().mean().item():.4f}",
      "out", tuple(out.shape), f"{out.abs().mean().item():.4f}")
out[..., 0].sum().backward()
g = enc_layer.self_attn.in_proj_weight.grad
print("template layer grad:", g)
print(f"stack grad norm {encoder.layers[0].self_attn.in_proj_weight.grad.norm().item():.5f}")
bool_causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
out_b = decoder(tgt, memory, tgt_mask=bool_causal, memory_key_padding_mask=src_pad)
out_f = decoder(tgt, memory, tgt_mask=causal, memory_key_padding_mask=src_pad.float()
                .masked_fill(src_pad, float("-inf")))
print("bool vs float masks:", torch.allclose(out_b, out_f, atol=1e-6))

encoder.eval()
bf_layer = nn.TransformerEncoderLayer(16, 4, 32, 0.0, batch_first=True)
bf_encoder = nn.TransformerEncoder(bf_layer, 2, enable_nested_tensor=True).eval()
print("use_nested_tensor", bf_encoder.use_nested_tensor, encoder.use_nested_tensor)
with torch.no_grad():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = bf_encoder(src.transpose(0, 1), src_key_padding_mask=src_pad)
    print("padded rows:", y[1, 4:].abs().sum().item(), y[2, 3:].abs().sum().item(),
          f"kept {y[1, :4].abs().mean().item():.4f}", "warnings", len(w))
    y2 = bf_encoder(src.transpose(0, 1), mask=nn.Transformer.generate_square_subsequent_mask(6),
                    is_causal=True)
    print(f"causal encoder {y2[0, 0, :4]}")

print("== nn.MultiheadAttention ==")
torch.manual_seed(4)
mha = nn.MultiheadAttention(8, 2, kdim=6, vdim=5)
print(mha)
print([(n, tuple(p.shape)) for n, p in mha.named_parameters()])
q, k, v = torch.randn(3, 2, 8), torch.randn(4, 2, 6), torch.randn(4, 2, 5)
out, w_avg = mha(q, k, v)
print(tuple(out.shape), tuple(w_avg.shape), f"{out.sum().item():.5f}", w_avg[0, 0])
_, w_heads = mha(q, k, v, average_attn_weights=False)
print(tuple(w_heads.shape), torch.allclose(w_heads.mean(1), w_avg))
out, w_none = mha(q, k, v, need_weights=False)
print(w_none, f"{out.sum().item():.5f}")

torch.manual_seed(5)
mha2 = nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True, batch_first=True)
print(sum(p.numel() for p in mha2.parameters()), tuple(mha2.bias_k.shape))
x = torch.randn(2, 4, 8)
kpm = torch.tensor([[False, False, False, True], [False, False, True, True]])
out, w = mha2(x, x, x, key_padding_mask=kpm)
print(tuple(w.shape), w[1, 0])
mask3 = torch.zeros(2 * 2, 4, 4, dtype=torch.bool)
mask3[1, :, 0] = True
out, w = mha2(x, x, x, attn_mask=mask3, average_attn_weights=False)
print(tuple(w.shape), w[0, 1, 2])

mha3 = nn.MultiheadAttention(8, 4, batch_first=True)
cm = nn.Transformer.generate_square_subsequent_mask(4)
o1, _ = mha3(x, x, x, attn_mask=cm, need_weights=False, is_causal=True)
o2, w2 = mha3(x, x, x, attn_mask=cm)
print("is_causal same:", torch.allclose(o1, o2, atol=1e-6), w2[0, 1])
fkpm = torch.zeros(2, 4).masked_fill(kpm, float("-inf"))
o3, _ = mha3(x, x, x, key_padding_mask=fkpm)
o4, _ = mha3(x, x, x, key_padding_mask=kpm)
print("float vs bool key_padding_mask:", torch.allclose(o3, o4, atol=1e-6))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    o5, _ = mha3(x, x, x, key_padding_mask=kpm, attn_mask=cm)
for wi in w:
    print("warning:", wi.category.__name__, wi.message)
print(f"{o5.sum().item():.5f}")
empty = torch.tensor([[False, False, True, True], [True, True, True, True]])
mha3.eval()
with torch.no_grad():  # an all-padding sequence: the fused inference kernel gives NaN
    o7, _ = mha3(x, x, x, key_padding_mask=empty, need_weights=False)
mha3.train()
o8, _ = mha3(x, x, x, key_padding_mask=empty, need_weights=False)
print("all-padding row NaNs: eval", torch.isnan(o7).sum().item(), "train",
      torch.isnan(o8).sum().item(), f"{o8[1].abs().sum().item():.4f}")
o6, w6 = mha3(x[0], x[0], x[0], attn_mask=cm)
print("unbatched", tuple(o6.shape), tuple(w6.shape))

print("== typical mistakes ==")


def attempt(label, fn):
    try:
        fn()
        print(label, "-> ok")
    except Exception as e:  # noqa: BLE001
        print(label, "->", type(e).__name__ + ":", str(e).split("\n")[0])


attempt("d_model % nhead", lambda: nn.Transformer(d_model=30, nhead=4))
attempt("mha divisible", lambda: nn.MultiheadAttention(10, 3))
tr = nn.Transformer(16, 2, 1, 1, 32, 0.0)
attempt("batch mismatch", lambda: tr(torch.randn(5, 2, 16), torch.randn(4, 3, 16)))
attempt("wrong d_model", lambda: tr(torch.randn(5, 2, 16), torch.randn(4, 2, 12)))
attempt("batch_first mix-up", lambda: tr(torch.randn(2, 5, 16), torch.randn(2, 4, 16)))
attempt("tgt_mask shape", lambda: tr(torch.randn(5, 2, 16), torch.randn(4, 2, 16),
                                     tgt_mask=nn.Transformer.generate_square_subsequent_mask(5)))
attempt("3d mask shape", lambda: mha3(x, x, x, attn_mask=torch.zeros(2, 4, 4)))
attempt("kpm shape", lambda: mha3(x, x, x, key_padding_mask=torch.zeros(2, 5, dtype=torch.bool)))
attempt("kpm batch", lambda: mha3(x, x, x, key_padding_mask=torch.zeros(3, 4, dtype=torch.bool)))
attempt("padding mask (S, N)", lambda: encoder(src, src_key_padding_mask=src_pad.T))
attempt("memory mask shape", lambda: decoder(tgt, memory, memory_mask=torch.zeros(6, 5)))
attempt("is_causal without mask", lambda: mha3(x, x, x, is_causal=True))
attempt("int mask", lambda: mha3(x, x, x, attn_mask=torch.zeros(4, 4, dtype=torch.long)))
attempt("query rank", lambda: mha3(torch.randn(1, 2, 4, 8), x, x))
attempt("embed dim", lambda: mha3(torch.randn(2, 4, 6), x, x))
attempt("activation name", lambda: nn.TransformerEncoderLayer(16, 2, activation="tanh"))
attempt("kdim mismatch", lambda: mha(q, torch.randn(4, 2, 8), v))
