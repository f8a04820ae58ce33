"""A tiny BERT pretrained with masked language modelling and next-sentence prediction
on sentences the program generates from a small grammar."""

import math
import random
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)

# -- the corpus: short sentences from a grammar, paired for next-sentence prediction ------
rng = random.Random(0)
subjects = ["the cat", "a dog", "the king", "my friend", "she", "he"]
verbs = ["sees", "likes", "finds", "wants", "draws"]
objects = ["the moon", "a red ball", "some bread", "the sea", "two birds"]
follow = {"sees": "it shines", "likes": "it is good", "finds": "it was lost",
          "wants": "it is far", "draws": "it looks nice"}


def story():
    """Two sentences where the second depends on the verb of the first."""
    verb = rng.choice(verbs)
    return f"{rng.choice(subjects)} {verb} {rng.choice(objects)}", follow[verb]


pairs = [story() for _ in range(240)]
SPECIALS = ["[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]"]
words = sorted({w for a, b in pairs for w in (a + " " + b).split()})
vocab = {tok: i for i, tok in enumerate(SPECIALS + words)}
itos = {i: tok for tok, i in vocab.items()}
PAD, CLS, SEP, MASK, UNK = (vocab[t] for t in SPECIALS)
V = len(vocab)
print(f"{len(pairs)} pairs, vocabulary {V}, first: {pairs[0]}")


def tokenize(text):
    return [vocab.get(w, UNK) for w in text.split()]


def encode_pair(a, b):
    """[CLS] a [SEP] b [SEP] with segment ids 0 for a and 1 for b."""
    ta, tb = tokenize(a), tokenize(b)
    ids = [CLS] + ta + [SEP] + tb + [SEP]
    segments = [0] * (len(ta) + 2) + [1] * (len(tb) + 1)
    return torch.tensor(ids), torch.tensor(segments)


def make_examples():
    """Half the pairs keep their true second sentence (label 0), half get a random one."""
    examples = []
    for i, (a, b) in enumerate(pairs):
        is_random = rng.random() < 0.5
        if is_random:
            b = pairs[rng.randrange(len(pairs))][1]
        ids, seg = encode_pair(a, b)
        examples.append((ids, seg, int(is_random and b != pairs[i][1])))
    return examples


examples = make_examples()
print("encoded:", examples[0][0].tolist(), examples[0][1].tolist(), examples[0][2])


def collate(batch):
    ids = pad_sequence([e[0] for e in batch], batch_first=True, padding_value=PAD)
    seg = pad_sequence([e[1] for e in batch], batch_first=True, padding_value=0)
    nsp = torch.tensor([e[2] for e in batch])
    return ids, seg, ids != PAD, nsp


ids, seg, attn, nsp = collate(examples[:4])
print("padded", tuple(ids.shape), ids.dtype, "mask", attn.dtype, attn.sum(dim=1).tolist())


def mask_tokens(inputs, mlm_probability=0.15):
    """BERT's rule: choose 15% of real tokens; of those 80% -> [MASK], 10% -> random, 10% kept."""
    labels = inputs.clone()
    inputs = inputs.clone()
    probability = torch.full(labels.shape, mlm_probability)
    special = (inputs == PAD) | (inputs == CLS) | (inputs == SEP)
    probability.masked_fill_(special, value=0.0)
    chosen = torch.bernoulli(probability).bool()
    labels[~chosen] = -100
    replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & chosen
    inputs[replaced] = MASK
    randomised = torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & chosen & ~replaced
    random_words = torch.randint(len(SPECIALS), V, labels.shape, dtype=torch.long)
    inputs[randomised] = random_words[randomised]
    return inputs, labels


def mask_tokens_rand(inputs, mlm_probability=0.15):
    """The same rule written with one uniform draw and masked_fill."""
    special = (inputs == PAD) | (inputs == CLS) | (inputs == SEP)
    u = torch.rand(inputs.shape)
    chosen = (u < mlm_probability) & ~special
    labels = inputs.masked_fill(~chosen, -100)
    inputs = inputs.masked_fill(chosen & (u < 0.8 * mlm_probability), MASK)
    return inputs, labels


