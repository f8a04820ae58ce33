"""Decoding strategies of a HuggingFace-style `generate()`, re-implemented in plain torch
around a tiny seeded GPT (hand-written blocks with a KV cache and padding masks).

Logits processors as the library writes them (temperature, top-k, top-p, typical-p, min-p,
repetition penalty, no-repeat-n-gram, bad words), sampling with seeded Generators and by
Gumbel-max with exponential_, greedy search, beam search with a length penalty and early
stopping, contrastive search, speculative sampling, stopping criteria, left-padded batched
generation with position_ids from cumsum, per-step log-probs, and the usual mistakes.
"""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
PAD, BOS, EOS, VOCAB, DIM, HEADS, LAYERS, MAXPOS = 0, 1, 2, 16, 32, 2, 2, 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * DIM, DIM))

    def forward(self, x, mask, past=None):
        B, T, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(DIM, dim=-1)
        q, k, v = (t.view(B, T, HEADS, DIM // HEADS).transpose(1, 2) for t in (q, k, v))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(DIM // HEADS)
        att = att.masked_fill(~mask, torch.finfo(att.dtype).min).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, DIM)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x)), (k, v)


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, DIM), nn.Embedding(MAXPOS, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.1)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, ids, attention_mask=None, position_ids=None, past=None):
        B, T = ids.shape
        past_len = 0 if past is None else past[0][0].size(2)
        if attention_mask is None:
            attention_mask = torch.ones(B, past_len + T, dtype=torch.long)
        if position_ids is None:
            position_ids = torch.arange(past_len, past_len + T).expand(B, T)
        causal = torch.ones(T, past_len + T, dtype=torch.bool).tril(diagonal=past_len)
        mask = causal[None, None] & attention_mask.bool()[:, None, None, :]
        x = self.wte(ids) + self.wpe(position_ids)
        presents = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, mask, None if past is None else past[i])
            presents.append(kv)
        hidden = self.ln_f(x)
        return self.lm_head(hidden), hidden, presents


def make_batch(n, gen):
    """BOS, then an arithmetic progression mod 13 shifted into 3..15, then EOS, right-padded."""
    start = torch.randint(0, 13, (n, 1), generator=gen)
    step = torch.randint(1, 3, (n, 1), generator=gen)
    lengths = torch.randint(4, 9, (n,), generator=gen)
    body = (start + step * torch.arange(10)) % 13 + 3
    seq = torch.full((n, 12), PAD)
    seq[:, 0] = BOS
    for i, n_tok in enumerate(lengths.tolist()):
        seq[i, 1:1 + n_tok] = body[i, :n_tok]
        seq[i, 1 + n_tok] = EOS
    return seq


gen = torch.Generator().manual_seed(1)
model = TinyGPT()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
draft = None
for step in range(120):
    seq = make_batch(32, gen)
    logits, _, _ = model(seq[:, :-1], attention_mask=(seq[:, :-1] != PAD).long())
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1), ignore_index=PAD)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step == 30:
        draft = copy.deepcopy(model)  # an earlier, weaker checkpoint drafts for speculation
    if step % 30 == 0 or step == 119:
        print(f"step {step:3d} loss {loss.item():.4f}")
model.eval()
draft.eval()


# -- logits processors, as HuggingFace writes them ------------------------------------------
class TemperatureLogitsWarper:
    def __init__(self, temperature):
        if not temperature > 0:
            raise ValueError(f"`temperature` has to be a strictly positive float, but is "
                             f"{temperature}")
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class TopKLogitsWarper:
    def __init__(self, top_k, filter_value=-float("inf"), min_tokens_to_keep=1):
        self.top_k, self.filter_value = max(top_k, min_tokens_to_keep), filter_value

    def __call__(self, input_ids, scores):
        top_k = min(self.top_k, scores.size(-1))
        indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
        return scores.masked_fill(indices_to_remove, self.filter_value)


class TopPLogitsWarper:
    def __init__(self, top_p, filter_value=-float("inf")):
        self.top_p, self.filter_value = top_p, filter_value

    def __call__(self, input_ids, scores):
        sorted_logits, sorted_indices = torch.sort(scores, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_indices_to_remove = cumulative_probs > self.top_p
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                             sorted_indices_to_remove)
        return scores.masked_fill(indices_to_remove, self.filter_value)


