"""Part-of-speech tagging with an LSTM over word embeddings, on a tiny hand-written corpus."""

import torch
import torch.nn.functional as F
from torch import nn, optim

torch.manual_seed(1)

corpus = [
    ("the dog ate the apple", "DET NN V DET NN"),
    ("everybody read that book", "NN V DET NN"),
    ("a cat saw the small bird", "DET NN V DET ADJ NN"),
    ("the old man ate a red apple", "DET ADJ NN V DET ADJ NN"),
    ("that bird read a book", "DET NN V DET NN"),
    ("everybody saw the red dog", "NN V DET ADJ NN"),
]
pairs = [(words.split(), tags.split()) for words, tags in corpus]
vocab = {w: i for i, w in enumerate(dict.fromkeys(w for ws, _ in pairs for w in ws))}
tagset = ["DET", "NN", "V", "ADJ"]
tag_index = {t: i for i, t in enumerate(tagset)}
print(len(vocab), "words:", " ".join(vocab))


def encode(items, index):
    return torch.tensor([index[x] for x in items], dtype=torch.long)


class Tagger(nn.Module):
    """Embed each word, run an LSTM over the sentence, score the tags at every position."""

    def __init__(self, vocab_size, n_tags, emb=8, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb)
        self.rnn = nn.LSTM(emb, hidden)
        self.to_tags = nn.Linear(hidden, n_tags)

    def forward(self, words):
        seq = self.embed(words).unsqueeze(1)  # (length, batch=1, emb)
        states, _ = self.rnn(seq)
        return F.log_softmax(self.to_tags(states.squeeze(1)), dim=-1)


tagger = Tagger(len(vocab), len(tagset))
print(tagger)
print([(n, tuple(p.shape)) for n, p in tagger.rnn.named_parameters()])
nll = nn.NLLLoss()
opt = optim.SGD(tagger.parameters(), lr=0.1)

with torch.no_grad():
    print(tagger(encode(pairs[0][0], vocab)))

for epoch in range(100):
    running = 0.0
    for words, tags in pairs:
        tagger.zero_grad()
        loss = nll(tagger(encode(words, vocab)), encode(tags, tag_index))
        loss.backward()
        opt.step()
        running += loss.item()
    if epoch % 25 == 0 or epoch == 99:
        print(f"epoch {epoch:3d}  mean loss {running / len(pairs):.4f}")

with torch.no_grad():
    for sentence in ["the dog saw a bird", "everybody ate the old apple"]:
        scores = tagger(encode(sentence.split(), vocab))
        print(f"{sentence!r}: {' '.join(tagset[i] for i in scores.argmax(dim=1).tolist())}")
    print(scores.exp().max(dim=1).values)

# a batched, bidirectional, two-layer LSTM over padded sequences, with an explicit state
torch.manual_seed(3)
lstm = nn.LSTM(input_size=4, hidden_size=3, num_layers=2, bidirectional=True, batch_first=True)
x = torch.randn(2, 5, 4)
h0 = torch.zeros(4, 2, 3)
c0 = torch.zeros(4, 2, 3)
out, (hn, cn) = lstm(x, (h0, c0))
print(out.shape, hn.shape, cn.shape)
print(out[:, -1], hn[-1])
cell = nn.LSTMCell(4, 3)
hx, cx = torch.zeros(2, 3), torch.zeros(2, 3)
for t in range(x.size(1)):
    hx, cx = cell(x[:, t], (hx, cx))
print(hx)
gru = nn.GRU(4, 6, batch_first=True)
g_out, g_h = gru(x)
print(g_out.sum(dim=1), g_h.shape)