masked, labels = mask_tokens(ids)
print("masked ", masked[0].tolist())
print("labels ", labels[0].tolist())
print("chosen", (labels != -100).sum().item(), "of", attn.sum().item(), "real tokens")
m2, l2 = mask_tokens_rand(ids)
print("rand rule:", (m2 == MASK).sum().item(), "masks,", (l2 != -100).sum().item(), "labels")

# -- the model ----------------------------------------------------------------------------
D, HEADS, FF, LAYERS, MAXLEN = 32, 4, 64, 2, 16


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(V, D, padding_idx=PAD)
        self.position = nn.Embedding(MAXLEN, D)
        self.token_type = nn.Embedding(2, D)
        self.LayerNorm = nn.LayerNorm(D, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, ids, seg):
        positions = torch.arange(ids.size(1)).unsqueeze(0).expand_as(ids)
        x = self.word(ids) + self.position(positions) + self.token_type(seg)
        return self.dropout(self.LayerNorm(x))


class TinyBert(nn.Module):
    def __init__(self, norm_first=False, activation="gelu"):
        super().__init__()
        self.embeddings = Embeddings()
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.1, activation=activation,
                                           batch_first=True, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, LAYERS)
        self.mlm_dense = nn.Linear(D, D)
        self.mlm_norm = nn.LayerNorm(D, eps=1e-12)
        self.decoder = nn.Linear(D, V)
        self.pooler = nn.Linear(D, D)
        self.nsp = nn.Linear(D, 2)
        self.apply(self._init_weights)
        self.decoder.weight = self.embeddings.word.weight  # tie input and output embeddings

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.trunc_normal_(module.weight, std=0.02, a=-0.04, b=0.04)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)
        if isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    def encode(self, ids, seg, pad_mask):
        return self.encoder(self.embeddings(ids, seg), src_key_padding_mask=pad_mask)

    def forward(self, ids, seg, pad_mask):
        h = self.encode(ids, seg, pad_mask)
        t = self.mlm_norm(F.gelu(self.mlm_dense(h), approximate="tanh"))
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return self.decoder(t), self.nsp(pooled)


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = TinyBert()
    pre_ln = TinyBert(norm_first=True, activation=F.gelu)
for w in caught:
    print("warning:", w.category.__name__, str(w.message))
print(model.encoder.layers[0])
print("decoder tied:", model.decoder.weight is model.embeddings.word.weight)
n_unique = sum(p.numel() for p in model.parameters())
n_all = sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))
print(f"parameters {n_unique} (counting the tied matrix twice: {n_all})")
w = model.embeddings.word.weight
print(f"trunc_normal_: min {w.min().item():.4f} max {w.max().item():.4f} std {w.std().item():.4f}")
print("GELU exact vs tanh:", F.gelu(torch.tensor([-1.0, 0.5, 2.0])),
      nn.GELU(approximate="tanh")(torch.tensor([-1.0, 0.5, 2.0])))