class TypicalLogitsWarper:
    def __init__(self, mass=0.9, filter_value=-float("inf"), min_tokens_to_keep=1):
        self.mass, self.filter_value, self.min_tokens_to_keep = mass, filter_value, \
            min_tokens_to_keep

    def __call__(self, input_ids, scores):
        normalized = F.log_softmax(scores, dim=-1)
        p = torch.exp(normalized)
        ent = -(normalized * p).nansum(-1, keepdim=True)
        shifted_scores = torch.abs((-normalized) - ent)
        sorted_scores, sorted_indices = torch.sort(shifted_scores, descending=False)
        sorted_logits = scores.gather(-1, sorted_indices)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        last_ind = (cumulative_probs < self.mass).sum(dim=1)
        last_ind.clamp_(max=sorted_scores.shape[-1] - 1)
        sorted_indices_to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view(-1, 1))
        sorted_indices_to_remove[..., : self.min_tokens_to_keep] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                             sorted_indices_to_remove)
        return scores.masked_fill(indices_to_remove, self.filter_value)


class MinPLogitsWarper:
    def __init__(self, min_p, filter_value=-float("inf"), min_tokens_to_keep=1):
        self.min_p, self.filter_value, self.min_tokens_to_keep = min_p, filter_value, \
            min_tokens_to_keep

    def __call__(self, input_ids, scores):
        probs = torch.softmax(scores, dim=-1)
        top_probs, _ = probs.max(dim=-1, keepdim=True)
        tokens_to_remove = probs < self.min_p * top_probs
        sorted_indices = torch.argsort(scores, descending=True, dim=-1)
        sorted_indices_to_remove = torch.gather(tokens_to_remove, dim=-1, index=sorted_indices)
        sorted_indices_to_remove[..., : self.min_tokens_to_keep] = False
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                             sorted_indices_to_remove)
        return scores.masked_fill(indices_to_remove, self.filter_value)


class RepetitionPenaltyLogitsProcessor:
    def __init__(self, penalty):
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        score = torch.gather(scores, 1, input_ids)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        return scores.scatter(1, input_ids, score)


class NoRepeatNGramLogitsProcessor:
    def __init__(self, ngram_size):
        self.ngram_size = ngram_size

    def __call__(self, input_ids, scores):
        n, cur_len = self.ngram_size, input_ids.shape[-1]
        scores = scores.clone()
        for idx in range(input_ids.shape[0]):
            tokens = input_ids[idx].tolist()
            seen = {}
            for ngram in zip(*[tokens[i:] for i in range(n)]):
                seen[tuple(ngram[:-1])] = seen.get(tuple(ngram[:-1]), []) + [ngram[-1]]
            banned = seen.get(tuple(tokens[cur_len + 1 - n:cur_len]), [])
            scores[idx, banned] = -float("inf")
        return scores


class SequenceBiasLogitsProcessor:
    """Bad words of one token as a static vocabulary mask (scatter_ into a bool row)."""

    def __init__(self, bad_words_ids):
        ids = torch.tensor([w[0] for w in bad_words_ids])
        self.mask = torch.zeros(VOCAB).scatter_(0, ids, 1.0).bool()

    def __call__(self, input_ids, scores):
        return scores.masked_fill(self.mask, -float("inf"))


class TopPAscendingLogitsWarper:
    """Today's HuggingFace top-p: sort ascending and drop the low tail of mass 1 - top_p."""

    def __init__(self, top_p, filter_value=-float("inf"), min_tokens_to_keep=1):
        self.top_p, self.filter_value, self.min_tokens_to_keep = top_p, filter_value, \
            min_tokens_to_keep

    def __call__(self, input_ids, scores):
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        sorted_indices_to_remove = cumulative_probs <= (1 - self.top_p)
        sorted_indices_to_remove[..., -self.min_tokens_to_keep:] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                             sorted_indices_to_remove)
        return scores.masked_fill(indices_to_remove, self.filter_value)


class EpsilonLogitsWarper:
    def __init__(self, epsilon, filter_value=-float("inf"), min_tokens_to_keep=1):
        self.epsilon, self.filter_value, self.min_tokens_to_keep = epsilon, filter_value, \
            min_tokens_to_keep

    def __call__(self, input_ids, scores):
        probabilities = scores.softmax(dim=-1)
        indices_to_remove = probabilities < self.epsilon
        top_k = min(self.min_tokens_to_keep, scores.size(-1))
        kth_best = torch.topk(scores, top_k)[0][..., -1, None]
        indices_to_remove = indices_to_remove & (scores < kth_best)
        return scores.masked_fill(indices_to_remove, self.filter_value)


