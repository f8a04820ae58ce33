"""A character-level language model on text this program writes itself.

The text is generated from a tiny grammar, so the model has real structure to
learn and nothing needs downloading. A small GRU predicts the next character;
after training it samples new text, which should look like the grammar's.
"""

import argparse

import numpy as np

import ember
import ember.nn as nn
import ember.nn.functional as F

SUBJECTS = ["the cat", "a dog", "my friend", "the old man", "ember"]
VERBS = ["sees", "likes", "trains", "reads", "follows"]
OBJECTS = ["the ball", "a tensor", "the model", "some data", "the river"]


def make_text(n_sentences: int, rng) -> str:
    return " ".join(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."
                    for _ in range(n_sentences))


class CharModel(nn.Module):
    def __init__(self, vocab: int, hidden: int = 64) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.rnn = nn.GRU(32, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx, h=None):
        out, h = self.rnn(self.embed(idx), h)
        return self.head(out), h


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--batch", type=int, default=32)
    args = p.parse_args()

    rng = np.random.default_rng(0)
    ember.manual_seed(0)
    text = make_text(2000, rng)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = ember.tensor([stoi[c] for c in text])
    model = CharModel(len(chars))
    opt = ember.optim.Adam(model.parameters(), lr=3e-3)

    for step in range(args.steps + 1):
        starts = ember.randint(0, len(data) - args.seq - 1, (args.batch,))
        x = ember.stack([data[s:s + args.seq] for s in starts.tolist()])
        y = ember.stack([data[s + 1:s + args.seq + 1] for s in starts.tolist()])
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0:
            print(f"step {step:4d}  loss {loss.item():.3f}")

    model.eval()
    with ember.no_grad():
        idx = ember.tensor([[stoi["t"]]])
        h, out = None, ["t"]
        for _ in range(120):
            logits, h = model(idx, h)
            probs = F.softmax(logits[0, -1] / 0.8, dim=-1)
            idx = ember.multinomial(probs, 1).view(1, 1)
            out.append(chars[idx.item()])
    print("sample:", "".join(out))


if __name__ == "__main__":
    main()
