"""torch.backends.cuda.matmul.allow_tf32: the legacy face of the float32 matmul precision."""

from __future__ import annotations

import torch

import ember


def _walk(L) -> list:
    """Each face read after each kind of write, ending where it began."""
    m, seen = L.backends.cuda.matmul, []
    try:
        m.allow_tf32 = True
        seen.append((m.allow_tf32, L.get_float32_matmul_precision()))
        m.allow_tf32 = False
        seen.append((m.allow_tf32, L.get_float32_matmul_precision()))
        L.set_float32_matmul_precision("medium")
        seen.append(m.allow_tf32)
        L.set_float32_matmul_precision("highest")
        seen.append(m.allow_tf32)
    finally:
        L.set_float32_matmul_precision("highest")
    return seen


def test_allow_tf32_and_the_matmul_precision_are_one_setting():
    assert _walk(ember) == _walk(torch) == [(True, "high"), (False, "highest"), True, False]


def test_allow_tf32_refuses_a_non_bool_as_torch():
    from helpers import same_message

    same_message(lambda L: setattr(L.backends.cuda.matmul, "allow_tf32", 1))
    assert ember.get_float32_matmul_precision() == "highest"