class EtaLogitsWarper:
    def __init__(self, epsilon, filter_value=-float("inf"), min_tokens_to_keep=1):
        self.epsilon, self.filter_value, self.min_tokens_to_keep = torch.tensor(epsilon), \
            filter_value, min_tokens_to_keep

    def __call__(self, input_ids, scores):
        probabilities = scores.softmax(dim=-1)
        entropy = torch.distributions.Categorical(logits=scores).entropy()
        eta = torch.min(self.epsilon, torch.sqrt(self.epsilon) * torch.exp(-entropy))[..., None]
        indices_to_remove = probabilities < eta
        top_k = min(self.min_tokens_to_keep, scores.size(-1))
        kth_best = torch.topk(scores, top_k)[0][..., -1, None]
        indices_to_remove = indices_to_remove & (scores < kth_best)
        return scores.masked_fill(indices_to_remove, self.filter_value)


class MinNewTokensLogitsProcessor:
    def __init__(self, prompt_length, min_length):
        self.prompt_length, self.min_length = prompt_length, min_length

    def __call__(self, input_ids, scores):
        vocab_tensor = torch.arange(scores.shape[-1], device=scores.device)
        eos_token_mask = torch.isin(vocab_tensor, torch.tensor([EOS]))
        if input_ids.shape[-1] < self.min_length:
            scores = torch.where(eos_token_mask, -math.inf, scores)
        return scores


class SuppressTokensLogitsProcessor:
    def __init__(self, suppress_tokens):
        self.suppress_tokens = torch.tensor(list(suppress_tokens))

    def __call__(self, input_ids, scores):
        vocab_tensor = torch.arange(scores.shape[-1])
        suppress_token_mask = torch.isin(vocab_tensor, self.suppress_tokens)
        return torch.where(suppress_token_mask, -float("inf"), scores)


class PrefixConstrainedLogitsProcessor:
    def __init__(self, prefix_allowed_tokens_fn):
        self.fn = prefix_allowed_tokens_fn

    def __call__(self, input_ids, scores):
        mask = torch.full_like(scores, -math.inf)
        for batch_id, sent in enumerate(input_ids):
            mask[batch_id, self.fn(batch_id, sent)] = 0
        return scores + mask


class InplaceRepetitionPenalty:
    """The repetition penalty written in place, as older generate() loops did."""

    def __init__(self, penalty):
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        scores = scores.clone()
        score = scores.gather(1, input_ids)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        scores.scatter_(1, input_ids, score)
        return scores


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores):
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


# -- stopping criteria ------------------------------------------------------------------------
class MaxLengthCriteria:
    def __init__(self, max_length):
        self.max_length = max_length

    def __call__(self, input_ids, scores):
        done = input_ids.shape[-1] >= self.max_length
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool)


class EosTokenCriteria:
    def __init__(self, eos_token_id):
        self.eos_token_id = torch.tensor([eos_token_id])

    def __call__(self, input_ids, scores):
        return torch.isin(input_ids[:, -1], self.eos_token_id)


def stop(criteria, input_ids, scores):
    is_done = torch.full((input_ids.shape[0],), False, dtype=torch.bool)
    for criterion in criteria:
        is_done = is_done | criterion(input_ids, scores)
    return is_done


# -- processors on one batch of logits --------------------------------------------------------
with torch.no_grad():
    prompt = torch.tensor([[BOS, 5, 6, 7], [BOS, 9, 11, 13]])
    logits = model(prompt)[0][:, -1, :]
print("next-token logits", tuple(logits.shape), logits.dtype,
      [f"{v:.4f}" for v in logits[0, :5].tolist()], "argmax", logits.argmax(-1).tolist())
for name, proc in [("temperature 0.7", TemperatureLogitsWarper(0.7)),
                   ("top-k 4", TopKLogitsWarper(4)), ("top-p 0.8", TopPLogitsWarper(0.8)),
                   ("typical 0.9", TypicalLogitsWarper(0.9)), ("min-p 0.1", MinPLogitsWarper(0.1)),
                   ("repetition 1.5", RepetitionPenaltyLogitsProcessor(1.5)),
                   ("no-repeat 2-gram", NoRepeatNGramLogitsProcessor(2)),
                   ("bad words", SequenceBiasLogitsProcessor([[3], [8]])),
                   ("top-p ascending", TopPAscendingLogitsWarper(0.8)),
                   ("epsilon 0.03", EpsilonLogitsWarper(0.03)), ("eta 0.02", EtaLogitsWarper(0.02)),
                   ("min new tokens", MinNewTokensLogitsProcessor(4, 6)),
                   ("suppress", SuppressTokensLogitsProcessor([4, 8, 15])),
                   ("prefix allowed", PrefixConstrainedLogitsProcessor(
                       lambda b, ids: [ids[-1].item() + 1, ids[-1].item() + 2, EOS])),
                   ("in-place penalty", InplaceRepetitionPenalty(1.5))]:
    out = proc(torch.tensor([[BOS, 5, 6, 5], [BOS, 9, 9, 13]]), logits / 3)
    kept = torch.isfinite(out)
    probs = out.softmax(-1)
    print(f"{name:17s} kept {kept.sum(-1).tolist()} max p {probs.max(-1).values[0].item():.4f} "
          f"entropy {torch.special.entr(probs).sum(-1)[1].item():.4f}")
