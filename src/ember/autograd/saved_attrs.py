"""What a node saved, under the names PyTorch's nodes give it: `_saved_self`, `_saved_other`,
`_saved_result`, `_saved_dim` ...

PyTorch generates one attribute per argument its derivative formula reads, named after the
argument in the op's signature. An ember node keeps its inputs by position (`_saved`), its
static arguments by keyword (`_params`) and its outputs (`_out`), so a table maps each node
class PyTorch names to where each of its attributes lives here. Tutorials print these
(`y.grad_fn._saved_self is x`) and show that a saved tensor is gone after backward: a
tensor attribute then raises PyTorch's "Trying to backward through the graph a second
time" error, while numbers (dims, scalars kept in the parameters) stay readable.

The table (`saved_table.TABLE_SPEC`) says where each value lives; `_resolve` reads its
sources, and `_DERIVED` works out the values PyTorch's kernels keep that ember's rules
recompute (`f.NAME`).

PyTorch's node keeps a dim as the caller gave it (negative, a tuple in the caller's order,
None for every dim), where ember's params hold it normalised for the kernels: an op that
records its arguments as given (`ops.registry.keep_given`) has those shown instead, shaped
as PyTorch shows them (`_as_given`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from . import saved_hooks as _saved_hooks
from .saved_table import TABLE_SPEC

if TYPE_CHECKING:
    from .graph import Node


def _parse(spec: str) -> tuple:
    return tuple(tuple(item.split("=", 1)) for item in spec.split())


TABLE = {name: _parse(spec) for name, spec in TABLE_SPEC.items()}
# Renamed nodes whose inputs and parameters are those of PyTorch's op (unbind's pieces under
# a transform are `select`s of the same input, with its `dim`; an in-place view's node is
# its view's, renamed as PyTorch numbers the in-place overload)
_RENAMED_OK = frozenset({"MulBackward1", "DivBackward1", "NormBackward1", "UnbindBackward0",
                         "SqueezeBackward3", "SqueezeBackward4", "SqueezeBackward5",
                         "UnsqueezeBackward1", "TransposeBackward1", "AsStridedBackward1"})
_MISSING = object()


def saved_attribute(node: Node, name: str):
    """The value PyTorch's node of this class shows as `name` (`_saved_self` ...; with
    `_raw_saved_self`, the SavedTensor holding it); an AttributeError for a name that class
    does not have."""
    raw = name.startswith("_raw_saved_")
    attr = name[len("_raw_saved_" if raw else "_saved_"):]
    shown = _shown(node)
    source = "shown" if shown is not None and attr in shown else \
        _source(node, attr) if raw or name.startswith("_saved_") else None
    if source is None or raw and not _has_raw(node, attr, source):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    if raw:
        return _raw(node, attr, source)
    hooked = node.__dict__.get("_hooked")
    if hooked is not None and any(a == attr for a, _ in hooked):
        return _hooked_value(node, attr, hooked)
    if source == "shown":
        return _shown_value(node, shown[attr])
    given = node._given
    if given is not None:
        attr = name[len("_saved_"):]
        if attr in given and not _is_tensor_source(source) and not source.startswith("key"):
            return _as_given(given[attr], _resolve(node, source), attr)
    return _saved_hooks.unpack(_resolve(node, source))


def _shown(node: Node) -> dict | None:
    """What `ops.registry.shows` gave a composite's node to show, if anything."""
    return getattr(node, "__dict__", {}).get("_shown")


def _shown_value(node: Node, value):
    """A value a composite's node shows (`ops.registry.shows`): a kept tensor (gone after
    backward, as a saved one is) or an argument as given."""
    from ..ops.registry import UNDEFINED, ShownKept

    if value is UNDEFINED:
        return None
    if value.__class__ is ShownKept:
        if node._kept is None:
            _freed()
        t, _, output_nr = node._kept[value]
        if output_nr is None:
            return t
        # (an output of the node itself: another tensor of its values, as a saved result)
        from .. import _tensor as T

        return T._alias(t, storage=False)
    if isinstance(value, tuple | list):
        return tuple(_unsigned(v) for v in value)
    return _unsigned(value)


