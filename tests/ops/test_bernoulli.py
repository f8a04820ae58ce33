"""ops/bernoulli.py: Tensor.bernoulli_ with a probability tensor refuses as PyTorch does, in
its order and words: a leaf first (sparing the draw), nothing more on meta, then p expanded
to self's shape (expand's refusal), then p's dtype; a complex self names the tensor kernel."""

from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, call) -> str:
    """The result's shape, or the exception's type and message."""
    try:
        return str(list(call(lib).shape))
    except Exception as e:  # noqa: BLE001 (the exception itself is what is compared)
        return f"{type(e).__name__}: {e}".replace("torch.", "").replace("ember.", "")


_CALLS = {
    "p_more_dims": lambda L: L.zeros(3).bernoulli_(L.full((2, 3), 0.5)),
    "p_wrong_size": lambda L: L.zeros(3).bernoulli_(L.full((2,), 0.5)),
    "p_extra_unit_dims": lambda L: L.zeros(3, 4).bernoulli_(L.full((1, 4, 1), 0.5)),
    "p_broadcasts": lambda L: L.zeros(3, 4).bernoulli_(L.full((3, 1), 1.0)),
    "leaf_before_shape": lambda L: L.zeros(3, requires_grad=True).bernoulli_(
        L.full((2, 3), 0.5)),
    "leaf_before_dtype": lambda L: L.zeros(3, requires_grad=True).bernoulli_(
        L.ones(3, dtype=L.int64)),
    "shape_before_dtype": lambda L: L.zeros(3).bernoulli_(L.ones(2, dtype=L.int64)),
    "meta_unchecked": lambda L: L.zeros(3, device="meta").bernoulli_(
        L.full((2, 3), 0.5, device="meta")),
    "meta_int_p": lambda L: L.zeros(3, device="meta").bernoulli_(
        L.ones(3, dtype=L.int64, device="meta")),
    "complex_self": lambda L: L.zeros(3, dtype=L.complex64).bernoulli_(L.full((3,), 0.5)),
    "complex_self_float_p": lambda L: L.zeros(3, dtype=L.complex64).bernoulli_(0.5),
}


@pytest.mark.parametrize("name", list(_CALLS))
def test_tensor_p_refusals_as_torch(name):
    call = _CALLS[name]
    assert _outcome(ember, call) == _outcome(torch, call)
