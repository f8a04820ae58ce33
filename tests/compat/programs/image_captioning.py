"""Show, Attend and Tell: a CNN encoder, Bahdanau attention and an LSTMCell decoder that
captions synthetic images of coloured shapes, trained with teacher forcing, decoded greedily
and with beam search, scored with BLEU and saved to an in-memory checkpoint."""

import io
import math
from collections import Counter

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

torch.manual_seed(0)

# ---------------------------------------------------------------- synthetic images + captions
SIZE = 28
COLOURS = {"red": (0.9, 0.1, 0.1), "green": (0.1, 0.8, 0.2), "blue": (0.2, 0.3, 0.9)}
SHAPES = ["square", "circle", "bar"]
PLACES = ["left", "right"]
SIZES = ["small", "big"]

ys, xs = torch.meshgrid(torch.arange(SIZE, dtype=torch.float32),
                        torch.arange(SIZE, dtype=torch.float32), indexing="ij")


def draw(shape, colour, place, size):
    """An image (3, SIZE, SIZE) with one shape drawn by a mask made of comparisons."""
    cx = 8.0 if place == "left" else 20.0
    cy = 14.0
    r = 3.0 if size == "small" else 5.5
    if shape == "square":
        mask = ((xs - cx).abs() <= r) & ((ys - cy).abs() <= r)
    elif shape == "circle":
        mask = (xs - cx) ** 2 + (ys - cy) ** 2 <= r * r
    else:
        mask = ((xs - cx).abs() <= r / 3) & ((ys - cy).abs() <= r + 2)
    rgb = torch.tensor(COLOURS[colour]).view(3, 1, 1)
    img = mask.float().unsqueeze(0) * rgb
    return img + 0.05 * torch.randn(3, SIZE, SIZE)


def caption_for(shape, colour, place, size, variant):
    """A tiny grammar: three phrasings of the same scene, of different lengths."""
    if variant == 0:
        return f"a {colour} {shape}"
    if variant == 1:
        return f"a {size} {colour} {shape} on the {place}"
    return f"there is a {colour} {shape} on the {place}"


scenes = []
for i in range(48):
    g = torch.randint(0, 3, (4,)).tolist()
    shape, colour = SHAPES[g[0]], list(COLOURS)[g[1]]
    place, size = PLACES[g[2] % 2], SIZES[g[3] % 2]
    caption = caption_for(shape, colour, place, size, i % 3)
    scenes.append((draw(shape, colour, place, size), caption))
images = torch.stack([img for img, _ in scenes])
print("images", tuple(images.shape), images.dtype, f"mean {images.mean().item():.5f}")

counts = Counter(w for _, cap in scenes for w in cap.split())
print("most common:", counts.most_common(5))
specials = ["<pad>", "<start>", "<end>", "<unk>"]
words = sorted(w for w, c in counts.items() if c >= 2)
vocab = {w: i for i, w in enumerate(specials + words)}
itos = {i: w for w, i in vocab.items()}
PAD, START, END, UNK = (vocab[s] for s in specials)
print(len(vocab), "tokens; rare words dropped:", sorted(w for w, c in counts.items() if c < 2))


def encode(cap):
    return [START] + [vocab.get(w, UNK) for w in cap.split()] + [END]


encoded = [encode(cap) for _, cap in scenes]
max_len = max(len(e) for e in encoded)
captions = torch.full((len(encoded), max_len), PAD, dtype=torch.long)
for i, e in enumerate(encoded):
    captions[i, : len(e)] = torch.tensor(e)
lengths = torch.tensor([len(e) for e in encoded]).unsqueeze(1)
print("captions", tuple(captions.shape), "lengths", lengths[:6, 0].tolist())
print(captions[:2])


# ---------------------------------------------------------------- the model
class Encoder(nn.Module):
    """A small CNN whose feature map becomes 49 annotation vectors."""

    def __init__(self, channels=24, enc_size=7):
        super().__init__()
        # no conv bias before BatchNorm: BN removes it (its gradient is pure rounding noise)
        self.net = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU(),
        )
        self.pool = nn.AdaptiveAvgPool2d((enc_size, enc_size))

    def forward(self, images):
        out = self.pool(self.net(images))  # (B, C, 7, 7)
        return out.permute(0, 2, 3, 1).flatten(1, 2)  # (B, 49, C)


class Attention(nn.Module):
    """Bahdanau (additive) attention over the encoder's pixels."""

    def __init__(self, enc_dim, dec_dim, att_dim):
        super().__init__()
        self.encoder_att = nn.Linear(enc_dim, att_dim)
        self.decoder_att = nn.Linear(dec_dim, att_dim)
        self.full_att = nn.Linear(att_dim, 1)

    def forward(self, enc, h):
        att = self.full_att(torch.tanh(self.encoder_att(enc) + self.decoder_att(h).unsqueeze(1)))
        alpha = F.softmax(att.squeeze(2), dim=1)  # (B, 49)
        context = (alpha.unsqueeze(2) * enc).sum(1)  # (B, enc_dim)
        return context, alpha


