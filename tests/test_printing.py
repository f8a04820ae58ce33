"""Tensor repr / str against PyTorch's text (with `torch.` swapped for `ember.`)."""

import math

import numpy as np
import pytest
import torch

import ember
from ember import _names, _printing

from helpers import DTYPE_PAIRS, E2T, to_torch


@pytest.fixture(autouse=True)
def _default_printoptions():
    ember.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    yield
    ember.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def torch_text(t: torch.Tensor) -> str:
    return repr(t).replace("torch.", f"{_names.prefix}.")


def assert_prints_like(e: ember.Tensor, t: torch.Tensor) -> None:
    assert repr(e) == torch_text(t)
    assert str(e) == str(t).replace("torch.", f"{_names.prefix}.")


def both(values, dtype=ember.float32):
    """The same values as an ember and a torch tensor of `dtype`."""
    arr = np.asarray(values)
    with np.errstate(all="ignore"):
        e = ember.tensor(arr.astype(np.complex128 if dtype.is_complex else np.float64)).to(dtype)
    return e, to_torch(e)


RNG = np.random.default_rng(0)
VALUES = {
    "scalar": np.array(1.5),
    "scalar_int_valued": np.array(3.0),
    "neg_zero": np.array([-0.0, 1.5]),
    "small_ints": np.array([0.0, 1.0, -2.0]),
    "tiny": np.array([1e-5, 1.0]),
    "huge": np.array([1e9, 1.0]),
    "wide_ratio": np.arange(100.0) * 1e3,
    "matrix": np.array([[1.25, -3.5], [1e3, 2.0]]),
    "cube": RNG.standard_normal((3, 4, 5)),
    "nonfinite": np.array([np.nan, np.inf, -np.inf, 0.0]),
    "nonfinite_mixed": np.array([np.nan, 1.5, -np.inf]),
    "scaled": RNG.standard_normal(30) * 100,
    "one_tiny": np.array([1e-10]),
    "int_matrix": RNG.integers(-1000, 1000, (5, 30)).astype(float),
    "long_vector": RNG.standard_normal(2000),
    "big_matrix": RNG.standard_normal((40, 40)),
    "big_cube": RNG.standard_normal((12, 10, 11)),
    "four_d": RNG.standard_normal((2, 3, 2, 2)),
    "zeros": np.zeros((2, 2)),
}


@pytest.mark.parametrize("name", list(VALUES))
@pytest.mark.parametrize("dtype", [e for e, _ in DTYPE_PAIRS], ids=str)
def test_repr_matches_torch_for_every_dtype(name, dtype):
    arr = VALUES[name]
    if dtype.is_complex:
        with np.errstate(invalid="ignore"):
            arr = arr + 1j * np.flip(arr) if arr.ndim else arr + 0.5j
    assert_prints_like(*both(arr, dtype))


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4), (1, 1), (1,), (), (7, 1, 3)])
@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, ember.bool, ember.float16],
                         ids=str)
def test_shapes_including_empty(shape, dtype):
    e = ember.ones(shape, dtype=dtype)
    assert_prints_like(e, torch.ones(shape, dtype=E2T[dtype]))


def test_bool_and_integer_widths():
    assert_prints_like(*both([[True, False], [False, True]], ember.bool))
    assert_prints_like(*both([1, -100000, 7], ember.int64))
    assert_prints_like(*both([255, 0, 3], ember.uint8))
    flags = RNG.random((30, 100)) < 0.5
    assert_prints_like(ember.tensor(flags), torch.tensor(flags))


def test_complex_signs_and_scientific_imaginary_part():
    e = ember.tensor([1 + 2j, -0.5 - 1e-5j, 3 - 0j])
    assert_prints_like(e, torch.tensor([1 + 2j, -0.5 - 1e-5j, 3 - 0j]))
    assert_prints_like(ember.tensor(2 - 3j), torch.tensor(2 - 3j))


def test_long_rows_wrap_at_linewidth():
    for n in (10, 25, 77):
        e, t = both(RNG.standard_normal(n) * 10)
        assert_prints_like(e, t)
        assert_prints_like(e.reshape(1, n), t.reshape(1, n))


def test_default_dtype_decides_the_dtype_suffix():
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    for dtype in (ember.float32, ember.float64, ember.complex64, ember.complex128):
        assert_prints_like(*both([1.5, 2.25], dtype))
    assert_prints_like(ember.zeros(0, dtype=ember.float32), torch.zeros(0, dtype=torch.float32))


