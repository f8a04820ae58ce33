"""`FlopCounterMode`: count the FLOPs of the products a program runs, per module.

PyTorch's `torch.utils.flop_counter`. While the context is active, one more interpreter
sits on the `bind` stack (an observer, as the profiler is): it sees every op ember runs,
the backward pass's included, names each as the ATen op PyTorch's CPU build would run for
it, and adds that op's count under every module running now (`module_tracker`). Only the
ops with a formula count, as in PyTorch: mm / addmm / bmm / baddbmm (2*M*N*K per product;
`linear`, `matmul` and `einsum` reach them), convolution and its backward. A matrix-vector
or dot product counts nothing (PyTorch has no formula for mv / dot), and neither does
`scaled_dot_product_attention` on the CPU (PyTorch's CPU flash kernel has none; its math
path, taken with dropout, counts as bmm). With no counter active nothing is added to an op.

`get_table` prints what PyTorch prints with the `tabulate` package (0.10) installed: its
default "simple" format, columns two spaces apart, each at least its header plus two wide,
a dashed rule under the headers, cells stripped of surrounding spaces, a column whose
cells all parse as numbers reformatted as numbers ("g"). It is written here without that
dependency.
"""

from __future__ import annotations

import sys
import warnings
from collections import defaultdict
from collections.abc import Callable
from functools import wraps
from math import prod
from typing import Any

from .._aten import aten
from .._core import dispatch
from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from ..autograd import engine as _engine
from ..library._registry import OpOverloadPacket
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]


def _aten(name: str) -> OpOverloadPacket:
    """The packet `torch.ops.aten.<name>`: the key an op's count is kept under (it prints
    `aten.mm`), the one a program's `custom_mapping` names."""
    return getattr(aten, name)


def get_shape(i):
    """A tensor's shape; anything else as it is."""
    return i.shape if isinstance(i, Tensor) else i


def _shapes(tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_shapes(x) for x in tree)
    if isinstance(tree, dict):
        return {k: _shapes(v) for k, v in tree.items()}
    return get_shape(tree)


def shape_wrapper(f: Callable) -> Callable:
    """`f` called with the shapes of its tensor arguments, the output's as `out_shape`."""
    @wraps(f)
    def nf(*args, out_val=None, **kwargs):
        return f(*_shapes(args), out_shape=_shapes(out_val), **_shapes(kwargs))
    return nf


flop_registry: dict[Any, Callable] = {}


