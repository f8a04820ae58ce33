"""What Module.to warns when it casts, against torch (nn/modules/_conversion.py)."""

import warnings

import pytest
import torch

import ember


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in record]


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64", "bfloat16"])
def test_a_cast_to_a_complex_dtype_warns_as_torch(dtype):
    got = _warnings_of(lambda: ember.nn.Linear(2, 2).to(getattr(ember, dtype)))
    want = _warnings_of(lambda: torch.nn.Linear(2, 2).to(getattr(torch, dtype)))
    assert got == want


def test_the_warning_names_the_callers_line():
    with pytest.warns(UserWarning, match="Complex modules are a new feature") as record:
        ember.nn.Linear(2, 2).to(dtype=ember.complex64)
    assert record[0].filename == __file__
