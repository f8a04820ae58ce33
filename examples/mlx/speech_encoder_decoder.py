"""A tiny speech recogniser written the way mlx-examples writes Whisper, on synthetic audio.

Utterances are sequences of 2-4 "notes" (tones drawn with `mx.random`, a quarter of the
clip each, silence after), each note a token. The front end is Whisper's: audio
reflect-padded by slicing, framed by `mx.as_strided`, windowed by a periodic Hann window,
`mx.fft.rfft`, power, a mel filterbank matrix built here, `log10` clipped to 8 decades
below each maximum and scaled. The model is Whisper's shape: an audio
encoder of two channels-last `nn.Conv1d` (the second strided) with GELU, sinusoidal
positions and `nn.MultiHeadAttention` blocks; a text decoder with token and learned
positional embeddings, causal self-attention (`create_additive_causal_mask`) and cross
attention written by hand over `mx.fast.scaled_dot_product_attention`, with a key/value
cache. It trains for a few AdamW steps under warmup joined to cosine decay with a masked
cross-entropy, decodes greedily with `mx.argmax` (cached against recomputed), counts its
parameters with `tree_flatten`, and round-trips its weights through .safetensors and .npz;
the mistakes users make around it are caught.
Run on ember with `python -m ember.run speech_encoder_decoder.py`.
"""

import math
import os
import tempfile

import numpy as np
from mlx.utils import tree_flatten, tree_map, tree_unflatten

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim

SAMPLE_RATE = 4000
N_FFT = 64
HOP_LENGTH = 32
N_MELS = 16
N_SAMPLES = 1024
N_FRAMES = N_SAMPLES // HOP_LENGTH
N_NOTES, SOT, EOT, PAD = 8, 8, 9, 10
N_VOCAB = 11
MAX_NOTES = 4
N_TEXT_CTX = MAX_NOTES + 2


def r4(a, n=4):
    """The first `n` values of `a`, rounded to 4 decimals."""
    return [round(v, 4) for v in a.reshape(-1)[:n].tolist()]


def try_(label, fn):
    try:
        mx.eval(fn())
        print(f"{label}: no error")
    except Exception as e:  # noqa: BLE001
        print(f"{label}: {type(e).__name__}: {e}")


# ---------------------------------------------------------------- audio front end


def hanning(size):
    """A periodic Hann window: the symmetric one of `size + 1` points less its last, as
    Whisper builds it from NumPy's."""
    return mx.hanning(size + 1)[:-1]


def reflect_pad(x, padding):
    """Reflect-pad signals (..., T) by `padding` samples each side, by slicing."""
    prefix = x[..., 1 : padding + 1][..., ::-1]
    suffix = x[..., -(padding + 1) : -1][..., ::-1]
    return mx.concatenate([prefix, x, suffix], axis=-1)


