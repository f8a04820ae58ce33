"""PyTorch's words for an in-place write of a batched result into an unbatched tensor
inside vmap (`torch.zeros(3).mul_(x)` where only `x` is batched).

PyTorch refuses these in one of three ways, depending on which batching path the op
takes: ops with a plain pointwise batch rule (`add_`, `atan2_`, the bitwise ops) fail in
the kernel, whose output has one example's shape while the broadcast has the batch in
front; ops with a dedicated in-place rule name themselves "in a vmap"; ops run through
the per-example fallback name their ATen operator and the vmap's level. The tables below
map ember's in-place primitives (and their members) onto those three.
"""

from __future__ import annotations

from .._tensor import Tensor
from .._view import broadcast_shapes

SHAPE = "shape"  # fails in the kernel: "output with shape [...] doesn't match ..."

# (primitive, member) -> the name PyTorch's message gives; `"aten::"` names come from the
# per-example fallback (and carry the level), the others from a dedicated rule
_NAMES = {
    ("binary_", "add"): SHAPE, ("binary_", "add_alpha"): SHAPE, ("binary_", "atan2"): SHAPE,
    ("binary_", "copysign"): SHAPE,
    ("binary_", "sub"): "inplace arithmetic", ("binary_", "sub_alpha"): "inplace arithmetic",
    ("binary_", "mul"): "inplace arithmetic", ("binary_", "div"): "inplace arithmetic",
    ("binary_", "div_trunc"): "inplace arithmetic", ("binary_", "div_floor"): "inplace arithmetic",
    ("binary_", "pow_tensor_tensor"): "aten::pow_",
    ("compare_", "logical_and"): "inplace arithmetic",
    ("compare_", "logical_or"): "inplace arithmetic",
    ("compare_", "logical_xor"): "inplace arithmetic",
    ("ternary_", "clamp_tensor"): "aten::clamp_",
    ("ternary_", "clamp_min_tensor"): "inplace arithmetic",
    ("ternary_", "clamp_max_tensor"): "inplace arithmetic",
    ("ternary_", "lerp_tensor"): "aten::lerp_",
    ("fill_", "copy"): "inplace arithmetic", ("fill_", "fill_tensor"): "fill_",
    ("scatter_", "scatter_value"): "aten::scatter_",
    ("scatter_", "scatter_add"): "scatter_add_",
    ("scatter_", "scatter_reduce"): "scatter_reduce_",
}
# primitive -> name, for every member not listed above (None: "aten::<member>_")
_DEFAULTS = {
    "binary_": None, "compare_": None, "ternary_": None, "bitwise_": SHAPE,
    "masked_fill_": "inplace arithmetic", "masked_scatter_": "aten::masked_scatter_",
    "index_put_": "index_put_", "fill_": "inplace arithmetic",
}


def _member(params: dict) -> str | None:
    fn = params.get("fn", params.get("op"))
    return getattr(fn, "name", fn)


def _torch_name(prim, params: dict) -> str:
    name, member = prim.name, _member(params)
    if (name, member) in _NAMES:
        return _NAMES[(name, member)]
    if name == "index_copy_":
        return "index_add_" if params.get("accumulate") else "aten::index_copy_"
    if name == "scatter_":
        return "aten::scatter_"
    if name == "setitem":  # advanced indexing writes through index_put_, basic through copy_
        key = params.get("key")
        key = key if isinstance(key, tuple) else (key,)
        basic = all(k is None or k is Ellipsis or isinstance(k, (int, slice)) for k in key)
        return "inplace arithmetic" if basic else "index_put_"
    default = _DEFAULTS.get(name, None)
    if default is None:
        return f"aten::{member or name.rstrip('_')}_"
    return default


def unbatched_self_error(prim, args, dims, params: dict, size: int,
                         level: int) -> RuntimeError:
    """The error PyTorch raises for `prim` writing into an unbatched `args[0]` while some
    other argument is batched (`dims`: each argument's batch axis or None; `size`
    examples) at vmap level `level` (PyTorch's count of the transforms open around it,
    itself included)."""
    name = _torch_name(prim, params)
    if name == SHAPE:
        # the kernel sees each batched operand with its batch in front, padded to the
        # operands' common rank; the unbatched `self` as it is
        ops = [(tuple(a.shape), d) for a, d in zip(args, dims) if isinstance(a, Tensor)]
        rank = max(len(s) for s, _ in ops)
        phys = [s if d is None else (size,) + (1,) * (rank - len(s)) + s for s, d in ops]
        full = broadcast_shapes(*phys)
        return RuntimeError(f"output with shape {list(phys[0])} doesn't match the broadcast "
                            f"shape {list(full)}")
    where = f"at level {level}" if name.startswith("aten::") else "in a vmap"
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
        "`other` in extra_args that has more elements than `self`. This happened due to "
        f"`other` being vmapped over but `self` not being vmapped over {where}. Please try "
        f"to use out-of-place operators instead of {name}. If said operator is being called "
        "inside the PyTorch framework, please file a bug report instead.")