try:
    TemperatureLogitsWarper(0.0)
except ValueError as e:
    print("ValueError:", e)

# -- generate(): greedy and sampling with processors, stopping criteria and log-probs -------


@torch.no_grad()
def generate(model, input_ids, attention_mask=None, max_new_tokens=8, do_sample=False,
             processors=(), generator=None, gumbel=False):
    processors = LogitsProcessorList(processors)
    criteria = [MaxLengthCriteria(input_ids.shape[1] + max_new_tokens), EosTokenCriteria(EOS)]
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    position_ids = attention_mask.long().cumsum(-1) - 1
    position_ids.masked_fill_(attention_mask == 0, 1)
    unfinished = torch.ones(input_ids.shape[0], dtype=torch.long)
    past, step_logps, cur = None, [], input_ids
    while True:
        logits, _, past = model(cur, attention_mask=attention_mask, position_ids=position_ids,
                                past=past)
        scores = processors(input_ids, logits[:, -1, :].float())
        logp = F.log_softmax(scores, dim=-1)
        if do_sample and gumbel:
            probs = F.softmax(scores, dim=-1)
            q = torch.empty_like(probs).exponential_(1, generator=generator)
            next_tokens = probs.div(q).argmax(dim=-1)
        elif do_sample:
            probs = F.softmax(scores, dim=-1)
            next_tokens = torch.multinomial(probs, num_samples=1, generator=generator).squeeze(1)
        else:
            next_tokens = torch.argmax(scores, dim=-1)
        next_tokens = next_tokens * unfinished + PAD * (1 - unfinished)
        step_logps.append(logp.gather(1, next_tokens[:, None]).squeeze(1)
                          .masked_fill(unfinished == 0, 0.0))
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        attention_mask = torch.cat([attention_mask, unfinished[:, None]], dim=-1)
        position_ids = position_ids[:, -1:] + 1
        cur = next_tokens[:, None]
        unfinished = unfinished & ~stop(criteria, input_ids, scores)
        if unfinished.max() == 0:
            break
    return input_ids, torch.stack(step_logps, dim=1)


def show(label, ids, logps):
    print(label, ids.tolist())
    print("  log-probs", [[f"{v:.4f}" for v in row] for row in logps.tolist()],
          "sum", [f"{v:.4f}" for v in logps.sum(-1).tolist()])


prompt = torch.tensor([[BOS, 4, 5, 6], [BOS, 7, 9, 11]])
show("greedy", *generate(model, prompt))
g = torch.Generator().manual_seed(1234)
show("sample t=1.3", *generate(model, prompt, do_sample=True, generator=g,
                               processors=[TemperatureLogitsWarper(1.3)]))
show("top-k 3", *generate(model, prompt, do_sample=True, generator=g,
                          processors=[TemperatureLogitsWarper(1.5), TopKLogitsWarper(3)]))
show("top-p 0.7", *generate(model, prompt, do_sample=True, generator=g,
                            processors=[TemperatureLogitsWarper(1.5), TopPLogitsWarper(0.7)]))
show("typical+min-p", *generate(model, prompt, do_sample=True, generator=g,
                                processors=[TemperatureLogitsWarper(2.0), TypicalLogitsWarper(0.8),
                                            MinPLogitsWarper(0.05)]))
show("no-repeat+penalty", *generate(model, torch.tensor([[BOS, 5, 6, 5, 6]]), max_new_tokens=6,
                                    processors=[RepetitionPenaltyLogitsProcessor(2.0),
                                                NoRepeatNGramLogitsProcessor(2),
                                                SequenceBiasLogitsProcessor([[9]])]))
