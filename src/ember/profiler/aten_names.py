"""The name the profiler gives each op: the one PyTorch's profiler shows for the same work.

Every op reaches the profiler as one `bind(prim, *args, **params)`, so one event per call is
named from the primitive (a family's from its member, `params["fn"]`). Each is named after
the aten op that does the work its kernel does: `aten::addmm` for nn.Linear's product,
`aten::native_layer_norm`, `aten::_log_softmax`. PyTorch also shows the composite around
that op (`aten::linear`, `aten::layer_norm`, `aten::log_softmax`) and the helpers inside it
(`aten::empty`, `aten::t`, `aten::resolve_conj`); in ember the composite is plain Python and
the helpers do not exist, so neither is an event.

The rule: a member is `aten::<its name>` (members are named after the PyTorch op they
implement), a primitive `aten::<its name>`, an in-place op the same with a trailing `_`,
except where the tables below say otherwise. Primitives with no PyTorch counterpart (the
random draw behind every sampler, autograd's write through a view) are `ember::<name>`.
"""

from __future__ import annotations

import re

# Family members whose name differs from PyTorch's op (a variant ember keeps apart).
MEMBERS = {
    "add_alpha": "add", "sub_alpha": "sub", "mul_wide": "mul", "div_wide": "div",
    "div_trunc": "div", "div_floor": "div", "rsub_scalar": "rsub",
    "pow_tensor_scalar": "pow", "pow_tensor_tensor": "pow", "pow_scalar": "pow",
    "gelu_tanh_backward": "gelu_backward",
    "remainder_scalar": "remainder", "remainder_self_scalar": "remainder",
    "fmod_scalar": "fmod", "round_decimals": "round", "float_class": "isinf",
    "squeeze_dim": "squeeze", "squeeze_dims": "squeeze", "unsafe_view": "_unsafe_view",
    "reshape_alias": "_reshape_alias",
    "view_dtype": "view", "sum_dims": "sum", "mean_dims": "mean", "prod_dim": "prod",
    "max_dim": "max", "min_dim": "min", "median_dim": "median", "nanmedian_dim": "nanmedian",
    "clamp_tensor": "clamp", "clamp_min_tensor": "clamp_min", "clamp_max_tensor": "clamp_max",
    "lerp_tensor": "lerp", "scatter_value": "scatter",
    "bernoulli_tensor": "bernoulli", "bernoulli_p": "bernoulli", "normal_std": "normal",
    "bernoulli_f": "bernoulli", "random_to": "random", "random_all": "random",
    "fill_tensor": "fill", "drawn_normal": "normal", "drawn_normal_mean": "normal",
    "drawn_normal_std": "normal", "drawn_poisson": "poisson", "drawn_bernoulli": "bernoulli",
}


def _by_value(empty: str, zero: str, one: str, other: str):
    """A fill named by its value, as PyTorch's factories are (`zeros`, `ones`, `full`; no
    value: `empty`)."""
    def pick(args, params) -> str:
        value = params.get("value")
        if value is None:
            return empty
        return zero if value == 0 else (one if value == 1 else other)
    return pick


def _product(args, params) -> str:
    """The kernel the operands' ranks pick, as PyTorch's matmul picks it."""
    if params:
        return "vdot"
    ranks = (len(args[0]._shape), len(args[1]._shape))
    return {(2, 2): "mm", (3, 3): "bmm", (2, 1): "mv", (1, 1): "dot"}.get(ranks, "matmul")


def _max_pool(args, params) -> str:
    return f"max_pool{len(params['kernel'])}d_with_indices"


def _optimizer_step(name: str):
    # PyTorch's fused optimizers (`fused=True`) run one kernel per step, as ember's do; Adam
    # with decoupled weight decay is its AdamW kernel. (PyTorch has no fused Adadelta: ember's
    # is named after the others.)
    def pick(args, params) -> str:
        if name == "adam" and params.get("decoupled"):
            return "_fused_adamw_"
        return f"_fused_{name}_"
    return pick


def _from_node(args, params, prim) -> str:
    """The op PyTorch names the node after (`AddmvBackward0` -> `addmv`, `TriuBackward0` ->
    `triu`), for primitives whose node name already depends on the call."""
    node = re.sub(r"Backward\d*$", "", prim.grad_name(args, params))
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", node).lower()