class Decoder(nn.Module):
    def __init__(self, embedding, enc_dim, dec_dim=32, att_dim=24, dropout=0.2):
        super().__init__()
        self.vocab_size, emb_dim = embedding.weight.shape
        self.attention = Attention(enc_dim, dec_dim, att_dim)
        self.embedding = embedding
        self.dropout = nn.Dropout(dropout)
        self.cell = nn.LSTMCell(emb_dim + enc_dim, dec_dim)
        self.init_h = nn.Linear(enc_dim, dec_dim)
        self.init_c = nn.Linear(enc_dim, dec_dim)
        self.f_beta = nn.Linear(dec_dim, enc_dim)
        self.fc = nn.Linear(dec_dim, self.vocab_size)

    def init_state(self, enc):
        mean = enc.mean(dim=1)
        return self.init_h(mean), self.init_c(mean)

    def step(self, enc, word_emb, h, c):
        context, alpha = self.attention(enc, h)
        gate = torch.sigmoid(self.f_beta(h))
        h, c = self.cell(torch.cat([word_emb, gate * context], dim=1), (h, c))
        return h, c, alpha

    def forward(self, enc, caps, cap_lens):
        cap_lens, order = torch.sort(cap_lens.squeeze(1), dim=0, descending=True)
        enc, caps = enc[order], caps[order]
        emb = self.embedding(caps)
        h, c = self.init_state(enc)
        decode_lengths = (cap_lens - 1).tolist()
        B, T = enc.size(0), max(decode_lengths)
        preds = torch.zeros(B, T, self.vocab_size)
        alphas = torch.zeros(B, T, enc.size(1))
        for t in range(T):
            bt = sum(n > t for n in decode_lengths)
            h_t, c_t, alpha = self.step(enc[:bt], emb[:bt, t], h[:bt], c[:bt])
            h = torch.cat([h_t, h[bt:]])
            c = torch.cat([c_t, c[bt:]])
            preds[:bt, t] = self.fc(self.dropout(h_t))
            alphas[:bt, t] = alpha
        return preds, caps, decode_lengths, alphas, order


torch.manual_seed(1)
pretrained = torch.randn(len(vocab), 12) * 0.5
pretrained[PAD] = 0
frozen = nn.Embedding.from_pretrained(pretrained, freeze=True, padding_idx=PAD)
print("frozen embedding requires_grad:", frozen.weight.requires_grad, frozen.padding_idx)
# from_pretrained wraps the tensor itself: keep a copy to see how far fine-tuning moves it
embedding = nn.Embedding.from_pretrained(pretrained.clone(), freeze=False, padding_idx=PAD)
print("fine-tuned embedding requires_grad:", embedding.weight.requires_grad)
print(embedding(torch.tensor([[PAD, START]]))[0, :, :4])
scratch = nn.Embedding(len(vocab), 12, padding_idx=0)
print("padding row of a fresh Embedding:", scratch.weight[0].abs().sum().item())

encoder = Encoder()
decoder = Decoder(embedding, enc_dim=24)
n_enc = sum(p.numel() for p in encoder.parameters())
n_dec = sum(p.numel() for p in decoder.parameters() if p.requires_grad)
print(f"encoder {n_enc} params, decoder {n_dec} trainable params")
print(decoder.cell)

optimizer = torch.optim.Adam([
    {"params": encoder.parameters(), "lr": 1e-3},
    {"params": [p for p in decoder.parameters() if p.requires_grad], "lr": 1e-2},
])
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=6, gamma=0.5)
criterion = nn.CrossEntropyLoss()
ALPHA_C = 1.0

# one batch, looked at closely
enc = encoder(images[:4])
print("encoded", tuple(enc.shape), enc.grad_fn.name())
preds, caps_sorted, dec_lens, alphas, order = decoder(enc, captions[:4], lengths[:4])
print("order", order.tolist(), "decode lengths", dec_lens)
scores = pack_padded_sequence(preds, dec_lens, batch_first=True)
targets = pack_padded_sequence(caps_sorted[:, 1:], dec_lens, batch_first=True)
print("packed", tuple(scores.data.shape), "batch sizes", scores.batch_sizes.tolist())
print("targets", targets.data.tolist())
print("packed node", scores.data.grad_fn.name(),
      [f.name() for f, _ in scores.data.grad_fn.next_functions])
