"""repeat_interleave's argument checks and dtypes against torch: the counts-only form, tensor
and int repeats, output_size (exact: integer results and messages)."""

import pytest
import torch

from helpers import assert_same, same_message, to_ember


def test_counts_only_keeps_the_counts_dtype():
    for d in (torch.int32, torch.int64):
        r = torch.tensor([1, 0, 3], dtype=d)
        assert_same(to_ember(r).repeat_interleave(), torch.repeat_interleave(r))
    r = torch.tensor([], dtype=torch.int32)
    assert_same(to_ember(r).repeat_interleave(), torch.repeat_interleave(r))
    r = torch.tensor([1, 2])
    assert_same(to_ember(r).repeat_interleave(output_size=3),
                torch.repeat_interleave(r, output_size=3))


@pytest.mark.parametrize("repeats", [torch.tensor(3), torch.tensor([[1, 2]]),
                                     torch.tensor([1, -2]),
                                     torch.tensor([1, 2], dtype=torch.int32)])
def test_counts_only_errors(repeats):
    def call(L):
        r = repeats if L is torch else to_ember(repeats)
        out = L.repeat_interleave(r, output_size=4)
        raise RuntimeError(f"returned {out}")  # (the last case: output_size is wrong)
    same_message(call)


@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8", "int8", "int16", "bool"])
def test_count_dtypes_cpu_rejects(dtype):
    r = torch.tensor([1, 2]).to(getattr(torch, dtype))
    same_message(lambda L: L.repeat_interleave(r if L is torch else to_ember(r)),
                 NotImplementedError)
    x = torch.tensor([5, 6])
    same_message(lambda L: (x if L is torch else to_ember(x)).repeat_interleave(
        r if L is torch else to_ember(r)), NotImplementedError)


@pytest.mark.parametrize("repeats, output_size", [(-1, None), (2, 3), (torch.tensor([2, 1]), 4),
                                                  (torch.tensor([2, 1, 1]), None),
                                                  (torch.tensor([2, -1]), None),
                                                  (torch.tensor([3, -2]), 4),
                                                  (torch.tensor([3, -2]), 1),
                                                  (torch.tensor([[1, 2]]), 1),
                                                  (torch.tensor([-1]), 1)])
def test_input_and_repeats_errors(repeats, output_size):
    x = torch.tensor([5, 6])

    def call(L):
        r = to_ember(repeats) if L is not torch and isinstance(repeats, torch.Tensor) else repeats
        (x if L is torch else to_ember(x)).repeat_interleave(r, output_size=output_size)
    same_message(call)


def test_float_repeats_is_a_type_error():
    x = torch.tensor([5, 6])
    same_message(lambda L: L.repeat_interleave(x if L is torch else to_ember(x), 2.0), TypeError)


def test_values_and_gradient():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    e = to_ember(x.detach(), requires_grad=True)
    r = torch.tensor([2, 1])
    t_out = x.repeat_interleave(r, dim=0)
    e_out = e.repeat_interleave(to_ember(r), dim=0)
    assert_same(e_out, t_out)
    t_out.sum().backward()
    e_out.sum().backward()
    assert_same(e.grad, x.grad)
    assert_same(e.repeat_interleave(2), x.detach().repeat_interleave(2))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_int_repeats_is_an_expanded_copy(dtype, dim):
    # an int count copies each slice through expand + clone, as torch does: its gradient sums
    # the copies (float16 / bfloat16 in float32, rounded once), unlike index_select's
    x = torch.randn(2, 3).to(getattr(torch, dtype)).requires_grad_()
    e = to_ember(x.detach(), requires_grad=True)
    t_out, e_out = x.repeat_interleave(3000, dim=dim), e.repeat_interleave(3000, dim=dim)
    assert_same(e_out, t_out, rtol=0, atol=0)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "ViewBackward0"
    t_out.backward(torch.ones_like(t_out))
    e_out.backward(to_ember(torch.ones_like(t_out)))
    assert_same(e.grad, x.grad, rtol=0, atol=0)
