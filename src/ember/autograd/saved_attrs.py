"""What a node saved, under the names PyTorch's nodes give it: `_saved_self`, `_saved_other`,
`_saved_result`, `_saved_dim` ...

PyTorch generates one attribute per argument its derivative formula reads, named after the
argument in the op's signature. An ember node keeps its inputs by position (`_saved`), its
static arguments by keyword (`_params`) and its outputs (`_out`), so a table maps each node
class PyTorch names to where each of its attributes lives here. Tutorials print these
(`y.grad_fn._saved_self is x`) and show that a saved tensor is gone after backward: a
tensor attribute then raises PyTorch's "Trying to backward through the graph a second
time" error, while numbers (dims, scalars kept in the parameters) stay readable.

A source in the table is one of:
- `aN`: tensor input N as saved (None where the derivative did not need it, as PyTorch
  saves an undefined tensor there); `nN`: number input N (a Scalar in PyTorch's signature,
  so no `_raw_saved_` SavedTensor);
- `r` / `rN`: output 0 / N as saved;
- `p.NAME` or `p.NAME|DEFAULT`: the static parameter NAME (DEFAULT when not recorded);
  `p.NAME!0`: its first element (a one-dim op whose parameter is a tuple of dims here);
  `p.NAME!i`: an integral float shown as an int; `p.NAME!u`: an int shown as PyTorch's int64
  reads as unsigned (None as -1, PyTorch's "none": embedding's padding_idx); `p.NAME!r`: a
  loss's reduction as PyTorch's enum (none 0, mean 1, sum 2);
- `keyN`: an indexing op's tensor indices, in its key's order (None for each whole dim),
  the index tensors being its inputs from N on;
- `szN`: the shape of input N (`_saved_self_sym_sizes`), `numel0` input 0's element count,
  `ndN` its number of dims.

PyTorch's node keeps a dim as the caller gave it (negative, a tuple in the caller's order,
None for every dim), where ember's params hold it normalised for the kernels: an op that
records its arguments as given (`ops.registry.keep_given`) has those shown instead, shaped
as PyTorch shows them (`_as_given`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from . import saved_hooks as _saved_hooks

if TYPE_CHECKING:
    from .graph import Node

# (nodes whose only saved value is the input's shape: PyTorch's views and sums)
_SIZES = "self_sym_sizes=sz0"
_SELF = "self=a0"
_RESULT = "result=r"

_TABLE_SPEC = {
    # binary arithmetic
    "AddBackward0": "alpha=p.alpha|1",
    "SubBackward0": "alpha=p.alpha|1",
    "RsubBackward1": "alpha=p.alpha|1",
    "MulBackward0": "other=a1 self=a0",
    "DivBackward0": "other=a1 self=a0",
    "PowBackward0": "exponent=n1 self=a0",
    "PowBackward1": "exponent=a1 result=r self=a0",
    "PowBackward2": "exponent=a1 result=r self=n0",
    "MinimumBackward0": "other=a1 self=a0",
    "MaximumBackward0": "other=a1 self=a0",
    "FminBackward0": "other=a1 self=a0",
    "FmaxBackward0": "other=a1 self=a0",
    "Atan2Backward0": "other=a1 self=a0",
    "HypotBackward0": "other=a1 result=r self=a0",
    "XlogyBackward0": "other=a1 self=a0",
    "LogaddexpBackward0": "other=a1 self=a0",
    "AddcmulBackward0": "tensor1=a1 tensor2=a2 value=p.value|1",
    "AddcdivBackward0": "tensor1=a1 tensor2=a2 value=p.value|1",
    "LerpBackward0": "weight=n2",
    "LerpBackward1": "end=a1 self=a0 weight=a2",
    "FmodBackward1": "other=a1 self=a0",
    "RemainderBackward1": "other=a1 self=a0",
    "LdexpBackward0": "other=a1 result=r",
    "WhereBackward0": "condition=a0",
    "ClampBackward1": "max=n2 min=n1 self=a0",
    "ClampBackward0": "max=a2 min=a1 self=a0",
    "ClampMinBackward0": "min=n1 self=a0",
    "ClampMaxBackward0": "max=n1 self=a0",
    # unary math: what each derivative reads
    "ExpBackward0": _RESULT, "Exp2Backward0": _RESULT, "Expm1Backward0": _RESULT,
    "SqrtBackward0": _RESULT, "RsqrtBackward0": _RESULT, "ReciprocalBackward0": _RESULT,
    "TanhBackward0": _RESULT, "SigmoidBackward0": _RESULT, "ReluBackward0": _RESULT,
    "SgnBackward0": "result=r self=a0",
    "LogBackward0": _SELF, "Log2Backward0": _SELF, "Log10Backward0": _SELF,
    "Log1PBackward0": _SELF, "SinBackward0": _SELF, "CosBackward0": _SELF,
    "TanBackward0": _RESULT, "SinhBackward0": _SELF, "CoshBackward0": _SELF,
    "AsinBackward0": _SELF, "AcosBackward0": _SELF, "AtanBackward0": _SELF,
    "AsinhBackward0": _SELF, "AcoshBackward0": _SELF, "AtanhBackward0": _SELF,
    "AbsBackward0": _SELF, "ErfBackward0": _SELF, "ErfinvBackward0": _SELF,
    "LgammaBackward0": _SELF, "DigammaBackward0": _SELF, "I0Backward0": _SELF,
    "SincBackward0": _SELF, "AngleBackward0": _SELF, "NanToNumBackward0": _SELF,
    "SiluBackward0": _SELF, "MishBackward0": _SELF, "HardswishBackward0": _SELF,
    "HardsigmoidBackward0": _SELF, "SignBackward0": "", "NegBackward0": "",
    "FloorBackward0": "", "CeilBackward0": "", "RoundBackward0": "", "TruncBackward0": "",
    "FracBackward0": "", "ConjBackward0": "", "CloneBackward0": "",
    "LogitBackward0": "eps=p.eps self=a0",
    "ThresholdBackward0": "self=a0 threshold=p.threshold",
    "CeluBackward0": "alpha=p.alpha self=a0",
    "GeluBackward0": "approximate=p.approximate|none self=a0",
    "LeakyReluBackward0": "negative_slope=p.negative_slope self=a0",
    # (F.elu / F.selu pass PyTorch's kernel an int 1 where a scale is 1: `!i` shows an
    # integral float parameter as an int)
    "EluBackward0": "alpha=p.alpha input_scale=p.input_scale!i scale=p.scale!i self=a0",
    "SoftplusBackward0": "beta=p.beta self=a0 threshold=p.threshold",
    "HardtanhBackward0": "max_val=p.max_val min_val=p.min_val self=a0",
    "SoftmaxBackward0": "dim=p.dim result=r",
    "LogSoftmaxBackward0": "dim=p.dim result=r",
    # reductions
    "SumBackward0": _SIZES,
    "SumBackward1": "dim=p.dims keepdim=p.keepdim " + _SIZES,
    "MeanBackward0": "self_sym_numel=numel0 " + _SIZES,
    "MeanBackward1": "dim=p.dims keepdim=p.keepdim self_sym_numel=numel0 " + _SIZES,
    "ProdBackward0": "result=r self=a0",
    "ProdBackward1": "dim=p.dims!0 keepdim=p.keepdim result=r self=a0",
    "MaxBackward1": "result=r self=a0",
    "MinBackward1": "result=r self=a0",
    "MaxBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "MinBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "MedianBackward1": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "ModeBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "KthvalueBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "SortBackward0": "dim=p.dim indices=r1 " + _SIZES,
    "SortBackward1": "dim=p.dim indices=r1 " + _SIZES,
    "TopkBackward0": "dim=p.dim indices=r1 " + _SIZES,
    "AmaxBackward0": "dim=p.dims keepdim=p.keepdim result=r self=a0",
    "AminBackward0": "dim=p.dims keepdim=p.keepdim result=r self=a0",
    "MedianBackward0": "result=r self=a0",
    "NanmedianBackward0": "result=r self=a0",
    "LogsumexpBackward0": "dim=p.dims keepdim=p.keepdim result=r self=a0",
    "NansumBackward0": "dim=p.dims keepdim=p.keepdim self=a0",
    "NanmedianBackward1": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "VarBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim self=a0",
    "StdBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim result=r self=a0",
    "VarMeanBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim self=a0",
    "StdMeanBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim result0=r0 "
                        "self=a0",
    "LinalgVectorNormBackward0": "dim=p.dims keepdim=p.keepdim ord=p.ord result=r self=a0",
    "CumsumBackward0": "dim=p.dim",
    "CumprodBackward0": "dim=p.dim result=r self=a0",
    "LogcumsumexpBackward0": "dim=p.dim result=r self=a0",
    "CummaxBackward0": "dim=p.dim indices=r1 self=a0",
    "CumminBackward0": "dim=p.dim indices=r1 self=a0",
    # linear algebra
    # (PyTorch's `*_sym_strides`, an input's strides when it needs a gradient, are not
    # kept here: those nodes show no such attribute)
    "MmBackward0": "mat2=a1 mat2_sym_sizes=sz1 self=a0 self_sym_sizes=sz0",
    "BmmBackward0": "mat2=a1 self=a0",
    "MvBackward0": "self=a0 vec=a1",
    "DotBackward0": "self=a0 tensor=a1",
    "AddmmBackward0": "alpha=p.alpha|1 beta=p.beta|1 mat1=a1 mat1_sym_sizes=sz1 mat2=a2 "
                      "mat2_sym_sizes=sz2",
    "AddmvBackward0": "alpha=p.alpha|1 beta=p.beta|1 mat=a1 vec=a2",
    "AddbmmBackward0": "alpha=p.alpha|1 batch1=a1 batch1_sym_argsize_0=sz1.0 "
                       "batch1_sym_argsize_1=sz1.1 batch2=a2 batch2_sym_argsize_2=sz2.2 "
                       "beta=p.beta|1",
    "BaddbmmBackward0": "alpha=p.alpha|1 batch1=a1 batch2=a2 beta=p.beta|1",
    "AddrBackward0": "alpha=p.alpha|1 beta=p.beta|1 vec1=a1 vec2=a2",
    "LinalgCrossBackward0": "dim=p.dim other=a1 self=a0",
    "TraceBackward0": _SIZES,
    # views and copies
    "ViewBackward0": _SIZES, "UnsafeViewBackward0": _SIZES, "ExpandBackward0": _SIZES,
    "SqueezeBackward0": _SIZES, "SqueezeBackward1": "dim=p.dims!0 " + _SIZES,
    "SqueezeBackward2": "dim=p.dims " + _SIZES,
    "UnsqueezeBackward0": "dim=p.dim",
    "TransposeBackward0": "dim0=p.dim0 dim1=p.dim1",
    # (the in-place views: squeeze_(), squeeze_(d), squeeze_(dims), unsqueeze_, transpose_)
    "SqueezeBackward3": _SIZES, "SqueezeBackward4": "dim=p.dims!0 " + _SIZES,
    "SqueezeBackward5": "dim=p.dims " + _SIZES,
    "UnsqueezeBackward1": "dim=p.dim",
    "TransposeBackward1": "dim0=p.dim0 dim1=p.dim1",
    "PermuteBackward0": "dims=p.dims",
    "SelectBackward0": "dim=p.dim index=p.index " + _SIZES,
    "UnbindBackward0": "dim=p.dim",
    "SplitBackward0": "dim=p.dim self_sym_sizes=sz0 split_size=p.split_size",
    "SplitWithSizesBackward0": "dim=p.dim self_sym_sizes=sz0 split_sizes=p.split_sizes",
    "UnsafeSplitBackward0": "dim=p.dim self_sym_sizes=sz0 split_size=p.split_size",
    "UnsafeSplitWithSizesBackward0": "dim=p.dim self_sym_sizes=sz0 split_sizes=p.split_sizes",
    "SliceBackward0": "dim=p.dim end=p.stop " + _SIZES + " start=p.start step=p.step",
    "FlipBackward0": "dims=p.dims",
    "RollBackward0": "dims=p.dims shifts=p.shifts",
    "RepeatBackward0": "repeats=p.reps " + _SIZES,
    "TriuBackward0": "diagonal=p.diagonal",
    "TrilBackward0": "diagonal=p.diagonal",
    "DiagonalBackward0": "dim1=p.dim1 dim2=p.dim2 offset=p.offset_ " + _SIZES,
    "UnfoldBackward0": "dimension=p.dim " + _SIZES + " size=p.size step=p.step",
    "AsStridedBackward0": "size=p.size storage_offset=p.storage_offset stride=p.stride_",
    "AsStridedBackward1": "size=p.size storage_offset=p.storage_offset stride=p.stride_",
    "DiagEmbedBackward0": "dim1=p.dim1 dim2=p.dim2 offset=p.offset",
    "CatBackward0": "dim=p.dim",
    "StackBackward0": "dim=p.dim",
    # indexing
    "GatherBackward0": "dim=p.dim index=a1 self=a0 sparse_grad=p.sparse_grad|False",
    "MaskedFillBackward0": "mask=a1",
    "MaskedSelectBackward0": "mask=a1 self=a0",
    "ScatterBackward0": "dim=p.dim index=a1",
    "ScatterBackward1": "dim=p.dim index=a1",
    "ScatterAddBackward0": "dim=p.dim index=a1",
    "IndexAddBackward0": "alpha=p.alpha|1 dim=p.dim index=a1 source=a2 source_dim=nd2",
    "IndexCopyBackward0": "dim=p.dim index=a1 source=a2 source_dim=nd2",
    "IndexFillBackward0": "dim=p.dim index=a1",
    "IndexFillBackward1": "dim=p.dim index=a1",
    "ScatterReduceBackward0": "dim=p.dim include_self=p.include_self index=a1 reduce=p.reduce "
                              "result=r self=a0 src=a2",
    "MaskedScatterBackward0": "mask=a1 source_sym_sizes=sz2",
    "EmbeddingBackward0": "indices=a1 padding_idx=p.padding_idx!u "
                          "scale_grad_by_freq=p.scale_grad_by_freq sparse=p.sparse|False "
                          "weight_sym_argsize_0=sz0.0",
    # losses
    "MseLossBackward0": "reduction=p.reduction!r self=a0 target=a1",
    "SmoothL1LossBackward0": "beta=p.beta reduction=p.reduction!r self=a0 target=a1",
    "HuberLossBackward0": "delta=p.delta reduction=p.reduction!r self=a0 target=a1",
    "BinaryCrossEntropyBackward0": "reduction=p.reduction!r self=a0 target=a1 weight=a2",
    # (index_select is ember's indexing primitive with a key: its dim is the one given)
    "IndexSelectBackward0": "dim=p.dim index=a1 " + _SIZES,
    "IndexBackward0": "indices=key1 " + _SIZES,
    "IndexPutBackward0": "accumulate=p.accumulate indices=key2",
}


def _parse(spec: str) -> tuple:
    return tuple(tuple(item.split("=", 1)) for item in spec.split())


TABLE = {name: _parse(spec) for name, spec in _TABLE_SPEC.items()}
# Renamed nodes whose inputs and parameters are those of PyTorch's op (unbind's pieces under
# a transform are `select`s of the same input, with its `dim`; an in-place view's node is
# its view's, renamed as PyTorch numbers the in-place overload)
_RENAMED_OK = frozenset({"UnbindBackward0", "SqueezeBackward3", "SqueezeBackward4",
                         "SqueezeBackward5", "UnsqueezeBackward1", "TransposeBackward1",
                         "AsStridedBackward1"})
_MISSING = object()


def saved_attribute(node: Node, name: str):
    """The value PyTorch's node of this class shows as `name` (`_saved_self` ...; with
    `_raw_saved_self`, the SavedTensor holding it); an AttributeError for a name that class
    does not have."""
    shown = _shown(node)
    if shown is not None and name.startswith("_saved_") and name[7:] in shown:
        return _shown_value(node, shown[name[7:]])
    raw = name.startswith("_raw_saved_")
    source = _source(node, name[len("_raw_saved_" if raw else "_saved_"):]) \
        if raw or name.startswith("_saved_") else None
    if source is None or raw and not _is_tensor_source(source):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    if raw:
        return SavedTensor(node, source)
    given = node._given
    if given is not None:
        attr = name[len("_saved_"):]
        if attr in given and not _is_tensor_source(source):
            return _as_given(given[attr], _resolve(node, source), attr)
    return _saved_hooks.unpack(_resolve(node, source))


def _shown(node: Node) -> dict | None:
    """What `ops.registry.shows` gave a composite's node to show, if anything."""
    return getattr(node, "__dict__", {}).get("_shown")


