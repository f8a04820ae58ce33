"""multinomial refuses invalid probabilities in torch's words: without replacement (or for
one sample) one message for any inf, NaN or negative entry; with replacement the first bad
entry of the first bad row names the fault, and NaN, which fails `>= 0`, reads as "< 0"."""

import math

import pytest
import torch

import ember

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("probs,n,replacement", [
    ([[0.5, 0.5], [0.2, -1.0]], 3, True),
    ([[0.5, 0.5], [NAN, 1.0]], 3, True),       # NaN fails `>= 0` first: the "< 0" words
    ([[0.5, 0.5], [INF, -1.0]], 3, True),      # the row's first bad entry names it
    ([[0.5, -1.0], [NAN, 1.0]], 3, True),      # the first bad row wins
    ([[0.5, 0.5], [0.0, 0.0]], 2, True),
    ([[0.5, 0.5], [NAN, 1.0]], 1, True),       # one sample takes the path without replacement
    ([[0.5, 0.5], [INF, 1.0]], 2, False),
    ([[0.5, 0.5], [0.0, 0.0]], 2, False),
    ([0.5, -0.5], 1, False),
])
def test_invalid_probabilities_raise_in_torchs_words(probs, n, replacement):
    msgs = []
    for L in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            L.multinomial(L.tensor(probs), n, replacement)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