_UINT64 = 1 << 64
# (arguments PyTorch's signature types as Scalar: shown as given, not as an int64)
_SCALAR_ARGS = frozenset({"correction", "ord"})


def _as_given(value, kept, attr: str):
    """An argument as the caller gave it (`keep_given`), shaped as PyTorch's node shows it:
    a tuple where the op takes a list of dims (`kept`, the normalised value, is one), a
    negative int as the unsigned 64-bit number its int64 reads as, a 0-d tensor as its
    number."""
    if value is None:
        return None
    if isinstance(value, tuple | list):
        return tuple(_unsigned(v) for v in value)
    if kept.__class__ is tuple:
        return (_unsigned(value),)
    if attr in _SCALAR_ARGS:
        return value.item() if hasattr(value, "item") else value
    return _unsigned(value)


def _unsigned(v):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        return v  # (a name: scatter_reduce's `reduce`)
    v = int(v)
    return v + _UINT64 if v < 0 else v


def _is_tensor_source(source: str) -> bool:
    return source[0] in "ar" and (source[1:].isdigit() or source == "r")


# (the `f.NAME` values that are tensors in PyTorch's signature: a `_raw_saved_` each)
_TENSOR_DERIVED = frozenset({"nll_total_weight", "layer_norm_mean", "lu", "lu_pivots",
                             "det_lu", "det_lu_pivots", "running_mean", "running_var",
                             "logsigmoid_buffer", "absent"})


def _has_raw(node: Node, attr: str, source: str) -> bool:
    """Whether PyTorch's node has `_raw_saved_<attr>`: a SavedTensor for each tensor (or
    list of tensors) of its signature it saves, defined or not."""
    if source == "shown":
        from ..ops.registry import UNDEFINED, ShownKept

        value = _shown(node)[attr]
        return value.__class__ is ShownKept or value is UNDEFINED
    return _is_tensor_source(source) or source.startswith("key") or \
        source.startswith("f.") and source[2:] in _TENSOR_DERIVED


def _raw(node: Node, attr: str, source: str):
    """`_raw_saved_<attr>`: the SavedTensor (a tuple of them for a list of indices)."""
    if _is_tensor_source(source):
        return SavedTensor(node, source)
    if source.startswith("key"):
        n = len(node._given["indices"]) if node._given and "indices" in node._given else \
            len((node._params or {}).get("key", ()))
        return tuple(SavedTensor(node, source, attr, j) for j in range(n))
    return SavedTensor(node, source, attr)


def _hooked_value(node: Node, attr: str, hooked: dict):
    """`_saved_<attr>` of a value whose SavedTensor has hooks: unpacked (gone after
    backward)."""
    if node._saved is None:
        _freed()
    if (attr, None) in hooked:
        return _saved_hooks.unpack(hooked[attr, None])
    n = len(_raw(node, attr, _source(node, attr)))
    return tuple(_saved_hooks.unpack(hooked[attr, j]) if (attr, j) in hooked
                 else _saved_hooks.unpack(_resolve(node, _source(node, attr))[j])
                 for j in range(n))


def _entry(node: Node) -> tuple:
    cls = type(node)
    if getattr(cls, "_by_rename", False) and cls.__name__ not in _RENAMED_OK:
        return ()  # (a composite's last node, renamed: its inputs are not PyTorch's op's)
    return TABLE.get(cls.__name__, ())


def _source(node: Node, attr: str) -> str | None:
    for name, src in _entry(node):
        if name == attr:
            return src
    return None


