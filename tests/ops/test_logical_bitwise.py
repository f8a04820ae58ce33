"""logical_bitwise.py against torch: logical and bitwise ops with shifts, gcd/lcm: every
dtype, broadcast / 0-d / empty / transposed operands, scalars, in-place forms and meta."""

import numpy as np
import pytest
import torch

import ember
from ops._elementwise import Spec, binary_tests, same_outcome

SPECS = [
    Spec("logical_and", ember.logical_and, torch.logical_and, grad=False, scalars=False,
         extra={"meta_stride": False}),
    Spec("logical_or", ember.logical_or, torch.logical_or, grad=False, scalars=False,
         extra={"meta_stride": False}),
    Spec("logical_xor", ember.logical_xor, torch.logical_xor, grad=False, scalars=False,
         extra={"meta_stride": False}),
    Spec("bitwise_and", ember.bitwise_and, torch.bitwise_and, grad=False),
    Spec("bitwise_or", ember.bitwise_or, torch.bitwise_or, grad=False),
    Spec("bitwise_xor", ember.bitwise_xor, torch.bitwise_xor, grad=False),
    Spec("bitwise_left_shift", ember.bitwise_left_shift, torch.bitwise_left_shift,
         ((-8.0, 8.0), (0.0, 5.0)), grad=False),
    Spec("bitwise_right_shift", ember.bitwise_right_shift, torch.bitwise_right_shift,
         ((-8.0, 8.0), (0.0, 5.0)), grad=False),
    Spec("gcd", ember.gcd, torch.gcd, ((-20.0, 20.0), (-12.0, 12.0)), grad=False,
         scalars=False),
    Spec("lcm", ember.lcm, torch.lcm, ((-20.0, 20.0), (-12.0, 12.0)), grad=False,
         scalars=False),
]
test_values, test_grad_vs_torch, test_grad_fd, test_inplace, test_meta = binary_tests(SPECS)


SHIFT_COUNTS = [-1, 0, 1, 7, 8, 15, 31, 63, 64, 70]


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_shifts_by_out_of_range_counts_follow_torch(dtype):
    values = [1, -1, 5, -7, 100, 0]
    t = torch.tensor(values).to(getattr(torch, dtype))
    e = ember.tensor(values).to(getattr(ember, dtype))
    for k in SHIFT_COUNTS:
        for op in (lambda x, s: x << s, lambda x, s: x >> s):
            same_outcome(op, op, (e, k), (t, k))
        kt, ke = torch.full((6,), k, dtype=t.dtype), ember.full((6,), k, dtype=e.dtype)
        same_outcome(ember.bitwise_right_shift, torch.bitwise_right_shift, (e, ke), (t, kt))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_gcd_lcm_at_the_ends_of_the_range_wrap_like_torch(dtype):
    # |INT_MIN| is INT_MIN in C, so gcd(INT_MIN, 0) stays negative; lcm overflows and wraps
    # (in the operands' type from 32 bits up, in C's int below). Pairs whose gcd is -1 are
    # left out: torch's lcm then divides INT_MIN by -1, which traps.
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max, 3000, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, 3000, endpoint=True).astype(dtype)
    a[:40] = info.min
    b[:10] = 0
    b[10:40] = np.arange(30).astype(dtype)
    keep = ember.gcd(ember.tensor(a), ember.tensor(b)).numpy() != -1
    a, b = a[keep], b[keep]
    for name in ("gcd", "lcm"):
        got = getattr(ember, name)(ember.tensor(a), ember.tensor(b))
        want = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert got.dtype is getattr(ember, dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_gcd_lcm_promote_and_refuse_like_torch():
    e8, t8 = ember.tensor([12, -18, 0], dtype=ember.int8), torch.tensor([12, -18, 0],
                                                                          dtype=torch.int8)
    eu, tu = ember.tensor([8, 6, 0], dtype=ember.uint8), torch.tensor([8, 6, 0],
                                                                        dtype=torch.uint8)
    for name in ("gcd", "lcm"):
        same_outcome(getattr(ember, name), getattr(torch, name), (e8, eu), (t8, tu))  # int16
        with pytest.raises(TypeError, match="must be Tensor, not int"):
            getattr(ember, name)(e8, 3)
        with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented for'):
            getattr(ember, name)(ember.tensor([True]), ember.tensor([False]))
    x = ember.tensor([4, 6], dtype=ember.int32)
    assert x.gcd_(ember.tensor([6, 4])) is x  # int64 other, written back into int32
    assert x.tolist() == [2, 2] and x.dtype is ember.int32