def register_flop_formula(targets, get_raw: bool = False) -> Callable:
    """Decorator: `fn` counts the FLOPs of each op in `targets` (called with shapes, or
    with the tensors themselves when `get_raw`)."""
    def register_fun(formula: Callable) -> Callable:
        if not get_raw:
            formula = shape_wrapper(formula)
        for target in targets if isinstance(targets, (list, tuple)) else (targets,):
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(
                    f"register_flop_formula(targets): expected each target to be "
                    f"OpOverloadPacket (i.e. torch.ops.mylib.foo), JitFunction, "
                    f"or HigherOrderOperator, got {target} which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = formula
        return formula
    return register_fun


# --- the formulas (PyTorch's counting: multiply-adds times two, bias adds not counted) ----

def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """(m, k) @ (k, n): 2*m*n*k."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return 2 * m * n * k


def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """The product of addmm; the addition is not counted."""
    return mm_flop(a_shape, b_shape)


def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """(b, m, k) @ (b, k, n): 2*b*m*n*k."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return 2 * b * m * n * k


def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """The products of baddbmm."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed: bool = False) -> int:
    """2 * batch * c_out * c_in * prod(kernel) per point of the output's spatial dims (of
    the input's, for a transposed convolution)."""
    points = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *kernel = w_shape
    return 2 * x_shape[0] * c_out * c_in * prod(kernel) * prod(points)


def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs) -> int:
    """A convolution's FLOPs."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _t(shape) -> list:
    return [shape[1], shape[0]] + list(shape[2:])


def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape,
                       **kwargs) -> int:
    """The input gradient is a transposed convolution of the output gradient with the
    weight, the weight gradient a convolution of the input with the output gradient."""
    count = 0
    if output_mask[0]:
        count += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        a, b = (grad_out_shape, x_shape) if transposed else (x_shape, grad_out_shape)
        count += conv_flop_count(_t(a), _t(b), _t(out_shape[1]), transposed=False)
    return count


for _targets, _formula in (
        ("mm", mm_flop), ("addmm", addmm_flop), ("bmm", bmm_flop), ("baddbmm", baddbmm_flop),
        (("convolution", "_convolution"), conv_flop),
        ("convolution_backward", conv_backward_flop)):
    register_flop_formula([_aten(t) for t in (
        _targets if isinstance(_targets, tuple) else (_targets,))])(_formula)


# --- what PyTorch would run for each of ember's primitives -------------------------------

def _product(args, params, out):
    """The kernel PyTorch runs for this product. ember's matmul binds the products PyTorch's
    matmul runs (its folding and batching), so the ranks name the kernel: dot, mv, mm, bmm;
    two cases need the call around the bind (`_origin`)."""
    if params.get("conj"):
        return None
    a, b = args
    sa, sb = tuple(a.shape), tuple(b.shape)
    ranks = (len(sa), len(sb))
    if ranks == (3, 3) and (_engine._tasks or (sb[0] > 1 and b.stride()[0] == 0)):
        frame = _origin("grad") if _engine._tasks else None
        if frame is not None and 1 in (frame["a"].ndim, frame["b"].ndim):
            # a gradient of a matrix-vector product: PyTorch's is an outer product and mv
            return "mv", args, {}
        frame = _origin("matmul")
        if frame is not None and frame["a"].ndim == 3 and frame["b"].ndim == 3 \
                and frame["b"].shape[0] == 1 and frame["a"].shape[0] > 1:
            # under a dispatch mode PyTorch drops a batch of one and folds the rows
            return "mm", ((sa[0] * sa[1], sa[2]), sb[1:]), {}
    if ranks == (2, 2):
        if _engine._tasks and (sa[0] == 1 or sb[1] == 1):  # (a vector as a matrix)
            frame = _origin("grad")
            if frame is not None and 1 in (frame["a"].ndim, frame["b"].ndim):
                return "mv", args, {}
        return "mm", args, {}
    if ranks == (3, 3):
        return "bmm", args, {}
    return {(1, 1): "dot", (2, 1): "mv"}.get(ranks, "matmul"), args, {}


def _origin(kind: str):
    """The locals of the innermost call of this kind around the bind, or None: "grad" the
    gradient rule of a product, "matmul" matmul's dispatch, "conv" a convolution's
    gradient. (Only asked in a backward pass or for an expanded batch: ember's products
    mirror PyTorch's kernels; these are the cases the operands alone leave open.)"""
    if not _CODES:
        from ..ops import conv, matmul
        _CODES.update({matmul._grad_a.__code__: "grad", matmul._grad_b.__code__: "grad",
                       matmul._matmul.__code__: "matmul", conv._conv_like.__code__: "conv"})
    f = sys._getframe(3)
    for _ in range(10):
        if f is None:
            break
        if _CODES.get(f.f_code) == kind:
            return f.f_locals
        f = f.f_back
    return None


_CODES: dict = {}


def _addmm(args, params, out):
    inp, m1, m2 = args
    if "batch_sum" in params:
        return "addbmm", args, {}
    ranks = (m1.ndim, m2.ndim)
    if ranks == (2, 2):
        return "addmm", args, {}
    if ranks == (2, 1):
        return "addmv", args, {}
    return "baddbmm", args, {}


def _conv_args(x, w, params, transposed):
    return (x, w, None, params["stride"], params["padding"], params["dilation"], transposed,
            params.get("output_padding", 0), params["groups"])


def _conv(args, params, out):
    if _engine._tasks:
        frame = _origin("conv")
        if frame is not None and frame["transposed"]:
            # a transposed convolution's input gradient: part of PyTorch's backward op
            g, w = args[0], args[1]
            return ("convolution_backward",
                    (g, frame["like"]) + _conv_args(None, w, params, True)[1:]
                    + ([True, False, False],), {}), (out, None, None)
    return "convolution", _conv_args(args[0], args[1], params, False), {}


def _conv_input_grad(args, params, out):
    g, w = args[0], args[1]
    if params.get("transposed"):  # ember's transposed convolution
        return "convolution", _conv_args(g, w, params, True), {}
    return ("convolution_backward",
            (g, params["x_shape"]) + _conv_args(None, w, params, False)[1:]
            + ([True, False, False],), {}), (params["x_shape"], None, None)


def _conv_weight_grad(args, params, out):
    x, g = args
    return ("convolution_backward",
            (g, x, params["w_shape"]) + _conv_args(None, None, params, False)[2:]
            + ([False, True, False],), {}), (None, params["w_shape"], None)


def _attention(args, params, out):
    q, k, v, mask = args
    return ("_scaled_dot_product_flash_attention_for_cpu",
            (q, k, v, 0.0, params["causal"]), {"attn_mask": mask, "scale": params["scale"]})


def _attention_backward(args, params, out):
    return "_scaled_dot_product_flash_attention_for_cpu_backward", args, {}


# primitive name -> (args, params, out) -> (aten name, its arguments, kwargs) or None, or
# ((name, args, kwargs), the output PyTorch's op would give)
_RULES: dict[str, Callable] = {
    "matmul": _product, "addmm": _addmm, "convolution": _conv,
    "convolution_backward_input": _conv_input_grad,
    "convolution_backward_weight": _conv_weight_grad,
    "scaled_dot_product_attention": _attention,
    "scaled_dot_product_attention_backward": _attention_backward,
}


def _fused_kernels() -> dict:
    """code -> predicate(locals): the calls PyTorch's CPU build runs as one fused kernel
    with no FLOP formula (so nothing inside counts, forward or backward): a float32 LSTM
    without projections (oneDNN's mkldnn_rnn_layer), MultiheadAttention and
    TransformerEncoderLayer on their inference fast path, bilinear (_trilinear)."""
    from .. import bfloat16, float32
    from ..nn._functional import bilinear
    from ..nn.modules import activation, rnn, transformer

    def lstm(f):
        x = f["input"]
        x = getattr(x, "data", x)  # (a PackedSequence's)
        return f["self"].mode == "LSTM" and f["self"].proj_size == 0 and \
            getattr(x, "dtype", None) in (float32, bfloat16)

    def fused(f):
        return bool(f.get("fused"))

    return {rnn.RNNBase.forward.__code__: lstm,
            activation.MultiheadAttention.forward.__code__: fused,
            transformer.TransformerEncoderLayer.forward.__code__: fused,
            bilinear.bilinear.__code__: lambda f: True}


_FUSED: dict = {}


def _in_fused_kernel(depth: int = 40) -> bool:
    if not _FUSED:
        _FUSED.update(_fused_kernels())
    f = sys._getframe(3)
    for _ in range(depth):
        if f is None:
            return False
        test = _FUSED.get(f.f_code)
        if test is not None and test(f.f_locals):
            return True
        f = f.f_back
    return False


def _running_node():
    """The graph node whose VJP the backward pass is running now."""
    f = sys._getframe(3)
    for _ in range(20):
        if f is None:
            return None
        if f.f_code is _engine.run_vjp.__code__:
            return f.f_locals.get("node")
        f = f.f_back
    return None


class _Counter(dispatch.Interpreter):
    """The level of the `bind` stack that counts."""

    observer = True

    def __init__(self, counter: FlopCounterMode) -> None:
        self.counter = counter
        # the graph nodes of products run inside a fused kernel: their VJPs do not count
        self.fused_nodes: set = set()

    def process(self, prim, args: tuple, params: dict):
        out = prim.impl(prim, args, params) if self.parent is None else \
            self.lower(prim, args, params)
        rule = _RULES.get(prim.name)
        if rule is not None:
            if _engine._tasks and _running_node() in self.fused_nodes:
                return out
            if _in_fused_kernel():
                for t in out if isinstance(out, tuple) else (out,):
                    if getattr(t, "grad_fn", None) is not None:
                        self.fused_nodes.add(t.grad_fn)
                return out
            call = rule(args, params, out)
            if call is not None:
                shown = out
                if len(call) == 2:  # (the call, the outputs PyTorch's op would give)
                    call, shown = call
                name, a, kw = call
                self.counter._count_flops(_aten(name), shown, a, kw)
        return out


def _suffix(number: int) -> str:
    """The unit the table prints in: K, M, B, T by the number of digits, one step late
    (1.01B prints as 1010.000M)."""
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


_SUFFIXES = ["", "K", "M", "B", "T"]


def _with_suffix(number: int, suffix: str) -> str:
    return f"{number / 1000 ** _SUFFIXES.index(suffix):.3f}{suffix}"


def _percent(num: int, denom: int) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _tabulate(rows: list, headers: list, align: tuple) -> str:
    """tabulate's "simple" format with these column alignments. (PyTorch asks tabulate to
    keep the indentation that shows the module depth through a module global that
    tabulate 0.10 no longer reads, so the cells are stripped.)"""
    cols = [[r[i].strip() for r in rows] for i in range(len(headers))]
    for i, col in enumerate(cols):  # a column of numbers is reformatted as numbers
        if all(_is_number(c) for c in col):
            if all(c.lstrip("-").isdigit() for c in col):
                cols[i] = [str(int(c)) for c in col]
            else:
                cols[i] = [format(float(c), "g") for c in col]
    widths = [max([len(h) + 2] + [len(c) for c in col]) for h, col in zip(headers, cols)]

    def fit(s: str, w: int, a: str) -> str:
        return s.ljust(w) if a == "left" else s.rjust(w)

    lines = ["  ".join(fit(h, w, a) for h, w, a in zip(headers, widths, align)),
             "  ".join("-" * w for w in widths)]
    for r in range(len(rows)):
        lines.append("  ".join(fit(col[r], w, a) for col, w, a in zip(cols, widths, align)))
    return "\n".join(lines)


class FlopCounterMode:
    """Counts the FLOPs of the products run inside it, per module and per op.

    Example::

        with FlopCounterMode(display=False) as counter:
            model(x).sum().backward()
        counter.get_total_flops()
    """

    def __init__(self, mods=None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Any] | None = None) -> None:
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode: _Counter | None = None
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=user_stacklevel())
        custom = {k: v if getattr(v, "_get_raw", False) else shape_wrapper(v)
                  for k, v in (custom_mapping or {}).items()}
        self.flop_registry = {**flop_registry, **custom}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        """All the FLOPs counted."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """{module name: {op: FLOPs}}, "Global" holding everything."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """The counts per module down to `depth` levels, with their share of the total."""
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        total = self.get_total_flops()
        suffix = _suffix(total)
        subsumed = False

        def rows_of(name: str, level: int) -> list:
            nonlocal subsumed
            flops = sum(self.flop_counts[name].values())
            subsumed |= flops >= total
            pad = " " * level
            rows = [[pad + name, _with_suffix(flops, suffix), _percent(flops, total)]]
            for op, n in self.flop_counts[name].items():
                rows.append([pad + " - " + str(op), _with_suffix(n, suffix), _percent(n, total)])
            return rows

        values: list = []
        for name in sorted(self.flop_counts):
            if name == "Global" or name.count(".") + 1 > depth:
                continue
            values.extend(rows_of(name, name.count(".")))
        if "Global" in self.flop_counts and not subsumed:
            for row in values:
                row[0] = " " + row[0]
            values = rows_of("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return _tabulate(values, ["Module", "FLOP", "% Total"], ("left", "right", "right"))

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _Counter(self)
        dispatch.push(self.mode)
        return self

    def __exit__(self, *exc) -> bool:
        if self.mode is None:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        dispatch.pop(self.mode)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return False

    def _count_flops(self, op, out, args, kwargs):
        formula = self.flop_registry.get(op)
        if formula is not None:
            flops = formula(*args, **kwargs, out_val=out)
            for name in set(self.mod_tracker.parents):
                self.flop_counts[name][op] += flops
        return out