def test_meta_tensors_print_size_and_dtype():
    for dtype in (ember.float32, ember.int64, ember.bfloat16):
        e = ember.empty(100_000, 100_000, dtype=dtype, device="meta")
        t = torch.empty(100_000, 100_000, dtype=E2T[dtype], device="meta")
        assert_prints_like(e, t)
    assert_prints_like(ember.empty((), device="meta"), torch.empty((), device="meta"))


def test_autograd_suffixes():
    e = ember.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    assert_prints_like(e, t)
    assert_prints_like(e * 2, t * 2)
    assert_prints_like((e + 1).sum(), (t + 1).sum())
    assert_prints_like(e.double() * 2, t.double() * 2)


def test_suffixes_wrap_onto_a_new_line_when_too_long():
    e, t = both(RNG.standard_normal(9), ember.float16)
    e.requires_grad_(True)
    t.requires_grad_(True)
    assert_prints_like(e, t)
    assert_prints_like(e * 3, t * 3)
    e2, t2 = both(RNG.standard_normal((2, 7)), ember.float64)
    assert_prints_like(e2.requires_grad_(), t2.requires_grad_())


def test_views_and_non_contiguous_tensors_print_their_values():
    e, t = both(RNG.standard_normal((4, 6)))
    assert_prints_like(e.t(), t.t())
    assert_prints_like(e[1:, ::2], t[1:, ::2])
    assert_prints_like(e[:, 2], t[:, 2])
    assert_prints_like(e.expand(3, 4, 6), t.expand(3, 4, 6))


@pytest.mark.parametrize("options", [
    dict(precision=2), dict(precision=0), dict(precision=8), dict(threshold=5),
    dict(threshold=5, edgeitems=1), dict(threshold=5, edgeitems=0), dict(linewidth=30),
    dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"), dict(profile="full"),
    dict(profile="short", precision=6), dict(edgeitems=5, threshold=100),
], ids=str)
def test_set_printoptions(options):
    ember.set_printoptions(**options)
    torch.set_printoptions(**options)
    cases = [RNG.standard_normal(12), RNG.standard_normal((9, 8)) * 1e3, np.array([1.0, 2.0]),
             np.array([1e-6, 3.0]), RNG.standard_normal(2000), RNG.standard_normal((3, 8, 9)),
             np.array(0.123456789)]
    for arr in cases:
        for dtype in (ember.float32, ember.float64, ember.int32, ember.complex64):
            assert_prints_like(*both(arr, dtype))


def test_profile_full_prints_everything():
    ember.set_printoptions(profile="full")
    text = repr(ember.arange(2000))
    assert "..." not in text
    assert _printing.OPTS.threshold == math.inf


def test_set_printoptions_resets_sci_mode_like_torch():
    ember.set_printoptions(sci_mode=True)
    ember.set_printoptions(precision=3)
    torch.set_printoptions(sci_mode=True)
    torch.set_printoptions(precision=3)
    assert_prints_like(*both([1.5, 2.5]))


def test_printoptions_context_manager_restores():
    before = _printing.get_printoptions()
    with _printing.printoptions(precision=1, threshold=3):
        assert repr(ember.tensor([1.25])) == "tensor([1.2])"
    assert _printing.get_printoptions() == before


def test_format_of_zero_dim_tensors_is_the_number():
    for e, t in (both(1.5), both(2, ember.int64), both(1.25, ember.float16)):
        assert f"{e}" == f"{t}"
        assert f"{e:.3f}" == f"{t:.3f}"
    with pytest.raises(TypeError):
        f"{ember.tensor([1.0]):.2f}"


def test_size_and_dtype_reprs():
    assert repr(ember.zeros(2, 3).shape) == f"{_names.prefix}.Size([2, 3])"
    assert repr(ember.zeros(()).shape) == f"{_names.prefix}.Size([])"
    for e, t in DTYPE_PAIRS:
        assert repr(e) == repr(t).replace("torch.", f"{_names.prefix}.")


def test_torch_prefix_prints_byte_for_byte_like_torch(monkeypatch):
    monkeypatch.setattr(_names, "prefix", "torch")
    e, t = both(RNG.standard_normal((3, 4)), ember.float64)
    assert repr(e) == repr(t)
    assert repr(ember.zeros(2, 3, dtype=ember.int64, device="meta")) == repr(
        torch.zeros(2, 3, dtype=torch.int64, device="meta"))
    assert repr(e.shape) == repr(t.shape)
