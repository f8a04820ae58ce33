"""A toy translator that learns to reverse and shift token sequences: nn.Transformer
(pre- and post-norm, gelu by name and as a callable, bias=False) with causal, padding and
float masks, a sinusoidal buffer left out of the state_dict, label-smoothed cross-entropy,
Adam with a Noam warmup, clipping, then greedy decoding and beam search (topk over
flattened scores, index_select/gather to reorder beams, a length penalty). Also a packed
bidirectional GRU encoder, nn.MultiheadAttention and F.scaled_dot_product_attention used
directly, a state_dict round trip through BytesIO, and the usual mask and packing mistakes."""

import io
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
PAD, BOS, EOS, VOCAB, MAXPOS, D, WARMUP = 0, 1, 2, 12, 12, 32, 10


def make_batch(n, gen):
    """Sources of 3..6 tokens in 3..11; targets = source reversed, each token shifted by one."""
    lengths = torch.randint(3, 7, (n,), generator=gen)
    srcs, tgts = [], []
    for length in lengths.tolist():
        s = torch.randint(3, VOCAB, (length,), generator=gen)
        t = (s.flip(0) - 2) % (VOCAB - 3) + 3
        srcs.append(s)
        tgts.append(torch.cat([torch.tensor([BOS]), t, torch.tensor([EOS])]))
    return (pad_sequence(srcs, batch_first=True, padding_value=PAD),
            pad_sequence(tgts, batch_first=True, padding_value=PAD), lengths)


class PositionalEncoding(nn.Module):
    def __init__(self, d, maxlen):
        super().__init__()
        pos = torch.arange(maxlen, dtype=torch.float32).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
        pe = torch.zeros(maxlen, d)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Translator(nn.Module):
    def __init__(self, norm_first=False, activation="gelu"):
        super().__init__()
        self.src_embed = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(VOCAB, D, padding_idx=PAD, max_norm=1.0)
        for table in (self.src_embed, self.tgt_embed):  # fairseq's init: rows of norm ~1
            nn.init.normal_(table.weight, std=D ** -0.5)
            nn.init.zeros_(table.weight[PAD])
        self.pos = PositionalEncoding(D, MAXPOS)
        self.transformer = nn.Transformer(D, 2, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=64, dropout=0.0,
                                          activation=activation, batch_first=True,
                                          norm_first=norm_first, bias=False)
        self.out = nn.Linear(D, VOCAB)

    def embed(self, table, tokens):
        return self.pos(table(tokens) * math.sqrt(D))

    def forward(self, src, tgt_in):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1))
        h = self.transformer(self.embed(self.src_embed, src), self.embed(self.tgt_embed, tgt_in),
                             tgt_mask=mask, src_key_padding_mask=src == PAD,
                             tgt_key_padding_mask=tgt_in == PAD,
                             memory_key_padding_mask=src == PAD, tgt_is_causal=True)
        return self.out(h)

    def encode(self, src):
        return self.transformer.encoder(self.embed(self.src_embed, src),
                                        src_key_padding_mask=src == PAD)

    def decode(self, tgt_in, memory, src_pad):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1))
        h = self.transformer.decoder(self.embed(self.tgt_embed, tgt_in), memory, tgt_mask=mask,
                                     memory_key_padding_mask=src_pad, tgt_is_causal=True)
        return self.out(h[:, -1])


gen = torch.Generator().manual_seed(1)
src, tgt, lengths = make_batch(48, gen)
print("src", tuple(src.shape), src.dtype, src[:2].tolist())
print("tgt", tuple(tgt.shape), tgt[:2].tolist())
left = pad_sequence([torch.tensor([5, 6]), torch.tensor([7, 8, 9])], batch_first=True,
                    padding_value=-1, padding_side="left")
print("left-padded", left.tolist())