g1, g2 = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
a = generate(model, prompt, do_sample=True, generator=g1, gumbel=True)[0]
b = generate(model, prompt, do_sample=True, generator=g2, gumbel=True)[0]
print("gumbel-max", a.tolist(), "same seed same ids", torch.equal(a, b))
counts = torch.zeros(VOCAB, dtype=torch.long)
with torch.no_grad():
    p = F.softmax(TemperatureLogitsWarper(2.0)(None, logits[:1]), dim=-1)
    gg = torch.Generator().manual_seed(3)
    draws = torch.multinomial(p.expand(2000, VOCAB), 1, generator=gg).squeeze(1)
    exp_draws = (p.expand(2000, VOCAB) / torch.empty(2000, VOCAB).exponential_(
        generator=gg)).argmax(-1)
counts.index_add_(0, draws, torch.ones_like(draws))
out = torch.empty(5, dtype=torch.long)
torch.multinomial(p[0], 3, generator=torch.Generator().manual_seed(9), out=out)
print("out= resized", out.shape, out.tolist(), "squeezed", p[None].squeeze(0, 1).shape)
print("multinomial counts", counts.tolist(), "gumbel counts", torch.bincount(
    exp_draws, minlength=VOCAB).tolist(), f"p max {p.max().item():.4f}")

torch.set_printoptions(precision=4)
print(TopKLogitsWarper(3)(None, logits[:1]))
print(F.log_softmax(TopPLogitsWarper(0.9)(None, logits / 3), dim=-1)[1, :6])
dist = torch.distributions.Categorical(logits=logits / 3)
print("Categorical", dist.probs.shape, dist.entropy(), dist.log_prob(torch.tensor([8, 15])))
torch.set_printoptions(profile="default")


@torch.no_grad()
def guided_step(model, ids, guidance_scale=1.5):
    """Classifier-free guidance: mix conditional and unconditional (last token only) scores."""
    cond = F.log_softmax(model(ids)[0][:, -1], dim=-1)
    uncond = F.log_softmax(model(ids[:, -1:])[0][:, -1], dim=-1)
    return guidance_scale * (cond - uncond) + uncond


ids = prompt.clone()
for _ in range(4):
    scores = guided_step(model, ids)
    ids = torch.cat([ids, scores.argmax(-1, keepdim=True)], dim=-1)
print("guided greedy", ids.tolist(), [f"{v:.4f}" for v in scores.max(-1).values.tolist()])

# -- batched generation with left padding ------------------------------------------------------
prompts = [torch.tensor([BOS, 5, 7, 9, 11]), torch.tensor([BOS, 12]), torch.tensor([BOS, 3, 4])]
longest = max(len(p) for p in prompts)
batch = torch.stack([F.pad(p, (longest - len(p), 0), value=PAD) for p in prompts])
mask = torch.stack([F.pad(torch.ones(len(p), dtype=torch.long), (longest - len(p), 0))
                    for p in prompts])
print("left-padded", batch.tolist(), "mask", mask.tolist())
pos = mask.cumsum(-1) - 1
pos.masked_fill_(mask == 0, 1)
print("position_ids", pos.tolist())
ids, logps = generate(model, batch, attention_mask=mask, max_new_tokens=6)
show("batched greedy", ids[:, longest:], logps)
alone = [generate(model, p[None], max_new_tokens=6)[0][0, len(p):].tolist() for p in prompts]
print("same as one at a time:", [ids[i, longest:longest + len(a)].tolist() == a
                                 for i, a in enumerate(alone)])
with torch.no_grad():
    full = model(batch, attention_mask=mask, position_ids=pos)[0]
    single = model(prompts[1][None])[0]
print(f"padded vs single logits max diff < 1e-5: "
      f"{(full[1, -2:] - single[0]).abs().max().item() < 1e-5}")


# -- beam search with a length penalty and early stopping --------------------------------------
class BeamHypotheses:
    def __init__(self, num_beams, length_penalty, early_stopping):
        self.num_beams, self.length_penalty, self.early_stopping = num_beams, length_penalty, \
            early_stopping
        self.beams, self.worst_score = [], 1e9

    def add(self, hyp, sum_logprobs):
        score = sum_logprobs / (hyp.shape[-1] ** self.length_penalty)
        if len(self.beams) < self.num_beams or score > self.worst_score:
            self.beams.append((score, hyp))
            if len(self.beams) > self.num_beams:
                ranked = sorted((s, i) for i, (s, _) in enumerate(self.beams))
                del self.beams[ranked[0][1]]
                self.worst_score = ranked[1][0]
            else:
                self.worst_score = min(score, self.worst_score)

    def is_done(self, best_sum_logprobs, cur_len):
        if len(self.beams) < self.num_beams:
            return False
        if self.early_stopping:
            return True
        return self.worst_score >= best_sum_logprobs / cur_len ** self.length_penalty


