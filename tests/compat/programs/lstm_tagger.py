"""Part-of-speech tagging with an LSTM over word embeddings, on a tiny hand-written corpus."""

import torch
import torch.nn.functional as F
from torch import nn, optim

torch.manual_seed(1)

training_data = [
    ("the dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("everybody read that book".split(), ["NN", "V", "DET", "NN"]),
    ("a cat saw the small bird".split(), ["DET", "NN", "V", "DET", "ADJ", "NN"]),
    ("the old man ate a red apple".split(), ["DET", "ADJ", "NN", "V", "DET", "ADJ", "NN"]),
    ("that bird read a book".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("everybody saw the red dog".split(), ["NN", "V", "DET", "ADJ", "NN"]),
]
word_to_ix: dict[str, int] = {}
for sent, _tags in training_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2, "ADJ": 3}
ix_to_tag = {v: k for k, v in tag_to_ix.items()}
print(word_to_ix)

EMBEDDING_DIM = 8
HIDDEN_DIM = 8


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        return F.log_softmax(tag_space, dim=1)


model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
print(model)
print([(n, tuple(p.shape)) for n, p in model.lstm.named_parameters()])
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)

with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print(tag_scores)

for epoch in range(100):
    total = 0.0
    for sentence, tags in training_data:
        model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)
        tag_scores = model(sentence_in)
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    if epoch % 25 == 0 or epoch == 99:
        print(f"epoch {epoch:3d}  mean loss {total / len(training_data):.4f}")

with torch.no_grad():
    for sentence in ["the dog saw a bird", "everybody ate the old apple"]:
        inputs = prepare_sequence(sentence.split(), word_to_ix)
        tag_scores = model(inputs)
        best = tag_scores.argmax(dim=1)
        print(sentence, "->", [ix_to_tag[i] for i in best.tolist()])
    print(tag_scores.exp().max(dim=1).values)

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