# Primitives whose name differs from PyTorch's op, or depends on the call. A callable gets
# (args, params) and returns the name without the `aten::` prefix.
PRIMITIVES = {
    "matmul": _product,
    "addmm": lambda args, params: "addbmm" if "batch_sum" in params else (
        {(2, 2): "addmm", (2, 1): "addmv"}.get((len(args[1]._shape), len(args[2]._shape)),
                                              "baddbmm")),
    "softmax": lambda args, params: "_log_softmax" if params.get("log") else "_softmax",
    "softmax_backward_data": lambda args, params: (
        "_log_softmax_backward_data" if params.get("log") else "_softmax_backward_data"),
    "compare": lambda args, params: params["op"],
    "bitwise": lambda args, params: f"bitwise_{params['op']}",
    "argextremum": lambda args, params: "argmax" if params["largest"] else "argmin",
    "clone": lambda args, params: "to" if "dtype" in params else "clone",
    "to_device": "to",
    "filled_like": _by_value("empty_like", "zeros_like", "ones_like", "full_like"),
    "max_pool_with_indices": _max_pool,
    "max_pool_backward": lambda args, params: f"max_pool{params['nd']}d_with_indices_backward",
    "convolution_backward_input": lambda args, params: (
        "convolution" if params.get("transposed") else "convolution_backward"),
    "convolution_backward_weight": "convolution_backward",
    "grid_sampler": lambda args, params: (
        "grid_sampler_3d" if len(args[0]._shape) == 5 else "grid_sampler_2d"),
    "grid_sampler_backward": lambda args, params: (
        "grid_sampler_3d_backward" if len(args[0]._shape) == 5 else "grid_sampler_2d_backward"),
    "fft": lambda args, params: f"_fft_{params['kind']}",
    "triangle": lambda args, params: "tril" if params["lower"] else "triu",
    "index": lambda args, params: "index_select" if params.get("select") else "index",
    "index_put": "index_put_",
    "setitem": lambda args, params: "copy_" if hasattr(args[1], "_shape") else "fill_",
    "ctc_loss_backward": "_ctc_loss_backward",
    "scaled_dot_product_attention_backward":
        "_scaled_dot_product_flash_attention_for_cpu_backward",
    "sgd_step": _optimizer_step("sgd"),
    "adam_step": _optimizer_step("adam"),
    "adadelta_step": _optimizer_step("adadelta"),
}

# Members named by the call: a factory by its value.
CALLED_MEMBERS = {
    ("factory", "full"): _by_value("empty", "zeros", "ones", "full"),
}

# ember's own primitives, with no one PyTorch op doing their work.
EMBER = {"draw", "draw_like", "copy_slices", "restride", "quantile_index", "lu_permutation",
         "embedding_row_scale", "sparse_coo", "values", "sparse_convert", "gather_coo",
         "sparse_mm"}

_NODE_NAMED = {"index_copy"}  # named as PyTorch names their node (index_add, index_fill ...)

_fixed: dict = {}  # (prim, member) -> name, for names that do not depend on the call


def op_name(prim, args: tuple, params: dict) -> str:
    """The profiler's name for `bind(prim, *args, **params)`."""
    fn = params.get("fn")
    key = (prim, fn)
    name = _fixed.get(key)
    if name is not None:
        return name
    base = getattr(prim, "base", None)  # an in-place op: its functional op's name, then `_`
    target = prim if base is None else base
    suffix = "" if base is None else "_"
    if fn is not None:
        called = CALLED_MEMBERS.get((target.name, fn.name))
        if called is not None:
            return "aten::" + called(args, params) + suffix
        name = "aten::" + MEMBERS.get(fn.name, fn.name) + suffix
    elif target.name in EMBER:
        name = f"ember::{target.name}{suffix}"
    elif target.name in _NODE_NAMED:
        return "aten::" + _from_node(args, params, target) + suffix
    else:
        rule = PRIMITIVES.get(target.name, target.name)
        if callable(rule):
            return "aten::" + rule(args, params) + suffix
        name = "aten::" + rule + suffix
    _fixed[key] = name
    return name