@torch.inference_mode()
def beam_search(model, input_ids, num_beams=3, max_length=12, length_penalty=1.0,
                early_stopping=True, do_sample=False, generator=None):
    batch_size, cur_len = input_ids.shape
    input_ids = input_ids.repeat_interleave(num_beams, dim=0)
    beam_scores = torch.zeros(batch_size, num_beams)
    beam_scores[:, 1:] = -1e9
    beam_scores = beam_scores.view(-1)
    hyps = [BeamHypotheses(num_beams, length_penalty, early_stopping) for _ in range(batch_size)]
    done = [False] * batch_size
    past, cur = None, input_ids
    while cur_len < max_length:
        logits, _, past = model(cur, past=past)
        next_token_scores = F.log_softmax(logits[:, -1, :], dim=-1) + beam_scores[:, None]
        next_token_scores = next_token_scores.view(batch_size, num_beams * VOCAB)
        if do_sample:  # beam sampling: draw 2 * num_beams candidates without replacement
            probs = F.softmax(next_token_scores, dim=-1)
            next_tokens = torch.multinomial(probs, num_samples=2 * num_beams, generator=generator)
            next_token_scores = torch.gather(next_token_scores, -1, next_tokens)
            next_token_scores, _indices = torch.sort(next_token_scores, descending=True, dim=1)
            next_tokens = torch.gather(next_tokens, -1, _indices)
        else:
            next_token_scores, next_tokens = torch.topk(next_token_scores, 2 * num_beams, dim=1,
                                                        largest=True, sorted=True)
        next_indices = torch.div(next_tokens, VOCAB, rounding_mode="floor")
        next_tokens = next_tokens % VOCAB
        new_scores = torch.zeros(batch_size, num_beams)
        new_tokens = torch.zeros(batch_size, num_beams, dtype=torch.long)
        new_indices = torch.zeros(batch_size, num_beams, dtype=torch.long)
        for b in range(batch_size):
            if done[b]:
                new_tokens[b] = PAD
                continue
            rank = 0
            for score, token, beam in zip(next_token_scores[b], next_tokens[b], next_indices[b]):
                batch_beam = b * num_beams + beam.item()
                if token.item() == EOS:
                    if rank < num_beams:  # an EOS outside the top beams is not a hypothesis
                        hyps[b].add(input_ids[batch_beam].clone(), score.item())
                else:
                    new_scores[b, rank], new_tokens[b, rank] = score, token
                    new_indices[b, rank] = batch_beam
                    rank += 1
                if rank == num_beams:
                    break
            done[b] = hyps[b].is_done(next_token_scores[b].max().item(), cur_len)
        beam_scores, beam_idx = new_scores.view(-1), new_indices.view(-1)
        input_ids = torch.cat([input_ids[beam_idx, :], new_tokens.view(-1, 1)], dim=-1)
        past = [(k.index_select(0, beam_idx), v.index_select(0, beam_idx)) for k, v in past]
        cur, cur_len = new_tokens.view(-1, 1), cur_len + 1
        if all(done):
            break
    for b in range(batch_size):  # unfinished beams compete too
        if not done[b]:
            for i in range(num_beams):
                hyps[b].add(input_ids[b * num_beams + i], beam_scores[b * num_beams + i].item())
    return [sorted(h.beams, key=lambda x: x[0], reverse=True) for h in hyps]


for lp, early in [(1.0, True), (0.0, False), (2.0, False)]:
    results = beam_search(model, prompt, length_penalty=lp, early_stopping=early)
    print(f"beams lp={lp} early={early}:",
          [[(f"{s:.4f}", h.tolist()[4:]) for s, h in r[:2]] for r in results])

results = beam_search(model, prompt, num_beams=2, do_sample=True,
                      generator=torch.Generator().manual_seed(5))
print("beam sample:", [[(f"{s:.4f}", h.tolist()[4:]) for s, h in r] for r in results])

# -- contrastive search ----------------------------------------------------------------------


