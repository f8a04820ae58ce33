"""PyTorch's checks of group_norm's and instance_norm's weight and bias, and of rms_norm's
operands, in its order and words (a wrong affine would otherwise broadcast, or fail with a
broadcasting message).

layer_norm's shapes are the op's own (ops/layer_norm.py), batch_norm's sit with batch_norm;
the dtypes of layer_norm's, group_norm's and batch_norm's operands (their CPU kernels'
"mixed dtype" rules) are here.
"""

from __future__ import annotations

from ... import _dtype as dt
from ..._tensor import Tensor
from ..._user_warnings import warn_at_user
from ...ops._common import c_type_name, type_name
from ...ops._size_args import int_list


def check_group_norm_affine(input: Tensor, weight: Tensor | None,
                            bias: Tensor | None) -> None:
    """Weight and bias must be vectors of one value per channel (dim 1 of `input`)."""
    c = input.shape[1]
    # NOTE: PyTorch's bias message prints the weight's shape ([0] when there is none);
    # the words are copied as it prints them.
    shown = list(weight.shape) if weight is not None else [0]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            got = list(t.shape) if name == "weight" else shown
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape {got} and "
                               f"input of shape {list(input.shape)}")


def check_instance_norm_affine(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                               *, repeated: bool) -> None:
    """instance_norm repeats weight and bias once per sample and hands them to batch_norm
    over (1, N * C, ...): its errors are those of the repeat (`repeated=False`: checked
    before anything else) and then of batch_norm's sizes (`repeated=True`: after the
    running statistics are checked)."""
    n, c = input.shape[:2]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is None:
            continue
        if not repeated and t.dim() > 1:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        if repeated and t.numel() != c:
            raise RuntimeError(f"{name} should contain {n * c} elements not {n * t.numel()}")


def normalized_shape_arg(fname: str, normalized_shape) -> tuple[int, ...]:
    """`normalized_shape` as a tuple. The functional forms take a sequence only: PyTorch's
    argument parser refuses a bare int (the module classes wrap one themselves)."""
    if normalized_shape.__class__ is tuple and all(v.__class__ is int for v in normalized_shape):
        return normalized_shape  # (the modules' own: nothing to convert or refuse)
    return int_list((normalized_shape,), fname, "normalized_shape", 2, method=False)


_warned_mismatch = []  # PyTorch's TORCH_WARN_ONCE: once per process, whatever the dtypes


def check_rms_norm_inputs(input: Tensor, shape: tuple[int, ...], weight: Tensor | None) -> None:
    """rms_norm's checks in PyTorch 2.13's order: the shapes first (normalized_shape, the
    weight's, the input's rank, its trailing sizes), then a one-time warning for a weight of
    another dtype (which sends real inputs down the unfused path), then the input's dtype."""
    k, nd = len(shape), input.dim()
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    if nd < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {nd}")
    if tuple(input.shape[nd - k:]) != shape:
        # NOTE: rms_norm's message has no comma after the `*` (layer_norm's has one)
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    is_complex = input.dtype.is_complex
    if weight is not None and weight.dtype is not input.dtype and not is_complex:
        if not _warned_mismatch:
            _warned_mismatch.append(True)
            warn_at_user(f"Mismatch dtype between input and weight: input dtype = "
                         f"{c_type_name(input.dtype)}, weight dtype = "
                         f"{c_type_name(weight.dtype)}, Cannot dispatch to fused "
                         f"implementation.")
    if not (input.dtype.is_floating_point or is_complex):
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{type_name(input.dtype)}'")


def check_affine_dtypes(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> None:
    """layer_norm's and group_norm's CPU kernels take a weight and bias of the input's dtype,
    or float32 ones for a float16 / bfloat16 input (their "mixed" mode). Checked first: a
    weight of another dtype, or a bias of another dtype without a weight (a weight of the
    input's dtype and a bias of another fail later, in `check_norm_kernel_dtypes`)."""
    given = [t.dtype for t in (weight, bias) if t is not None]
    if all(d is input.dtype for d in given) or weight is not None and \
            weight.dtype is input.dtype:
        return
    if any(d is not dt.float32 for d in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (dt.float16, dt.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def check_norm_kernel_dtypes(input: Tensor, kernel: str, weight: Tensor | None,
                             bias: Tensor | None) -> None:
    """The kernel runs on floating-point inputs only (not complex), then reads a weight of
    the input's dtype and the bias as the same type."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(input.dtype)}\'')
    if weight is not None and bias is not None and weight.dtype is input.dtype \
            and bias.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                           f"{type_name(bias.dtype)}")


def check_batch_norm_dtypes(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                            running_mean: Tensor | None, running_var: Tensor | None,
                            training: bool) -> None:
    """batch_norm's CPU kernel (and instance_norm's, which runs it) takes operands of the
    input's dtype, or float32 ones beside a float16 / bfloat16 input ("mixed" mode, chosen
    when the first operand given among weight, bias and the statistics has another dtype
    than the input). Otherwise the first operand of another dtype is named, the statistics
    read before the affine in training and after it in evaluation."""
    params = (weight, bias, running_mean, running_var)
    first = next((t for t in params if t is not None), None)
    if first is None or first.dtype is input.dtype:
        order = (running_mean, running_var, weight, bias) if training else params
        for t in order:
            if t is not None and t.dtype is not input.dtype:
                raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                                   f"{type_name(t.dtype)}")
        return
    if any(t is not None and t.dtype is not dt.float32 for t in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (dt.float16, dt.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