class SavedTensor:
    """A tensor a node saved (`grad_fn._raw_saved_self`): `register_hooks(pack, unpack)`
    packs it now and unpacks it whenever backward (or `_saved_self`) reads it."""

    __slots__ = ("_node", "_source", "_attr", "_item")

    def __init__(self, node: Node, source: str, attr: str | None = None,
                 item: int | None = None) -> None:
        self._node = node
        self._source = source
        self._attr = attr  # (set for a value the node shows but no rule reads: `_hooked`)
        self._item = item  # (its place in a list of tensors: index's `indices`)

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        node, src = self._node, self._source
        if node._saved is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved variables after "
                "calling backward.")
        hooked = node.__dict__.setdefault("_hooked", {}) if self._attr else None
        key = (self._attr, self._item)
        if hooked is not None and key in hooked:
            value = hooked[key]
        elif hooked is not None:
            value = saved_attribute(node, "_saved_" + self._attr)
            value = value if self._item is None else value[self._item]
        else:
            value = _resolve(node, src)
        if value is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if value.__class__ is _saved_hooks.Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at "
                               "a time.")
        # (PyTorch's pack hook here receives the saved tensor's data, outside the graph)
        packed = _saved_hooks.Packed(pack_hook(value.detach()), unpack_hook)
        if hooked is not None:  # (read back through `unpack` by `_saved_<attr>`)
            hooked[key] = packed
            return
        if src[0] == "a":
            i = int(src[1:])
            node._saved = node._saved[:i] + (packed,) + node._saved[i + 1:]
        elif node._out.__class__ is tuple:
            i = int(src[1:] or 0)
            node._out = node._out[:i] + (packed,) + node._out[i + 1:]
        else:
            node._out = packed
        # NOTE: the node's saved tensors are then read through `unpack` and, as for tensors
        # packed by saved_tensors_hooks, none of its versions is checked
        node._packed = True


class Metadata:
    """What a node keeps of an input whose shape and strides alone its rule reads (the
    `metadata` positions of `defvjp`): the input itself is not saved, so an in-place op on it
    since cannot fail the backward, and saved-tensor hooks never see it."""

    __slots__ = ("_shape", "_stride")

    def __init__(self, t) -> None:
        self._shape = t._shape
        self._stride = t._stride

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    # (equal by value: a compiled backward's fingerprint of a step compares what nodes saved)
    def __eq__(self, other) -> bool:
        return other.__class__ is Metadata and other._shape == self._shape \
            and other._stride == self._stride

    def __hash__(self) -> int:
        return hash((tuple(self._shape), self._stride))


def _resolve(node: Node, source: str):
    kind = source[0]
    if kind == "p":
        key, _, default = source[2:].partition("|")
        key, _, flag = key.partition("!")
        params = node._params or {}
        if key not in params:
            return _default(default)
        value = params[key]
        if flag == "0":
            return value[0]
        if flag == "i" and isinstance(value, float) and value.is_integer():
            return int(value)
        if flag == "u":
            return _unsigned(-1 if value is None else value)
        if flag == "r":
            return _REDUCTIONS.get(value, value)
        return value
    if kind in "an" and source[1:].isdigit():
        saved = node._saved
        i = int(source[1:])
        if saved is None:
            return _after_release(node, kind, i)
        value = saved[i] if i < len(saved) else None
        if value.__class__ is Metadata:  # (its shape kept, the tensor not saved)
            return None
        if kind == "a" and isinstance(value, bool | int | float | complex):
            return _wrapped(value)
        return value
    if source.startswith("key"):
        return _indices(node, int(source[3:]))
    if source.startswith("f."):
        return _DERIVED[source[2:]](node)
    if kind != "r":
        source, _, dim = source.partition(".")  # (`szN.D`: one size of input N)
        fact = _shape_fact(node, source)
        return fact[int(dim)] if dim and fact is not None else fact
    # an output: `r` (the only or first one) or `rN`
    out = node._out
    if out is None and node._saved is None:
        _freed()
    if out is None or source == "r" and out.__class__ is not tuple:
        return out
    return out[int(source[1:] or 0)]


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _after_release(node: Node, kind: str, i: int):
    """Input i once backward freed the node: a number stays readable, a tensor it never
    saved reads as None (PyTorch's undefined tensor), a freed one raises (as does a number
    PyTorch wrapped into a tensor, kind `a`)."""
    from .graph import Freed

    if i >= len(node._needs or ()):
        return None  # (no such input: the call left it out)
    left = node._left
    value = left[i] if left is not None else None
    if left is None or value.__class__ is Freed or kind == "a" and value is not None:
        _freed()
    return value