@torch.no_grad()
def contrastive_search(model, input_ids, top_k=4, alpha=0.6, steps=6):
    logits, hidden, past = model(input_ids)
    for _ in range(steps):
        probs = logits[:, -1].softmax(-1)
        top_p, top_ids = torch.topk(probs, top_k, dim=-1)  # (1, k)
        cand_past = [(k.expand(top_k, -1, -1, -1), v.expand(top_k, -1, -1, -1))
                     for k, v in past]
        c_logits, c_hidden, c_past = model(top_ids.view(-1, 1), past=cand_past)
        ctx = F.normalize(hidden[0], dim=-1)  # (T, D)
        cand = F.normalize(c_hidden[:, -1], dim=-1)  # (k, D)
        cos = torch.matmul(cand, ctx.T)  # (k, T)
        degeneration, _ = torch.max(cos, dim=-1)
        score = (1.0 - alpha) * top_p[0] - alpha * degeneration
        best = score.argmax()
        print(f"  cands {top_ids[0].tolist()} p {[f'{v:.4f}' for v in top_p[0].tolist()]} "
              f"penalty {[f'{v:.4f}' for v in degeneration.tolist()]} pick {best.item()}")
        input_ids = torch.cat([input_ids, top_ids[:, best, None]], dim=-1)
        hidden = torch.cat([hidden, c_hidden[best, None]], dim=1)
        logits = c_logits[best, None]
        past = [(k[best, None], v[best, None]) for k, v in c_past]
    return input_ids


print("contrastive:", contrastive_search(model, prompt[:1]).tolist())
with torch.no_grad():
    h = model(prompt[:1])[1][0]
    cs = F.cosine_similarity(h[:, None, :], h[None, :, :], dim=-1)
print("cosine_similarity == normalize @ normalize.T:", torch.allclose(
    cs, F.normalize(h, dim=-1) @ F.normalize(h, dim=-1).T, atol=1e-6),
    f"{cs[0, 1].item():.4f} {cs.diagonal().mean().item():.4f}")


# -- speculative sampling ----------------------------------------------------------------------
@torch.inference_mode()
def speculative(target, drafter, input_ids, gamma=3, rounds=4, generator=None):
    accepted_total = 0
    for _ in range(rounds):
        draft_ids, q_list = input_ids, []
        for _ in range(gamma):
            q = drafter(draft_ids)[0][:, -1].softmax(-1)
            tok = torch.multinomial(q, 1, generator=generator)
            q_list.append(q)
            draft_ids = torch.cat([draft_ids, tok], dim=-1)
        p_all = target(draft_ids)[0][:, -gamma - 1:].softmax(-1)  # (1, gamma+1, V)
        n_acc = 0
        for i in range(gamma):
            tok = draft_ids[0, input_ids.shape[1] + i]
            ratio = p_all[0, i, tok] / q_list[i][0, tok]
            r = torch.rand(1, generator=generator)
            if r.item() < min(1.0, ratio.item()):
                n_acc += 1
                continue
            residual = torch.clamp(p_all[0, i] - q_list[i][0], min=0)
            residual = residual / residual.sum()
            fix = torch.multinomial(residual, 1, generator=generator)
            print(f"  reject at {i}: ratio {ratio.item():.4f} residual mass kept "
                  f"{(residual > 0).sum().item()} -> {fix.item()}")
            input_ids = torch.cat([draft_ids[:, :input_ids.shape[1] + i], fix[None]], dim=-1)
            break
        else:
            extra = torch.multinomial(p_all[0, -1], 1, generator=generator)
            input_ids = torch.cat([draft_ids, extra[None]], dim=-1)
        accepted_total += n_acc
    return input_ids, accepted_total


ids, n_acc = speculative(model, draft, prompt[1:], generator=torch.Generator().manual_seed(11))
print("speculative:", ids.tolist(), "accepted", n_acc, "of", 4 * 3)


@torch.no_grad()
def speculative_sampling(candidate_ids, candidate_logits, new_logits, gamma):
    """HuggingFace's vectorised acceptance: ratios, rand_like, first rejection by cumsum."""
    new_candidate_input_ids = candidate_ids[:, -gamma:]
    q = candidate_logits.softmax(dim=-1)
    q_i = q[:, torch.arange(gamma), new_candidate_input_ids].squeeze(0, 1)
    p = new_logits.softmax(dim=-1)
    p_i = p[:, torch.arange(gamma), new_candidate_input_ids].squeeze(0, 1)
    probability_ratio = p_i / q_i
    r_i = torch.rand_like(probability_ratio)
    is_accepted = r_i <= probability_ratio
    n_matches = ((~is_accepted).cumsum(dim=-1) < 1).sum()
    if n_matches < gamma:
        p_prime = torch.clamp(p[:, n_matches, :] - q[:, n_matches, :], min=0)
        p_prime.div_(p_prime.sum())
    else:
        p_prime = p[:, n_matches, :]
    t = torch.multinomial(p_prime, num_samples=1).squeeze(1)[None, :]
    valid_tokens = torch.cat((new_candidate_input_ids[:, :n_matches], t), dim=-1)
    return valid_tokens, n_matches, probability_ratio


