"""unfold / fold / pixel_shuffle / pixel_unshuffle refuse bad arguments as PyTorch does, in
its order and words: im2col's and col2im's checks of the window (two values each, then each
in range: their orders differ), of the input's dims (only a batch may be empty) and of the
sliding blocks, before the dtype; the shuffles' argument types. An empty input to
pixel_unshuffle comes back with its shape, as PyTorch's kernel returns it."""

import numpy as np
import pytest

from helpers import same_message, same_result


def ones(L, *shape, **kw):
    return L.ones(*shape, **kw)


REFUSED = {
    "unfold blocks": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 2, 3), 3),
    "unfold blocks dilated": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 2, 2), 2, dilation=2),
    "unfold stride": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), 2, stride=0),
    "unfold kernel": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), 0),
    "unfold padding": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), 2, padding=-1),
    "unfold dilation": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), 2, dilation=0),
    "unfold order": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), 2, dilation=0,
                                                     padding=-1, stride=0),
    "unfold order 2": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), 2, padding=-1,
                                                       stride=0),
    "unfold kernel length": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), (2, 2, 2)),
    "unfold padding length": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4), 2,
                                                              padding=(1,)),
    "unfold empty channels": lambda L: L.nn.functional.unfold(ones(L, 1, 0, 4, 4), 2),
    "unfold empty unbatched": lambda L: L.nn.functional.unfold(ones(L, 0, 4, 4), 2),
    "unfold empty width": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 0), 2),
    "unfold kernel before dims": lambda L: L.nn.functional.unfold(ones(L, 1, 0, 4, 4), 0),
    "fold kernel": lambda L: L.nn.functional.fold(ones(L, 1, 4, 4), 3, 0),
    "fold order": lambda L: L.nn.functional.fold(ones(L, 1, 4, 4), 3, 2, dilation=0,
                                                 padding=-1, stride=0),
    "fold order 2": lambda L: L.nn.functional.fold(ones(L, 1, 4, 4), 3, 2, dilation=0,
                                                   padding=-1),
    "fold output length": lambda L: L.nn.functional.fold(ones(L, 1, 4, 4), (3, 3, 3), 2),
    "fold stride length": lambda L: L.nn.functional.fold(ones(L, 1, 4, 4), 3, 2,
                                                         stride=(1, 1, 1)),
    "fold empty": lambda L: L.nn.functional.fold(ones(L, 1, 0, 4), 3, 2),
    "fold empty unbatched": lambda L: L.nn.functional.fold(ones(L, 4, 0), 3, 2),
    "fold divisible": lambda L: L.nn.functional.fold(ones(L, 1, 5, 4), 3, 2),
    "fold blocks": lambda L: L.nn.functional.fold(ones(L, 1, 4, 5), 3, 2),
    "fold negative blocks": lambda L: L.nn.functional.fold(ones(L, 1, 4, 1), (-1, -1), 2),
    "fold too small": lambda L: L.nn.functional.fold(ones(L, 1, 4, 1), 0, 2),
    "fold shape before dtype": lambda L: L.nn.functional.fold(ones(L, 1, 4, 5, dtype=L.long),
                                                              3, 2),
    "unfold shape before dtype": lambda L: L.nn.functional.unfold(
        ones(L, 1, 1, 4, 4, dtype=L.long), 5),
    "unfold 2d empty second": lambda L: L.nn.functional.unfold(ones(L, 4, 0), 2),
    "unfold 5d": lambda L: L.nn.functional.unfold(ones(L, 1, 1, 1, 4, 4), 2),
    "unfold 2d kernel first": lambda L: L.nn.functional.unfold(ones(L, 4, 4), 0),
    "fold 1d": lambda L: L.nn.functional.fold(ones(L, 4), 3, 2),
    "fold 0d": lambda L: L.nn.functional.fold(L.tensor(1.0), 3, 2),
    "fold 4d": lambda L: L.nn.functional.fold(ones(L, 1, 4, 4, 4), 3, 2),
    "fold 4d integer": lambda L: L.nn.functional.fold(ones(L, 1, 4, 4, 4, dtype=L.long), 3, 2),
    "fold 1d kernel first": lambda L: L.nn.functional.fold(ones(L, 4), 3, 0),
    "shuffle channels": lambda L: L.nn.functional.pixel_shuffle(ones(L, 1, 5, 2, 2), 2),
    "shuffle zero": lambda L: L.nn.functional.pixel_shuffle(ones(L, 1, 4, 2, 2), 0),
    "unshuffle height": lambda L: L.nn.functional.pixel_unshuffle(ones(L, 1, 1, 3, 4), 2),
    "unshuffle rank": lambda L: L.nn.functional.pixel_unshuffle(ones(L, 4, 4), 2),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_in_torchs_words(name):
    same_message(REFUSED[name])