def stft(x, window, nperseg=N_FFT, noverlap=HOP_LENGTH):
    """Frames of signals (..., T) (hop `noverlap`) by `as_strided`, windowed, `rfft`."""
    x = reflect_pad(x, nperseg // 2)
    length = x.shape[-1]
    t = (length - nperseg + noverlap) // noverlap
    batch = x.shape[:-1]
    batch_strides = [length * math.prod(batch[i + 1 :]) for i in range(len(batch))]
    frames = mx.as_strided(x, shape=[*batch, t, nperseg], strides=[*batch_strides, noverlap, 1])
    return mx.fft.rfft(frames * window)


def hz_to_mel(f):
    return 2595.0 * mx.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    return 700.0 * (mx.power(10.0, m / 2595.0) - 1.0)


def mel_filters(n_mels=N_MELS, n_fft=N_FFT, sr=SAMPLE_RATE):
    """A (n_mels, n_fft // 2 + 1) bank of triangular filters, area-normalised (Slaney)."""
    fft_freqs = mx.arange(n_fft // 2 + 1, dtype=mx.float32) * (sr / n_fft)
    mels = mx.linspace(hz_to_mel(mx.array(0.0)).item(), hz_to_mel(mx.array(sr / 2)).item(),
                       n_mels + 2)
    hz = mel_to_hz(mels)
    lower = (fft_freqs[None, :] - hz[:-2, None]) / (hz[1:-1] - hz[:-2])[:, None]
    upper = (hz[2:, None] - fft_freqs[None, :]) / (hz[2:] - hz[1:-1])[:, None]
    weights = mx.maximum(0.0, mx.minimum(lower, upper))
    return weights * (2.0 / (hz[2:] - hz[:-2]))[:, None]


FILTERS = mel_filters()
WINDOW = hanning(N_FFT)


def log_mel_spectrogram(audio):
    """Whisper's log-mel features of signals (..., N_SAMPLES): (..., N_FRAMES, N_MELS),
    each clipped to 8 decades below its own maximum."""
    freqs = stft(audio, WINDOW)
    magnitudes = freqs[..., :-1, :].abs().square()
    mel_spec = magnitudes @ FILTERS.T
    log_spec = mx.maximum(mel_spec, 1e-10).log10()
    log_spec = mx.maximum(log_spec, log_spec.max(axis=(-2, -1), keepdims=True) - 8.0)
    return (log_spec + 4.0) / 4.0


def make_batch(key, batch):
    """Token sequences [SOT, notes..., EOT, PAD...] and the audio that speaks them."""
    k_len, k_notes, k_noise, k_amp = mx.random.split(key, 4)
    lengths = mx.random.randint(2, MAX_NOTES + 1, (batch,), key=k_len)
    notes = mx.random.randint(0, N_NOTES, (batch, MAX_NOTES), key=k_notes)
    pos = mx.arange(N_SAMPLES)
    which = mx.broadcast_to(pos // (N_SAMPLES // MAX_NOTES), (batch, N_SAMPLES))
    freq = 250.0 + 200.0 * mx.take_along_axis(notes, which, axis=1).astype(mx.float32)
    amp = mx.random.uniform(0.3, 0.8, (batch, 1), key=k_amp) * (which < lengths[:, None])
    audio = amp * mx.sin(2 * math.pi * freq * pos / SAMPLE_RATE)
    audio = audio + 0.02 * mx.random.normal(audio.shape, key=k_noise)
    slots = mx.arange(N_TEXT_CTX + 1)[None, :]
    body = mx.take_along_axis(notes, mx.clip(slots - 1, 0, MAX_NOTES - 1), axis=1)
    tokens = mx.where(slots == 0, SOT, mx.where(slots <= lengths[:, None], body,
                      mx.where(slots == lengths[:, None] + 1, EOT, PAD)))
    return audio, tokens.astype(mx.int32), lengths


def front_end():
    print("== front end")
    print(f"hann: {r4(WINDOW, 5)} sum {WINDOW.sum().item():.4f}")
    n = mx.arange(N_FFT)
    formula = 0.5 - 0.5 * mx.cos(2 * math.pi * n / N_FFT)
    print(f"hann == 0.5 - 0.5 cos(2 pi n / N): {mx.allclose(WINDOW, formula, atol=1e-6).item()}")
    print(f"mel filters: {FILTERS.shape} {FILTERS.dtype} row sums {r4(FILTERS.sum(axis=1), 4)}")
    print(f"filter peaks at bins {mx.argmax(FILTERS, axis=1).tolist()}")
    t = mx.arange(N_SAMPLES) / SAMPLE_RATE
    tone = mx.sin(2 * math.pi * 1000.0 * t)
    spec = stft(tone, WINDOW)
    print(f"stft: {spec.shape} {spec.dtype}; peak bin {mx.argmax(spec.abs()[5]).item()}")
    # framing by reshape equals as_strided when the hop is the frame length
    x = mx.arange(24, dtype=mx.float32)
    strided = mx.as_strided(x, shape=[4, 6], strides=[6, 1])
    print(f"as_strided == reshape: {mx.array_equal(strided, x.reshape(4, 6)).item()}")
    overlap = mx.as_strided(x, shape=[4, 8], strides=[4, 1], offset=2)
    print(f"overlapping frames: {overlap[:, 0].tolist()} .. {overlap[-1].tolist()}")
    print(f"as_strided of a copy: {mx.as_strided(mx.contiguous(x[::2]), (3, 2), (2, 1)).tolist()}")
    # rfft / irfft round trips with n= and axis=
    frames = mx.as_strided(tone, shape=[3, 16], strides=[16, 1])
    back = mx.fft.irfft(mx.fft.rfft(frames), n=16)
    print(f"irfft(rfft) max err < 1e-5: {mx.abs(back - frames).max().item() < 1e-5}")
    col = mx.fft.rfft(frames.T, axis=0)
    print(f"rfft axis=0: {col.shape} {col.dtype}, equal to rows: "
          f"{mx.allclose(col.T, mx.fft.rfft(frames), atol=1e-5).item()}")
    print(f"rfft n=10 {mx.fft.rfft(frames, n=10).shape}, n=40 {mx.fft.rfft(frames, n=40).shape}")
    print(f"irfft n=7 {mx.fft.irfft(mx.fft.rfft(frames), n=7).shape}, "
          f"axis=0 {mx.fft.irfft(col, axis=0).shape}")
    audio, tokens, lengths = make_batch(mx.random.key(0), 3)
    mel = log_mel_spectrogram(audio)
    one_by_one = mx.stack([log_mel_spectrogram(a) for a in audio])
    print(f"batched == one by one: {mx.allclose(mel, one_by_one, atol=1e-5).item()}")
    print(f"audio: {audio.shape} {audio.dtype} {r4(audio[0], 4)}")
    print(f"tokens: {tokens.tolist()} lengths {lengths.tolist()}")
    print(f"log-mel: {mel.shape} {mel.dtype} min {mel.min().item():.4f} "
          f"max {mel.max().item():.4f} mean {mel.mean().item():.4f}")
    print(f"log-mel[0, 0]: {r4(mel[0, 0], 6)}")
    quarters = mel[0].reshape(MAX_NOTES, -1, N_MELS).mean(1)
    print(f"loudest mel band per quarter: {mx.argmax(quarters, axis=-1).tolist()}")


# ---------------------------------------------------------------- model


def sinusoids(length, channels, max_timescale=10000):
    """Whisper's fixed sinusoidal positions: sin then cos halves."""
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = mx.exp(-log_timescale_increment * mx.arange(channels // 2))
    scaled_time = mx.arange(length)[:, None] * inv_timescales[None, :]
    return mx.concatenate([mx.sin(scaled_time), mx.cos(scaled_time)], axis=1)


class Attention(nn.Module):
    """Whisper's attention (no bias on the key), over the fused SDPA kernel, with a cache."""

    def __init__(self, n_state, n_head):
        super().__init__()
        self.n_head = n_head
        self.query = nn.Linear(n_state, n_state)
        self.key = nn.Linear(n_state, n_state, bias=False)
        self.value = nn.Linear(n_state, n_state)
        self.out = nn.Linear(n_state, n_state)

    def __call__(self, x, xa=None, mask=None, kv_cache=None):
        q = self.query(x)
        if xa is None:
            k, v = self.key(x), self.value(x)
            if kv_cache is not None:
                k = mx.concatenate([kv_cache[0], k], axis=1)
                v = mx.concatenate([kv_cache[1], v], axis=1)
        elif kv_cache is None:
            k, v = self.key(xa), self.value(xa)
        else:
            k, v = kv_cache
        return self.out(self.attend(q, k, v, mask)), (k, v)

    def attend(self, q, k, v, mask):
        b, lq, d = q.shape
        heads = lambda t: t.reshape(b, t.shape[1], self.n_head, -1).transpose(0, 2, 1, 3)
        scale = (d // self.n_head) ** -0.5
        o = mx.fast.scaled_dot_product_attention(heads(q), heads(k), heads(v), scale=scale,
                                                 mask=mask)
        return o.transpose(0, 2, 1, 3).reshape(b, lq, d)


class EncoderBlock(nn.Module):
    def __init__(self, n_state, n_head):
        super().__init__()
        self.attn = nn.MultiHeadAttention(n_state, n_head)
        self.attn_ln = nn.LayerNorm(n_state)
        self.mlp1 = nn.Linear(n_state, 2 * n_state)
        self.mlp2 = nn.Linear(2 * n_state, n_state)
        self.mlp_ln = nn.LayerNorm(n_state)

    def __call__(self, x):
        h = self.attn_ln(x)
        x = x + self.attn(h, h, h)
        return x + self.mlp2(nn.gelu(self.mlp1(self.mlp_ln(x))))


class DecoderBlock(nn.Module):
    def __init__(self, n_state, n_head):
        super().__init__()
        self.attn = Attention(n_state, n_head)
        self.attn_ln = nn.LayerNorm(n_state)
        self.cross_attn = Attention(n_state, n_head)
        self.cross_attn_ln = nn.LayerNorm(n_state)
        self.mlp1 = nn.Linear(n_state, 2 * n_state)
        self.mlp2 = nn.Linear(2 * n_state, n_state)
        self.mlp_ln = nn.LayerNorm(n_state)

    def __call__(self, x, xa, mask=None, kv_cache=None):
        kv, cross_kv = kv_cache if kv_cache else (None, None)
        y, kv = self.attn(self.attn_ln(x), mask=mask, kv_cache=kv)
        x = x + y
        y, cross_kv = self.cross_attn(self.cross_attn_ln(x), xa, kv_cache=cross_kv)
        x = x + y
        x = x + self.mlp2(nn.gelu(self.mlp1(self.mlp_ln(x))))
        return x, (kv, cross_kv)


class AudioEncoder(nn.Module):
    def __init__(self, n_mels, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, n_state, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
        self._positional_embedding = sinusoids(n_ctx, n_state)
        self.blocks = [EncoderBlock(n_state, n_head) for _ in range(n_layer)]
        self.ln_post = nn.LayerNorm(n_state)

    def __call__(self, x):
        x = nn.gelu(self.conv1(x))
        x = nn.gelu(self.conv2(x))
        x = x + self._positional_embedding.astype(x.dtype)
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


class TextDecoder(nn.Module):
    def __init__(self, n_vocab, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.token_embedding = nn.Embedding(n_vocab, n_state)
        self.positional_embedding = 0.02 * mx.random.normal((n_ctx, n_state))
        self.blocks = [DecoderBlock(n_state, n_head) for _ in range(n_layer)]
        self.ln = nn.LayerNorm(n_state)
        self._mask = nn.MultiHeadAttention.create_additive_causal_mask(n_ctx)

    def __call__(self, x, xa, kv_cache=None):
        offset = kv_cache[0][0][0].shape[1] if kv_cache else 0
        length = x.shape[-1]
        x = self.token_embedding(x) + self.positional_embedding[offset : offset + length]
        mask = self._mask[:length, :length].astype(x.dtype) if length > 1 else None
        if kv_cache is None:
            kv_cache = [None] * len(self.blocks)
        for e, block in enumerate(self.blocks):
            x, kv_cache[e] = block(x, xa, mask=mask, kv_cache=kv_cache[e])
        return self.token_embedding.as_linear(self.ln(x)), kv_cache


class Whisper(nn.Module):
    def __init__(self, n_state=32, n_head=4, n_layer=1):
        super().__init__()
        self.encoder = AudioEncoder(N_MELS, N_FRAMES // 2, n_state, n_head, n_layer)
        self.decoder = TextDecoder(N_VOCAB, N_TEXT_CTX, n_state, n_head, n_layer)

    def __call__(self, mel, tokens):
        return self.decoder(tokens, self.encoder(mel))[0]


def count(tree):
    return sum(v.size for _, v in tree_flatten(tree))


def model_parts():
    print("== model")
    mask = nn.MultiHeadAttention.create_additive_causal_mask(4)
    print(f"causal mask: {mask.dtype} {mask.shape} row 0 {mask[0].tolist()}")
    half_mask = nn.MultiHeadAttention.create_additive_causal_mask(3, mx.float16)
    print(f"causal mask float16: {half_mask}")
    print(f"causal mask bfloat16 row 0: "
          f"{nn.MultiHeadAttention.create_additive_causal_mask(3, mx.bfloat16)[0]}")
    pe = sinusoids(N_FRAMES // 2, 32)
    print(f"sinusoids: {pe.shape} {pe.dtype} {r4(pe[3], 3)} .. {r4(pe[3, 16:], 3)}")
    conv = nn.Conv1d(4, 6, kernel_size=3, stride=2, padding=1)
    print(f"conv1d: {conv}; weight {conv.weight.shape}")
    x = mx.random.normal((2, 9, 4), key=mx.random.key(1))
    print(f"conv1d stride 2 pad 1: {conv(x).shape}")
    grouped = nn.Conv1d(4, 6, kernel_size=2, groups=2, dilation=2, bias=False)
    print(f"grouped conv1d: {grouped}; weight {grouped.weight.shape}; out {grouped(x).shape}")
    y = mx.conv1d(x, conv.weight, stride=2, padding=1) + conv.bias
    print(f"nn.Conv1d == mx.conv1d + bias: {mx.allclose(conv(x), y, atol=1e-6).item()}")


def attention_checks(model, mel, tokens):
    """The SDPA attention against softmax written out; the cache against recomputing."""
    print("== attention")
    attn = model.decoder.blocks[0].attn
    q = mx.random.normal((2, 5, 32), key=mx.random.key(3))
    mask = model.decoder._mask[:5, :5]
    b, l, d = q.shape
    heads = lambda t: t.reshape(b, l, 4, -1).transpose(0, 2, 1, 3)
    scores = (heads(q) @ heads(q).transpose(0, 1, 3, 2)) * (d // 4) ** -0.5 + mask
    manual = (mx.softmax(scores, axis=-1) @ heads(q)).transpose(0, 2, 1, 3).reshape(b, l, d)
    fused = attn.attend(q, q, q, mask)
    print(f"sdpa == softmax(QK^T/sqrt(d) + mask) V: {mx.allclose(fused, manual, atol=1e-5).item()}")
    causal = attn.attend(q, q, q, "causal")
    print(f"mask='causal' == additive mask: {mx.allclose(causal, fused, atol=1e-6).item()}")
    xa = model.encoder(mel)
    full, _ = model.decoder(tokens, xa)
    logits, cache = model.decoder(tokens[:, :2], xa)
    steps = [logits]
    for i in range(2, tokens.shape[1]):
        logits, cache = model.decoder(tokens[:, i : i + 1], xa, kv_cache=cache)
        steps.append(logits)
    cached = mx.concatenate(steps, axis=1)
    mx.eval(full, cached)
    print(f"encoder out: {xa.shape} {xa.dtype} {r4(xa[0, 0], 3)}")
    print(f"cache: self k {cache[0][0][0].shape}, cross k {cache[0][1][0].shape}")
    print(f"cached == full forward: {mx.allclose(cached, full, atol=1e-5).item()}")


# ---------------------------------------------------------------- training and decoding


def loss_fn(model, mel, tokens):
    """Cross-entropy of each next token, padding masked out."""
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    logits = model(mel, inputs)
    mask = (targets != PAD).astype(mx.float32)
    ce = nn.losses.cross_entropy(logits, targets, reduction="none")
    loss = (ce * mask).sum() / mask.sum()
    correct = ((mx.argmax(logits, axis=-1) == targets) * mask).sum() / mask.sum()
    return loss, correct


def train(model, steps=16, batch=12):
    print("== training")
    warmup = optim.linear_schedule(1e-4, 4e-3, 6)
    cosine = optim.cosine_decay(4e-3, steps - 6, 2e-4)
    schedule = optim.join_schedules([warmup, cosine], [6])
    print(f"schedule: {[round(schedule(mx.array(i)).item(), 6) for i in (0, 3, 6, 15, steps)]}")
    optimizer = optim.AdamW(learning_rate=schedule, weight_decay=0.01)
    loss_and_grad = nn.value_and_grad(model, loss_fn)
    key = mx.random.key(42)
    for step in range(steps):
        key, sub = mx.random.split(key)
        audio, tokens, _ = make_batch(sub, batch)
        mel = log_mel_spectrogram(audio)
        (loss, acc), grads = loss_and_grad(model, mel, tokens)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state, loss, acc)
        if step % 4 == 0 or step == steps - 1:
            gnorm = mx.sqrt(sum(mx.sum(g * g) for _, g in tree_flatten(grads))).item()
            print(f"step {step:2d} loss {loss.item():.4f} acc {acc.item():.3f} "
                  f"grad norm {gnorm:.4f} lr {optimizer.learning_rate.item():.6f}")
    print(f"optimizer step {optimizer.step.item()}, state keys "
          f"{sorted(optimizer.state['encoder']['conv1'].keys())}")


def greedy_decode(model, mel, max_tokens=MAX_NOTES + 1):
    """Tokens after SOT by argmax, through the key/value cache; stops once all said EOT."""
    xa = model.encoder(mel)
    tokens = mx.full((mel.shape[0], 1), SOT, dtype=mx.int32)
    out, cache, done = [], None, mx.zeros((mel.shape[0],), dtype=mx.bool_)
    for _ in range(max_tokens):
        logits, cache = model.decoder(tokens, xa, kv_cache=cache)
        tokens = mx.argmax(logits[:, -1], axis=-1, keepdims=True).astype(mx.int32)
        tokens = mx.where(done[:, None], EOT, tokens)
        out.append(tokens)
        done = done | (tokens[:, 0] == EOT)
        mx.eval(tokens, done)
        if done.all().item():
            break
    return mx.concatenate(out, axis=1)


def decode(model):
    print("== greedy decoding")
    audio, tokens, lengths = make_batch(mx.random.key(7), 6)
    mel = log_mel_spectrogram(audio)
    ids = greedy_decode(model, mel)
    print(f"decoded: {ids.dtype} {ids.shape} {ids.tolist()}")
    print(f"truth:   {tokens[:, 1:].tolist()}")
    logits = model(mel, tokens[:, :-1])
    probs = mx.softmax(logits[0], axis=-1)
    print(f"p(truth) utterance 0: {r4(mx.take_along_axis(probs, tokens[0, 1:, None], 1), 6)}")
    loss, acc = loss_fn(model, mel, tokens)
    print(f"held-out loss {loss.item():.4f} acc {acc.item():.3f}")
    return mel, tokens[:, :-1]


def weights_round_trip(model, mel, tokens):
    print("== weights")
    params = model.parameters()
    print(f"parameters: {count(params)} (encoder {count(params['encoder'])}, "
          f"decoder {count(params['decoder'])}); trainable {count(model.trainable_parameters())}")
    names = [k for k, _ in tree_flatten(params)]
    print(f"{len(names)} arrays: {names[:3]} .. {names[-2:]}")
    print(f"'_positional_embedding' a parameter: {'_positional_embedding' in params['encoder']}")
    ref = model(mel, tokens)
    with tempfile.TemporaryDirectory() as tmp:
        for ext in ("safetensors", "npz"):
            path = os.path.join(tmp, f"speech.{ext}")
            model.save_weights(path)
            fresh = Whisper()
            fresh.load_weights(path)
            same = mx.array_equal(fresh(mel, tokens), ref).item()
            print(f"{ext}: {len(mx.load(path))} arrays, reloaded model equal: {same}")
        loaded = mx.load(os.path.join(tmp, "speech.safetensors"))
        fresh = Whisper()
        fresh.update(tree_unflatten(list(loaded.items())))
        same = mx.array_equal(fresh(mel, tokens), ref).item()
        print(f"update(tree_unflatten(load)) equal: {same}")
    half = Whisper()
    half.update(tree_map(lambda p: p.astype(mx.float16), model.parameters()))
    xa = half.encoder(mel.astype(mx.float16))
    print(f"float16 encoder: {xa.dtype} {xa.shape}; "
          f"close to float32: {mx.allclose(xa, model.encoder(mel), atol=5e-2).item()}")


def mistakes(model):
    print("== typical mistakes")
    mel = mx.zeros((1, N_FRAMES, N_MELS))
    try_("channels-first input to Conv1d",
         lambda: model.encoder.conv1(mel.transpose(0, 2, 1)))
    try_("vmap over as_strided framing", lambda: mx.vmap(stft, in_axes=(0, None))(
        mx.zeros((2, N_SAMPLES)), WINDOW))
    try_("arange to a NumPy integer", lambda: mx.arange(np.int64(N_FRAMES)))
    try_("as_strided with a negative offset",
         lambda: mx.as_strided(mx.arange(8), (2, 4), (4, 1), offset=-1))
    try_("as_strided to a negative shape", lambda: mx.as_strided(mx.arange(8), (2, -4), (4, 1)))
    try_("rfft along an axis the array lacks", lambda: mx.fft.rfft(mx.ones(5), axis=2))
    try_("irfft to no samples", lambda: mx.fft.irfft(mx.ones((3, 4)), n=0))
    try_("mask of the wrong shape",
         lambda: model.decoder.blocks[0].attn.attend(mx.zeros((1, 3, 32)), mx.zeros((1, 3, 32)),
                                                     mx.zeros((1, 3, 32)), mx.zeros((4, 4))))
    weights = tree_flatten(model.parameters())
    try_("load_weights missing two arrays", lambda: model.load_weights(weights[:-2]))
    try_("load_weights of a wrong shape", lambda: model.load_weights(
        weights[:-1] + [("decoder.ln.bias", mx.zeros(16))]))
    try_("load_weights of an unknown name", lambda: model.load_weights(
        weights + [("decoder.proj.weight", mx.zeros(4))]))


def main():
    mx.random.seed(0)
    front_end()
    model_parts()
    model = Whisper()
    mx.eval(model.parameters())
    audio, tokens, _ = make_batch(mx.random.key(5), 2)
    attention_checks(model, log_mel_spectrogram(audio), tokens[:, :-1])
    train(model)
    mel, tokens = decode(model)
    weights_round_trip(model, mel, tokens)
    mistakes(model)


if __name__ == "__main__":
    main()