torch.manual_seed(21)
with torch.no_grad():
    cand = prompt[:1]
    for _ in range(4):
        cand = torch.cat([cand, draft(cand)[0][:, -1].argmax(-1, keepdim=True)], dim=-1)
    cand_logits = draft(cand)[0][:, -5:-1]
    new_logits = model(cand)[0][:, -5:]
for _ in range(3):
    valid, n, ratio = speculative_sampling(cand, cand_logits, new_logits, 4)
    print("vectorised acceptance", valid.tolist(), n.item(), [f"{v:.4f}" for v in ratio.tolist()])

# -- typical mistakes ---------------------------------------------------------------------------
mistakes = [
    ("multinomial inf", lambda: torch.multinomial(torch.tensor([0.5, float("inf"), 0.1]), 1)),
    ("multinomial nan", lambda: torch.multinomial(torch.tensor([[0.5, float("nan")]]), 1)),
    ("multinomial all zero", lambda: torch.multinomial(torch.zeros(2, 4), 1)),
    ("multinomial negative", lambda: torch.multinomial(torch.tensor([0.3, -0.2]), 1)),
    ("multinomial 3-d", lambda: torch.multinomial(torch.ones(2, 2, 3), 1)),
    ("multinomial no replacement", lambda: torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 2)),
    ("multinomial int", lambda: torch.multinomial(torch.tensor([1, 2, 3]), 1)),
    ("topk k > vocab", lambda: torch.topk(logits, VOCAB + 1)),
    ("topk dim", lambda: torch.topk(logits, 2, dim=2)),
    ("scatter int32 index", lambda: logits.scatter(1, torch.tensor([[1], [2]],
                                                                  dtype=torch.int32), 0.0)),
    ("gather int32 index", lambda: torch.gather(logits, 1, torch.tensor([[1]],
                                                                       dtype=torch.int32))),
    ("scatter src dtype", lambda: logits.scatter(1, torch.tensor([[1], [2]]),
                                                 torch.ones(2, 1, dtype=torch.float64))),
    ("div rounding mode", lambda: torch.div(torch.tensor([7]), 2, rounding_mode="round")),
    ("index_select float index", lambda: logits.index_select(0, torch.tensor([0.0]))),
    ("exponential_ lambda", lambda: torch.empty(3).exponential_(-1.0)),
    ("pad too much", lambda: F.pad(torch.ones(2, 3), (-4, 0))),
    ("pad crop then grow", lambda: F.pad(torch.ones(2, 3), (-4, 2))),
    ("reflect pad crop", lambda: F.pad(torch.ones(1, 2, 3), (-3, 0), mode="reflect")),
    ("topk negative k", lambda: torch.topk(logits, -1)),
    ("masked_fill float mask", lambda: logits.masked_fill(torch.zeros(2, VOCAB), 0.0)),
    ("gather out of range", lambda: logits.gather(1, torch.tensor([[VOCAB + 4]]))),
    ("scatter index too big", lambda: logits.scatter(1, torch.tensor([[0], [VOCAB]]), 1.0)),
    ("index_select 2-d index", lambda: logits.index_select(0, torch.tensor([[0]]))),
    ("softmax long", lambda: F.softmax(torch.tensor([[1, 2]]), dim=-1)),
    ("cache cat", lambda: torch.cat([torch.zeros(2, 2, 3, 4), torch.zeros(3, 2, 1, 4)], dim=2)),
    ("exponential_ long", lambda: torch.zeros(3, dtype=torch.long).exponential_()),
    ("multinomial generator kw", lambda: torch.multinomial(torch.ones(3), 1, generator=1)),
    ("isin float/long", lambda: torch.isin(torch.arange(4), torch.tensor([1.5]))),
    ("multinomial float out", lambda: torch.multinomial(torch.ones(2, 4), 1,
                                                        out=torch.empty(2, 1))),
    ("multinomial empty vocab", lambda: torch.multinomial(torch.ones(2, 0), 1, True)),
    ("cauchy_ long", lambda: torch.zeros(2, dtype=torch.long).cauchy_()),
]
for what, fn in mistakes:
    try:
        fn()
        print(what, "-> no error")
    except Exception as e:
        print(f"{what}: {type(e).__name__}: {e}")