def _shown_value(node: Node, value):
    """A value a composite's node shows (`ops.registry.shows`): a kept tensor (gone after
    backward, as a saved one is) or an argument as given."""
    from ..ops.registry import ShownKept

    if value.__class__ is ShownKept:
        if node._kept is None:
            _freed()
        return node._kept[value][0]
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

    __slots__ = ("_node", "_source")

    def __init__(self, node: Node, source: str) -> None:
        self._node = node
        self._source = source

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        node, src = self._node, self._source
        if node._saved is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved variables after "
                "calling backward.")
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
        if saved is None:
            _freed()
        i = int(source[1:])
        value = saved[i] if i < len(saved) else None
        if value.__class__ is Metadata:  # (its shape kept, the tensor not saved)
            return None
        if kind == "a" and isinstance(value, bool | int | float | complex):
            return _wrapped(value)
        return value
    if source.startswith("key"):
        return _indices(node, int(source[3:]))
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


def _indices(node: Node, first: int):
    """The `indices` PyTorch's index / index_put node shows: a tuple with each index tensor
    where the key has one and None for each whole dim before it (None where this key does
    not map one to one onto PyTorch's: ember joined some of them)."""
    from ..ops.index_key import TENSOR_SLOT

    saved = node._saved
    if saved is None:
        _freed()
    key = (node._params or {}).get("key", ())
    tensors = iter(saved[first:])
    out = []
    for k in key:
        if k is TENSOR_SLOT:
            out.append(_saved_hooks.unpack(next(tensors, None)))
        elif isinstance(k, slice) and k == slice(None):
            out.append(None)
        else:
            return None
    return tuple(out) if len(saved) - first == sum(k is TENSOR_SLOT for k in key) else None


def _shape_fact(node: Node, source: str):
    """`szN` / `numel0` / `ndN`: what PyTorch keeps of input N's shape (`szN.D`, one size of
    it, is read by `_resolve`)."""
    i = int(source[-1])
    meta = node._in_meta[i] if node._in_meta and i < len(node._in_meta) else None
    saved = node._saved[i] if node._saved is not None and i < len(node._saved) else None
    saved = _saved_hooks.unpack(saved)
    shape = meta[0] if meta is not None else \
        tuple(saved.shape) if saved is not None else (node._params or {}).get("in_shape")
    if shape is None:
        return None
    if source.startswith("nd"):
        return len(shape)
    return math.prod(shape) if source.startswith("numel") else tuple(shape)


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
    raw = {f"_raw_saved_{attr}" for attr, src in entry if _is_tensor_source(src)}
    return sorted(own | raw | {f"_saved_{attr}" for attr, _ in entry})


def _freed():
    from .engine import retain_graph_error

    raise retain_graph_error()