def _indices(node: Node, first: int):
    """The `indices` PyTorch's index / index_put node shows: a tuple with each index tensor
    where the key has one and None for each whole dim before it (None where this key does
    not map one to one onto PyTorch's). Several index tensors are one input here, broadcast
    together and stacked (`index_key.plan`): each is shown as its row of it."""
    from ..ops.index_key import TENSOR_SLOT

    saved = node._saved
    if saved is None:
        _freed()
    given = node._given
    if given is not None and "indices" in given:  # (x[key] = value: the key's, as given)
        return tuple(_saved_hooks.unpack(t) for t in given["indices"])
    key = (node._params or {}).get("key", ())
    slots = sum(k is TENSOR_SLOT for k in key)
    tensors = iter(saved[first:])
    if slots > 1 and len(saved) - first == 1:
        stacked = _saved_hooks.unpack(saved[first])
        if stacked is None or stacked.ndim == 0 or stacked.shape[0] != slots:
            return None
        saved = saved[:first] + tuple(stacked.unbind(0))
        tensors = iter(saved[first:])
    out = []
    for k in key:
        if k is TENSOR_SLOT:
            out.append(_saved_hooks.unpack(next(tensors, None)))
        elif isinstance(k, slice) and k == slice(None):
            out.append(None)
        else:
            return None
    return tuple(out) if len(saved) - first == slots else None


def _shape_fact(node: Node, source: str):
    """`szN` / `numel0` / `ndN`: what PyTorch keeps of input N's shape (`szN.D`, one size of
    it, is read by `_resolve`)."""
    i = int(source[-1])
    meta = node._in_meta[i] if node._in_meta and i < len(node._in_meta) else None
    saved = node._saved[i] if node._saved is not None and i < len(node._saved) else None
    if node._saved is None and node._left is not None and i < len(node._left):
        saved = node._left[i]  # (freed: its shape was kept, `graph.Freed`)
    saved = _saved_hooks.unpack(saved)
    shape = meta[0] if meta is not None else tuple(saved.shape) \
        if getattr(saved, "shape", None) is not None else (node._params or {}).get("in_shape")
    if shape is None:
        return None
    if source.startswith("nd"):
        return len(shape)
    return math.prod(shape) if source.startswith("numel") else tuple(shape)


def _nll_total_weight(node: Node):
    """What nll_loss's kernel sums as it reduces: the weights of the targets not ignored (one
    each without weights; 0 for reduction 'none', where it sums nothing), in self's dtype."""
    from .. import _dtype as dt
    from ..ops.creation import tensor

    x, target, weight = (_resolve(node, f"a{i}") for i in range(3))
    params = node._params
    x, target, weight = (_saved_hooks.unpack(t) for t in (x, target, weight))
    total = 0.0
    if params["reduction"] != "none":
        t = target.detach().numpy().reshape(-1)
        kept = t[t != params["ignore_index"]]
        total = float(weight.detach().numpy()[kept].sum()) if weight is not None \
            else float(kept.size)
    return tensor(total, dtype=x.dtype if x.dtype.is_floating_point else dt.float32)


def _layer_norm_mean(node: Node):
    """layer_norm's mean over the normalised dims, kept dims as ones, in the input's dtype."""
    from ..ops.creation import tensor

    x = _saved_hooks.unpack(_resolve(node, "a0")).detach()
    k = node._params["k"]
    mean = x.numpy().astype("float64").mean(axis=tuple(range(x.ndim - k, x.ndim)),
                                            keepdims=True)
    return tensor(mean, dtype=x.dtype)


def _lu(node: Node, det: bool = False) -> tuple:
    """The LU factors and pivots of the matrix a node saved as A (PyTorch keeps the ones its
    forward computed; ember's rules do not read them). With `det`: as det and slogdet factor
    it, the transpose of a row-major A (the same determinant, LAPACK's layout uncopied)."""
    from ..linalg import lu_factor_ex

    a = _saved_hooks.unpack(_resolve(node, "a0")).detach()
    # (the _ex form: a singular A factors, as det's does, without raising)
    return lu_factor_ex(a.mT if det and not a.mT.is_contiguous() else a)[:2]


def _rounding_mode(node: Node) -> str:
    """div's rounding mode, named by the family member whose rule the node runs."""
    from .._core.primitive import vjp_rules

    member = next(m for m, rule in vjp_rules[node.prim].table.items() if rule is node._rule)
    return member.name.partition("_")[2]  # (div_trunc, div_floor)