# im2col reads sizes 1 and 2 before it checks the rank, so fewer dims fail on that read
# (with Tensor.size's words) unless a zero in dim 1 already decides the check
FEW_DIMS = {
    "unfold 2d": lambda L: L.nn.functional.unfold(ones(L, 4, 4), 2),
    "unfold 1d": lambda L: L.nn.functional.unfold(ones(L, 4), 2),
    "unfold 0d": lambda L: L.nn.functional.unfold(L.tensor(1.0), 2),
    "unfold 2d empty first": lambda L: L.nn.functional.unfold(ones(L, 0, 4), 2),
    "unfold 2d integer": lambda L: L.nn.functional.unfold(ones(L, 4, 4, dtype=L.long), 2),
    "Unfold module 2d": lambda L: L.nn.Unfold(2)(ones(L, 4, 4)),
}


@pytest.mark.parametrize("name", FEW_DIMS)
def test_too_few_dims_fail_on_reading_a_size(name):
    same_message(FEW_DIMS[name], IndexError)


def test_integer_input_is_refused_after_the_checks():
    same_message(lambda L: L.nn.functional.unfold(ones(L, 1, 1, 4, 4, dtype=L.long), 2),
                 NotImplementedError)
    same_message(lambda L: L.nn.functional.fold(ones(L, 1, 4, 4, dtype=L.long), 3, 2),
                 NotImplementedError)


TYPES = {
    "float factor": lambda L: L.nn.functional.pixel_shuffle(ones(L, 1, 4, 2, 2), 2.0),
    "bool factor": lambda L: L.nn.functional.pixel_shuffle(ones(L, 1, 4, 2, 2), True),
    "float downscale": lambda L: L.nn.functional.pixel_unshuffle(ones(L, 1, 1, 4, 4), 2.5),
    "numpy float": lambda L: L.nn.functional.pixel_unshuffle(ones(L, 1, 1, 4, 4),
                                                             np.float64(2)),
    "list input": lambda L: L.nn.functional.pixel_shuffle([1.0], 2),
}


@pytest.mark.parametrize("name", TYPES)
def test_argument_types_in_torchs_words(name):
    same_message(TYPES[name], TypeError)


RESULTS = {
    "numpy int factor": lambda L: L.nn.functional.pixel_shuffle(L.arange(16.0).view(1, 4, 2, 2),
                                                                np.int64(2)),
    "tensor factor": lambda L: L.nn.functional.pixel_unshuffle(L.arange(16.0).view(1, 1, 4, 4),
                                                               L.tensor(2)),
    "unshuffle empty channels": lambda L: L.nn.functional.pixel_unshuffle(ones(L, 1, 0, 4, 4), 2),
    "unshuffle empty height": lambda L: L.nn.functional.pixel_unshuffle(ones(L, 1, 1, 0, 4), 2),
    "unshuffle empty batch": lambda L: L.nn.functional.pixel_unshuffle(ones(L, 0, 1, 4, 4), 2),
    "shuffle empty channels": lambda L: L.nn.functional.pixel_shuffle(ones(L, 1, 0, 2, 2), 2),
    "shuffle empty batch": lambda L: L.nn.functional.pixel_shuffle(ones(L, 0, 4, 2, 2), 2),
    "unfold empty batch": lambda L: L.nn.functional.unfold(ones(L, 0, 1, 4, 4), 2),
    "fold empty batch": lambda L: L.nn.functional.fold(ones(L, 0, 4, 4), 3, 2),
    "unfold strided past the end": lambda L: L.nn.functional.unfold(
        L.arange(16.0).view(1, 1, 4, 4), 2, padding=3, stride=7),
}


@pytest.mark.parametrize("name", RESULTS)
def test_edge_results_match_torch(name):
    same_result(RESULTS[name])