for norm_first, act in [(False, "gelu"), (True, lambda x: F.gelu(x, approximate="tanh"))]:
    torch.manual_seed(2)
    model = Translator(norm_first, act)
    print("norm_first", norm_first, "parameters", sum(p.numel() for p in model.parameters()))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.2, betas=(0.9, 0.98), eps=1e-9)
    noam = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: D ** -0.5 * min((s + 1) ** -0.5, (s + 1) * WARMUP ** -1.5))
    for step in range(1, 31):
        idx = torch.randint(0, 48, (16,), generator=gen)
        s, t = src[idx], tgt[idx]
        logits = model(s, t[:, :-1])
        ntok = (t[:, 1:] != PAD).sum()
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), t[:, 1:].reshape(-1),
                               ignore_index=PAD, label_smoothing=0.1, reduction="sum") / ntok
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.5)
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        noam.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} grad norm {norm.item():.4f} "
                  f"lr {noam.get_last_lr()[0]:.6f}")
    per_tok = F.cross_entropy(logits.transpose(1, 2), t[:, 1:], ignore_index=PAD,
                              reduction="none")
    print("per-token loss", tuple(per_tok.shape), per_tok.dtype,
          f"{per_tok[0].sum().item():.4f}", (per_tok == 0).sum().item())
    print("pad row stays zero", model.src_embed.weight[PAD].abs().sum().item(),
          "max tgt row norm", f"{model.tgt_embed.weight.norm(dim=1).max().item():.4f}")

model.eval()
test_src = src[:4]
with torch.inference_mode():
    memory = model.encode(test_src)
    print("memory", tuple(memory.shape), memory.requires_grad, torch.is_inference(memory))
    seqs = torch.full((4, 1), BOS)
    done = torch.zeros(4, dtype=torch.bool)
    for _ in range(8):
        nxt = model.decode(seqs, memory, test_src == PAD).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
        seqs = torch.cat([seqs, nxt.unsqueeze(1)], 1)
        done |= nxt == EOS
        if done.all():
            break
    print("greedy", seqs[:, 1:].tolist())
    print("target", tgt[:4, 1:].tolist())


def beam_search(model, src, width=3, max_len=8, alpha=0.6):
    batch = src.size(0)
    memory = model.encode(src).repeat_interleave(width, 0)
    src_pad = (src == PAD).repeat_interleave(width, 0)
    seqs = torch.full((batch * width, 1), BOS)
    scores = torch.zeros(batch, width).masked_fill(torch.arange(width) > 0, float("-inf"))
    finished = torch.zeros(batch * width, dtype=torch.bool)
    base = (torch.arange(batch) * width).unsqueeze(1)
    for _ in range(max_len):
        logp = F.log_softmax(model.decode(seqs, memory, src_pad), dim=-1)
        only_pad = torch.full_like(logp, float("-inf")).index_fill(1, torch.tensor([PAD]), 0.0)
        logp = torch.where(finished.unsqueeze(1), only_pad, logp)
        total = scores.reshape(-1, 1) + logp
        scores, flat = total.view(batch, -1).topk(width, dim=1)
        beam, token = flat // VOCAB, flat % VOCAB
        order = (base + beam).flatten()
        seqs = torch.cat([seqs.index_select(0, order), token.reshape(-1, 1)], dim=1)
        finished = finished.gather(0, order) | (token.flatten() == EOS)
        if finished.all():
            break
    lengths = (seqs[:, 1:] != PAD).sum(1).view(batch, width).float()
    normed = scores / ((5.0 + lengths) / 6.0) ** alpha
    best = normed.argmax(1)
    return seqs.view(batch, width, -1)[torch.arange(batch), best, 1:], scores, normed


with torch.inference_mode():
    best, raw, normed = beam_search(model, test_src)
    print("beam best", best.tolist())
    print("beam scores", [[round(v, 4) for v in row] for row in raw.tolist()])
    print("normalised", [[round(v, 4) for v in row] for row in normed.tolist()])