loss_packed = criterion(scores.data, targets.data)
flat = F.cross_entropy(preds.reshape(-1, len(vocab)), caps_sorted[:, 1:].reshape(-1),
                       ignore_index=PAD)
print(f"packed loss {loss_packed.item():.5f}  ignore_index loss {flat.item():.5f}")
print("alpha row sums", [f"{v:.5f}" for v in alphas.sum(2)[0].tolist()[:3]], alphas.grad_fn.name())

# ---------------------------------------------------------------- training
for epoch in range(14):
    encoder.train()
    decoder.train()
    total, n_tokens = 0.0, 0
    perm = torch.randperm(len(scenes))
    for start in range(0, len(scenes), 16):
        idx = perm[start:start + 16]
        preds, caps_sorted, dec_lens, alphas, _ = decoder(encoder(images[idx]), captions[idx],
                                                           lengths[idx])
        scores = pack_padded_sequence(preds, dec_lens, batch_first=True).data
        targets = pack_padded_sequence(caps_sorted[:, 1:], dec_lens, batch_first=True).data
        loss = criterion(scores, targets)
        loss = loss + ALPHA_C * ((1.0 - alphas.sum(dim=1)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(list(encoder.parameters()) + list(decoder.parameters()), 5.0)
        optimizer.step()
        total += loss.item() * sum(dec_lens)
        n_tokens += sum(dec_lens)
    scheduler.step()
    lrs = [f"{lr:.5f}" for lr in scheduler.get_last_lr()]
    print(f"epoch {epoch}  loss {total / n_tokens:.4f}  lrs {lrs}")

print("embedding moved:", f"{(embedding.weight - pretrained).abs().max().item():.4f}",
      "frozen still zero grad:", frozen.weight.grad is None)
print("pad row after training:", embedding.weight[PAD].abs().sum().item())


# ---------------------------------------------------------------- decoding
@torch.no_grad()
def greedy(image, max_steps=10):
    enc = encoder(image.unsqueeze(0))
    h, c = decoder.init_state(enc)
    word = torch.tensor([START])
    out, maps = [], []
    for _ in range(max_steps):
        h, c, alpha = decoder.step(enc, decoder.embedding(word), h, c)
        word = decoder.fc(h).argmax(dim=1)
        maps.append(alpha.view(7, 7))
        if word.item() == END:
            break
        out.append(word.item())
    return out, maps


@torch.no_grad()
def beam_search(image, k=3, max_steps=10):
    enc = encoder(image.unsqueeze(0)).expand(k, -1, -1)
    prev_words = torch.full((k, 1), START, dtype=torch.long)
    seqs = prev_words
    top_scores = torch.zeros(k, 1)
    h, c = decoder.init_state(enc)
    done_seqs, done_scores = [], []
    step = 1
    while True:
        h, c, _ = decoder.step(enc, decoder.embedding(prev_words).squeeze(1), h, c)
        logp = F.log_softmax(decoder.fc(h), dim=1)
        logp = top_scores.expand_as(logp) + logp
        if step == 1:
            top_scores, top_words = logp[0].topk(k, 0, True, True)
        else:
            top_scores, top_words = logp.view(-1).topk(k, 0, True, True)
        beam = top_words // decoder.vocab_size
        word = top_words % decoder.vocab_size
        seqs = torch.cat([seqs[beam], word.unsqueeze(1)], dim=1)
        unfinished = [i for i, w in enumerate(word.tolist()) if w != END]
        finished = sorted(set(range(len(word))) - set(unfinished))
        if finished:
            done_seqs.extend(seqs[finished].tolist())
            done_scores.extend(top_scores[finished].tolist())
        k -= len(finished)
        if k == 0 or step >= max_steps:
            break
        seqs = seqs[unfinished]
        h, c = h[beam[unfinished]], c[beam[unfinished]]
        enc = enc[beam[unfinished]]
        top_scores = top_scores[unfinished].unsqueeze(1)
        prev_words = word[unfinished].unsqueeze(1)
        step += 1
    if not done_seqs:
        done_seqs, done_scores = seqs.tolist(), top_scores.view(-1).tolist()
    best = max(range(len(done_scores)), key=lambda i: done_scores[i])
    return [w for w in done_seqs[best] if w not in (START, END)], done_scores[best], len(done_seqs)


def bleu(reference, hypothesis, n_max):
    """Corpus-free sentence BLEU with the brevity penalty (uniform weights, no smoothing)."""
    logs = []
    for n in range(1, n_max + 1):
        hyp = Counter(tuple(hypothesis[i:i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1))
        overlap = sum(min(c, ref[g]) for g, c in hyp.items())
        if overlap == 0:
            return 0.0
        logs.append(math.log(overlap / max(1, sum(hyp.values()))))
    if len(hypothesis) > len(reference):
        bp = 1.0
    else:
        bp = math.exp(1 - len(reference) / max(1, len(hypothesis)))
    return bp * math.exp(sum(logs) / n_max)


encoder.eval()
decoder.eval()
b1 = b2 = 0.0
for i in range(6):
    ref = [w for w in encoded[i] if w not in (START, END)]
    g, maps = greedy(images[i])
    bs, score, n_done = beam_search(images[i])
    b1 += bleu(ref, bs, 1)
    b2 += bleu(ref, bs, 2)
    print(f"ref   : {' '.join(itos[w] for w in ref)}")
    print(f"greedy: {' '.join(itos[w] for w in g)}")
    print(f"beam  : {' '.join(itos[w] for w in bs)}  (log p {score:.4f}, {n_done} finished)")
print(f"BLEU-1 {b1 / 6:.4f}  BLEU-2 {b2 / 6:.4f}")

g, maps = greedy(images[1])
for word, amap in zip([itos[w] for w in g][:2], maps):
    where = divmod(amap.argmax().item(), 7)
    print(f"attention for {word!r}: max {amap.max().item():.4f} at {where}")
    for row in amap.tolist():
        print(" ".join(f"{v * 49:5.2f}" for v in row))

# ---------------------------------------------------------------- checkpoint
buffer = io.BytesIO()
torch.save({"epoch": 14, "encoder": encoder.state_dict(), "decoder": decoder.state_dict(),
            "optimizer": optimizer.state_dict(), "vocab": vocab}, buffer)
buffer.seek(0)
ckpt = torch.load(buffer, weights_only=True)
print("checkpoint keys", sorted(ckpt), "epoch", ckpt["epoch"], "vocab size", len(ckpt["vocab"]))
print("optimizer groups", [g["lr"] for g in ckpt["optimizer"]["param_groups"]],
      "state entries", len(ckpt["optimizer"]["state"]))
encoder2 = Encoder()
decoder2 = Decoder(nn.Embedding(len(vocab), 12, padding_idx=PAD), enc_dim=24)
print(encoder2.load_state_dict(ckpt["encoder"]), decoder2.load_state_dict(ckpt["decoder"]))
encoder2.eval()
decoder2.eval()
with torch.no_grad():
    e1, e2 = encoder(images[:2]), encoder2(images[:2])
    print("reloaded encoder equal:", torch.equal(e1, e2))
    h1 = decoder.init_state(e1)[0]
    print("reloaded init_h equal:", torch.equal(h1, decoder2.init_state(e2)[0]))
print(ckpt["decoder"]["embedding.weight"].dtype, ckpt["decoder"]["cell.weight_ih"].shape)

# ---------------------------------------------------------------- typical mistakes
padded = torch.randn(3, 5, 4)
for name, fn in [
    ("unsorted lengths", lambda: pack_padded_sequence(padded, [2, 5, 3], batch_first=True)),
    ("float lengths", lambda: pack_padded_sequence(padded, torch.tensor([5.0, 3.0, 2.0]),
                                                   batch_first=True)),
    ("lengths as a 2-D tensor", lambda: pack_padded_sequence(padded, torch.tensor([[5, 3, 2]]),
                                                             batch_first=True)),
    ("lengths on the meta device", lambda: pack_padded_sequence(
        padded, torch.tensor([5, 3, 2], device="meta"), batch_first=True)),
    ("zero length", lambda: pack_padded_sequence(padded, [5, 3, 0], batch_first=True)),
    ("wrong hidden size", lambda: decoder.cell(torch.randn(2, 36), (torch.zeros(2, 16),
                                                                   torch.zeros(2, 16)))),
    ("checkpoint into a wrong hidden size", lambda: Decoder(
        nn.Embedding(len(vocab), 12), enc_dim=24, dec_dim=16).load_state_dict(ckpt["decoder"])),
    ("wrong input size", lambda: decoder.cell(torch.randn(2, 30))),
    ("word index out of range", lambda: decoder.embedding(torch.tensor([len(vocab)]))),
    ("float word ids", lambda: decoder.embedding(torch.tensor([1.0, 2.0]))),
    ("target out of range", lambda: F.cross_entropy(torch.randn(2, 5), torch.tensor([1, 7]))),
]:
    try:
        fn()
        print(f"{name}: no error")
    except Exception as e:
        print(f"{name}: {type(e).__name__}: {e}")
packed = pack_padded_sequence(padded, torch.tensor([2, 5, 3], dtype=torch.int32),
                              batch_first=True, enforce_sorted=False)
print("enforce_sorted=False:", packed.batch_sizes.tolist(), packed.sorted_indices.tolist(),
      packed.unsorted_indices.tolist())