def _conv_output_padding(node: Node) -> tuple:
    """A transposed convolution's output_padding: what its output has beyond the size stride,
    padding, dilation and kernel give (zeros for a direct convolution)."""
    params = node._params
    w = _shape_fact(node, "sz1")
    nd = len(params["stride"])
    if not params.get("transposed"):
        return (0,) * nd
    x, out = _shape_fact(node, "sz0"), params["x_shape"]
    return tuple(out[2 + i] - ((x[2 + i] - 1) * params["stride"][i] - 2 * params["padding"][i][0]
                               + params["dilation"][i] * (w[2 + i] - 1) + 1) for i in range(nd))


def _conv_bias_sizes(node: Node) -> tuple:
    """The bias's shape: (out channels,) where the call gave one, (0,) where it gave none."""
    if len(node._needs) < 3 or node._needs[2] is None:
        return (0,)
    w = _shape_fact(node, "sz1")
    return (w[1] * node._params["groups"] if node._params.get("transposed") else w[0],)


def _running(node: Node, i: int):
    """batch_norm's running statistic i (mean 0, var 1), kept on the node by F.batch_norm."""
    if node._saved is None:
        if node._kept_freed == 2:
            _freed()
        return None
    kept = node._kept
    return kept[i][0] if kept is not None and len(kept) == 2 else None


def _logsigmoid_buffer(node: Node):
    """exp(-|x|): what PyTorch's log_sigmoid kernel keeps for its backward."""
    from ..ops.creation import tensor

    x = _saved_hooks.unpack(_resolve(node, "a0")).detach()
    return tensor(np.exp(-np.abs(x.numpy())), dtype=x.dtype)


def _pad(node: Node) -> tuple:
    """constant_pad_nd's `pad` where no caller's list was kept: the pairs from the last dim,
    up to the outermost padded one."""
    pairs = node._params["pads"][::-1]
    n = max((i + 1 for i, p in enumerate(pairs) if p != (0, 0)), default=0)
    return tuple(_unsigned(v) for p in pairs[:n] for v in p)


_DERIVED = {
    "pad": _pad,
    "absent": lambda node: None,  # (a tensor argument ember's op never takes: undefined)
    "logsigmoid_buffer": _logsigmoid_buffer,
    "running_mean": lambda node: _running(node, 0),
    "running_var": lambda node: _running(node, 1),
    "nll_total_weight": _nll_total_weight,
    "normalized_shape": lambda node: _shape_fact(node, "sz0")[-node._params["k"]:],
    "rounding_mode": _rounding_mode,
    "layer_norm_mean": _layer_norm_mean,
    "lu": lambda node: _lu(node)[0],
    "lu_pivots": lambda node: _lu(node)[1],
    "det_lu": lambda node: _lu(node, det=True)[0],
    "det_lu_pivots": lambda node: _lu(node, det=True)[1],
    "svd_k": lambda node: min(_shape_fact(node, "sz0")[-2:]),
    "conv_padding": lambda node: tuple(lo for lo, _ in node._params["padding"]),
    "conv_output_padding": _conv_output_padding,
    "conv_bias_sizes": _conv_bias_sizes,
}


def _wrapped(value):
    """A number given for a `Tensor` argument (`x * 2`'s other) as PyTorch saves it: a 0-d
    tensor of the number's own dtype (bool, int64, float64, complex128)."""
    from .. import _dtype as dt
    from ..ops.creation import tensor

    kind = {bool: dt.bool_, int: dt.int64, float: dt.float64, complex: dt.complex128}
    return tensor(value, dtype=kind.get(type(value), dt.float64))


def _default(text: str):
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        return text


def node_dir(node: Node) -> list:
    """A node's attribute names: PyTorch's `_saved_*` names of its class, and not ember's
    own `_saved` and `_saved_tensors` (so a listing of `_saved` names reads as PyTorch's)."""
    entry = _entry(node) + tuple((attr, "shown") for attr in _shown(node) or ())
    own = {n for n in object.__dir__(node) if not n.startswith("_saved")}
    raw = {f"_raw_saved_{attr}" for attr, src in entry if _has_raw(node, attr, src)}
    return sorted(own | raw | {f"_saved_{attr}" for attr, _ in entry})


def _freed():
    from .engine import retain_graph_error

    raise retain_graph_error()