# A bidirectional GRU encoder over packed, unsorted sequences.
gru = nn.GRU(D, 16, batch_first=True, bidirectional=True)
emb = model.src_embed(test_src)
packed = pack_padded_sequence(emb, lengths[:4], batch_first=True, enforce_sorted=False)
print("packed", packed.data.shape, packed.batch_sizes.tolist(), packed.sorted_indices.tolist())
out, h = gru(packed)
padded, out_lens = pad_packed_sequence(out, batch_first=True, total_length=8)
print("gru out", tuple(padded.shape), out_lens.tolist(), tuple(h.shape))
summary = torch.cat([h[0], h[1]], dim=1)
print("summary", tuple(summary.shape), f"{summary.abs().mean().item():.4f}",
      padded[0, lengths[0]:].abs().sum().item())

# Multi-head attention used directly, with keys and values of other widths.
mha = nn.MultiheadAttention(D, 2, batch_first=True, kdim=20, vdim=24, add_zero_attn=True)
q, k, v = torch.randn(2, 5, D), torch.randn(2, 6, 20), torch.randn(2, 6, 24)
causal = torch.ones(5, 6, dtype=torch.bool).triu(2)
o, w = mha(q, k, v, attn_mask=causal, need_weights=True, average_attn_weights=False)
print("mha", tuple(o.shape), tuple(w.shape), f"{w[0, 1, 0].sum().item():.4f}",
      f"{w[1, 0, 4, -1].item():.4f}")
o2, w2 = mha(q, k, v, attn_mask=torch.zeros(5, 6).masked_fill(causal, -1e9),
             key_padding_mask=torch.tensor([[False] * 5 + [True]] * 2))
print("mha float mask", tuple(w2.shape), f"{(o2 - o).abs().max().item():.4f}")

qh, kh, vh = torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)
sdpa = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True, scale=0.5, enable_gqa=True)
ref = F.scaled_dot_product_attention(qh, kh.repeat_interleave(2, 1), vh.repeat_interleave(2, 1),
                                     is_causal=True, scale=0.5)
print("sdpa gqa", tuple(sdpa.shape), torch.allclose(sdpa, ref, atol=1e-6),
      f"{sdpa[0, 3, 0, 0].item():.4f}")

buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
state = torch.load(buf, weights_only=True)
print("pe in state_dict", "pos.pe" in state, len(state))
clone = Translator(True, lambda x: F.gelu(x, approximate="tanh"))
print(clone.load_state_dict(state))
with torch.inference_mode():
    clone.eval()
    print("clone agrees", torch.equal(beam_search(clone, test_src)[0], best))


def attempt(label, fn):
    try:
        fn()
        print(label, "ok")
    except Exception as e:
        print(label, type(e).__name__, e)


attempt("mha mask shape", lambda: mha(q, k, v, attn_mask=torch.zeros(5, 5, dtype=torch.bool)))
attempt("mha 3d mask", lambda: mha(q, k, v, attn_mask=torch.zeros(3, 5, 6)))
attempt("mha key width", lambda: mha(q, v, v))
attempt("transformer padding mask", lambda: model.transformer(
    torch.randn(2, 6, D), torch.randn(2, 4, D),
    src_key_padding_mask=torch.zeros(2, 5, dtype=torch.bool)))
attempt("transformer d_model", lambda: model.transformer(torch.randn(2, 6, 16),
                                                         torch.randn(2, 4, 16)))
attempt("transformer batch", lambda: model.transformer(torch.randn(2, 6, D), torch.randn(3, 4, D)))
attempt("nhead", lambda: nn.Transformer(30, 4))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    attempt("mixed masks", lambda: mha(q, k, v, attn_mask=causal,
                                       key_padding_mask=torch.zeros(2, 6)))
print("warnings", [str(c.message) for c in caught if "mismatched" in str(c.message)])
attempt("unsorted", lambda: pack_padded_sequence(emb, torch.tensor([3, 5, 4, 6]),
                                                 batch_first=True))
attempt("zero length", lambda: pack_padded_sequence(emb, torch.tensor([6, 0, 4, 3]),
                                                    batch_first=True, enforce_sorted=False))
with torch.inference_mode():
    attempt("too long", lambda: model.decode(torch.full((1, MAXPOS + 2), 5), memory[:1],
                                             test_src[:1] == PAD))