# -- optimiser: AdamW without decay on biases and LayerNorm weights, warmup then decay -------
no_decay = ("bias", "LayerNorm.weight", "norm.weight", "norm1.weight", "norm2.weight")
named = list(model.named_parameters())
groups = [
    {"params": [p for n, p in named if not n.endswith(no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in named if n.endswith(no_decay)], "weight_decay": 0.0},
]
print("group sizes", [len(g["params"]) for g in groups])
optimizer = torch.optim.AdamW(groups, lr=2e-3, betas=(0.9, 0.999), eps=1e-6)
STEPS, WARMUP, ACCUM, BATCH = 24, 4, 2, 16


def lr_lambda(step):
    if step < WARMUP:
        return float(step + 1) / WARMUP
    return max(0.0, (STEPS - step) / (STEPS - WARMUP))


scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


def batches():
    order = list(range(len(examples)))
    while True:
        rng.shuffle(order)
        for i in range(0, len(order) - BATCH + 1, BATCH):
            yield collate([examples[j] for j in order[i:i + BATCH]])


def losses(model, ids, seg, attn, nsp_labels, float_mask=False):
    inputs, labels = mask_tokens(ids)
    pad_mask = ~attn
    if float_mask:
        pad_mask = torch.zeros(attn.shape).masked_fill(~attn, float("-inf"))
    mlm_logits, nsp_logits = model(inputs, seg, pad_mask)
    mlm = F.cross_entropy(mlm_logits.view(-1, V), labels.view(-1), ignore_index=-100)
    nsp = F.cross_entropy(nsp_logits, nsp_labels)
    hits = (mlm_logits.argmax(-1) == labels)[labels != -100]
    return mlm, nsp, hits.float().mean()


stream = batches()
model.train()
for step in range(STEPS):
    optimizer.zero_grad()
    for micro in range(ACCUM):
        ids, seg, attn, nsp = next(stream)
        mlm, nsp_loss, acc = losses(model, ids, seg, attn, nsp, float_mask=micro == 1)
        ((mlm + nsp_loss) / ACCUM).backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    scheduler.step()
    if step == 0:
        print("loss graph:", mlm.grad_fn.name(), nsp_loss.grad_fn.name(),
              [g["lr"] for g in optimizer.param_groups])
    if step % 6 == 0 or step == STEPS - 1:
        print(f"step {step:2d} mlm {mlm.item():.4f} nsp {nsp_loss.item():.4f} acc {acc.item():.4f}"
              f" grad norm {norm.item():.4f} lr {scheduler.get_last_lr()[0]:.6f}")

state = scheduler.state_dict()
print("scheduler:", sorted(state), state["last_epoch"], state["lr_lambdas"],
      [f"{lr:.3g}" for lr in state["_last_lr"]])

# the pre-LN variant with a callable activation takes one step too
pre_opt = torch.optim.AdamW(pre_ln.parameters(), lr=1e-3)
ids, seg, attn, nsp = next(stream)
mlm, nsp_loss, _ = losses(pre_ln, ids, seg, attn, nsp)
(mlm + nsp_loss).backward()
pre_opt.step()
print(f"pre-LN loss {mlm.item():.4f} + {nsp_loss.item():.4f}")

# -- evaluation -----------------------------------------------------------------------------
model.eval()
with torch.no_grad():
    ids, seg, attn, nsp = collate(examples[:64])
    mlm, nsp_loss, acc = losses(model, ids, seg, attn, nsp)
    print(f"eval mlm {mlm.item():.4f} ppl {math.exp(mlm.item()):.3f} acc {acc.item():.4f}")
    full, _ = model(ids, seg, ~attn)
    print(f"padded positions after the fast path: {full[~attn].abs().max().item():.4f}")
    # the Hugging Face style additive mask: 0 for tokens, -10000 for padding
    extended = (1.0 - attn.float()) * -10000.0
    hf, _ = model(ids, seg, extended)
    print(f"additive -10000 mask vs bool mask: {(hf - full).abs().max().item():.3g}")
    inputs, labels = mask_tokens(ids)
    logits, _ = model(inputs, seg, ~attn)
    per_token = F.cross_entropy(logits.view(-1, V), labels.view(-1), reduction="none")
    print("per-token losses", tuple(per_token.shape), "zeros:", (per_token == 0).sum().item(),
          "ignored:", (labels == -100).sum().item())
    smoothed = F.cross_entropy(logits.view(-1, V), labels.view(-1), label_smoothing=0.1)
    print(f"mean over the chosen {per_token.sum().item() / (labels != -100).sum().item():.4f}",
          f"smoothed {smoothed.item():.4f}")

    def fill_mask(a, b, position):
        ids, seg = encode_pair(a, b)
        ids[position] = MASK
        logits, _ = model(ids[None], seg[None], torch.zeros(1, len(ids), dtype=torch.bool))
        probs = logits[0, position].softmax(-1)
        top = torch.topk(probs, k=3)
        return [(itos[i], round(p, 4)) for p, i in zip(top.values.tolist(), top.indices.tolist())]

    print("fill-mask:", fill_mask("the cat sees the moon", "it shines", 3))
    print("fill-mask:", fill_mask("a dog draws two birds", "it looks nice", 10))

    def sentence_embedding(texts):
        batch = [encode_pair(t, "") for t in texts]
        ids = pad_sequence([b[0] for b in batch], batch_first=True, padding_value=PAD)
        seg = pad_sequence([b[1] for b in batch], batch_first=True)
        mask = ids != PAD
        h = model.encode(ids, seg, ~mask)
        summed = (h * mask.unsqueeze(-1)).sum(1)
        return summed / mask.sum(1, keepdim=True).clamp(min=1)

    emb = sentence_embedding(["the cat sees the moon", "the king sees the moon",
                              "she draws some bread"])
    print("embeddings", tuple(emb.shape))
    print("cosine", F.cosine_similarity(emb[0:1], emb[1:], dim=-1))

# one bfloat16 forward under autocast (with grad enabled: the inference fast path does not
# take autocast inputs)
with torch.autocast("cpu", dtype=torch.bfloat16):
    logits, nsp_logits = model(ids, seg, ~attn)
print("autocast:", logits.dtype, nsp_logits.dtype, tuple(logits.shape), logits.grad_fn.name())
gap = (logits.float() - full)[attn].abs().max().item()
print(f"bf16 vs fp32 max gap below 0.1: {gap < 0.1}")

# -- state dict -----------------------------------------------------------------------------
sd = model.state_dict()
keys = list(sd.keys())
print(len(keys), "keys:", keys[:4], "...", keys[-3:])
print("decoder.weight in state_dict:", "decoder.weight" in sd)
fresh = TinyBert()
report = fresh.load_state_dict({k: v for k, v in sd.items() if not k.startswith("nsp")},
                               strict=False)
print("missing:", report.missing_keys, "unexpected:", report.unexpected_keys)
report = fresh.load_state_dict({**sd, "cls.bias": torch.zeros(2)}, strict=False)
print(report)
print("tied after load:", fresh.decoder.weight is fresh.embeddings.word.weight)

# -- typical mistakes -------------------------------------------------------------------------
layer = model.encoder.layers[0]
x = torch.randn(2, 5, D)


def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", tuple(out.shape))
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0])


attempt("mask wrong shape:", lambda: model.encoder(x, src_key_padding_mask=torch.zeros(5, 2,
                                                                                      dtype=torch.bool)))
model.train()
attempt("mask wrong shape (train):",
        lambda: model.encoder(x, src_key_padding_mask=torch.zeros(5, 2, dtype=torch.bool)))
model.eval()
attempt("mask int dtype:", lambda: model.encoder(x, src_key_padding_mask=torch.zeros(2, 5,
                                                                                    dtype=torch.long)))
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    # bfloat16 inference: the fused fast path runs in bfloat16, its nested-tensor step fails
    h = model.encoder(model.embeddings(ids, seg))
    print("autocast inference without a mask:", h.dtype, tuple(h.shape))
    attempt("autocast inference, padded batch:", lambda: model(ids, seg, ~attn)[0])
attempt("index beyond vocab:", lambda: model.embeddings.word(torch.tensor([[V]])))
attempt("d_model vs nhead:", lambda: nn.TransformerEncoderLayer(30, 4, batch_first=True))
attempt("cross_entropy bad label:",
        lambda: F.cross_entropy(torch.randn(3, V), torch.tensor([1, V + 2, -100])))
