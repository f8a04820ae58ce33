"""vmap: a function of one example, run on a batch at once, by a `BatchInterpreter`.

Inside `vmap(f)(xs)`, `f` sees `BatchedTensor`s: tensors with the shape, dtype and
methods of one example, whose data is the whole batch (`_value`, with the batch along
axis `_bdim`). Every op `f` binds reaches the interpreter, which hands the batched
values and their batch axes to the primitive's `batch` rule (one call for the whole
batch), or, for a primitive marked `BY_LOOP` or without a rule, runs it once per example
and stacks. Levels nest: each vmap is one level, and a `BatchedTensor` of an outer level
is an ordinary tensor to an inner one.
"""

from __future__ import annotations

import functools
import warnings

from .. import _tensor as T
from .._core import (
    BY_LOOP,
    MISSING,
    Interpreter,
    batch_rules,
    bind,
    interpret,
    loop_reasons,
    random_ops,
)
from .._core.primitive import Family
from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from .._view import numel
from ..autograd.function import FunctionPrimitive
from ..ops.draws import draw_like_p, draw_p, like_strides
from ..ops.join import cat, stack
from ..ops.random_ops import sample_p
from ..ops.registry import InplacePrimitive
from ..random import get_rng_state, set_rng_state
from ..utils._pytree import tree_flatten, tree_unflatten
from ._function_vmap import check_vmappable, records, run_generated, run_own_rule
from ._inplace_words import unbatched_self_error

# PyTorch's words for reading a batched tensor's values inside vmap
_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
         "calling .item() on a Tensor, please try to rewrite what you're doing with other "
         "operations. If error is occurring somewhere inside PyTorch internals, please file a "
         "bug report.")
_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                 "control flow. We don't support that yet, please file an issue at "
                 "https://github.com/pytorch/pytorch/issues .")
_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"


class BatchedTensor(Tensor):
    """One example's view of a batch inside vmap (see the module docstring). Its data is
    only reachable through ops: reading values (`item()`, `bool()`, `tolist()`) raises, in
    PyTorch's words."""

    __slots__ = ()
    _is_wrapper = True

    def _array(self):
        raise RuntimeError(_NO_STORAGE)

    def item(self):  # (float(), int(), complex() and indexing with it come here too)
        raise RuntimeError(_ITEM)

    def tolist(self):
        self._array()

    def numpy(self, *, force: bool = False):
        self._array()

    def __bool__(self):
        raise RuntimeError(_CONTROL_FLOW)

    def __format__(self, spec: str) -> str:
        if not self._shape:  # (PyTorch formats a 0-d tensor through item(): it raises)
            self.item()
        return object.__format__(self, spec)

    def __repr__(self) -> str:
        return (f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, "
                f"value={self._value!r})")

    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._value.requires_grad = value
        self._requires_grad = value

    @property
    def grad_fn(self):
        return self._value.grad_fn

    def _rebatched(self, value: Tensor) -> BatchedTensor:
        """`value`, laid out as this tensor's data, batched as this tensor is."""
        return batched(value, self._bdim, self._level)

    def _physical(self, t: Tensor) -> Tensor:
        """Tensor `t` of this tensor's (one-example) shape, laid out as this tensor's data:
        its own batch at this level moved to this tensor's batch axis, or broadcast there."""
        if isinstance(t, BatchedTensor) and t._level == self._level:
            return t._value.movedim(t._bdim, self._bdim)
        return t.unsqueeze(self._bdim).expand(*self._value.shape)


def batched(value: Tensor, bdim: int, level: int) -> BatchedTensor:
    """`value` seen as a batch along axis `bdim` at vmap level `level`."""
    t = T._new(BatchedTensor)
    shape = value._shape
    t._shape = T.Size(shape[:bdim] + shape[bdim + 1:])
    stride = value.stride()
    t._stride = tuple(stride[:bdim] + stride[bdim + 1:])
    t._np = None
    t._storage = None
    t._offset = 0
    t._dtype = value._dtype
    t._vc = value._vc
    t._base = None
    t._requires_grad = value.requires_grad
    t._grad_fn = None
    t._grad = None
    t._ag = None
    t._value = value
    t._bdim = bdim
    t._level = level
    return t


_warned: set = set()
_AS_ANY_OP = object()  # BatchInterpreter._random: no policy of its own, batch the op as any


def _own(cls: type) -> bool:
    """Whether a custom Function is one of ember's (the MLX face's custom functions and
    collectives): those keep their batching rules, where a user's follows PyTorch's.
    (Under `ember.run` the MLX face's classes carry MLX's module paths, `mlx.core`.)"""
    return cls.__module__.startswith(("ember.", "mlx."))


class BatchInterpreter(Interpreter):
    """One vmap level: batch size `size`, the random-op policy `randomness`. `torch_level`
    is the level PyTorch's messages name: it counts every transform open around this one
    (grad and jvp too), this one included."""

    def __init__(self, level: int, size: int, randomness: str,
                 torch_level: int | None = None) -> None:
        self.level = level
        self.size = size
        self.randomness = randomness
        self.torch_level = level if torch_level is None else torch_level

    def _refuse_random(self):
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap")

    def _random(self, prim, args: tuple, params: dict):
        """A random op under this level's policy, or _AS_ANY_OP where it batches as any op.

        Draws (`draw`, `draw_like`) happen in the op, so the policy sets their size:
        'different' draws the whole batch at once, as PyTorch (a factory gets the batch dim
        in front; a draw like a batched tensor is laid out as its batch, so the values
        follow its memory order); 'same' draws one example's worth, shared by the batch. An
        in-place fill of an unbatched tensor cannot hold a draw per example and raises, as
        PyTorch. Samplers fed by noise (`sample`) batch as any op; under 'same' a batched
        input to one raises, as PyTorch; a sampler drawing in its kernel (a `generator`
        param: poisson) runs once per example under 'different' when nothing is batched.
        """
        if self.randomness == "error":
            self._refuse_random()
        same = self.randomness == "same"
        vals, dims = self._unwrap(args)
        bdim = next((d for d in dims if d is not None), None)
        if prim is draw_p:
            if same:
                return self.lower(prim, args, params)
            shape, stride = params["shape"], params["stride"]
            if stride is not None:
                stride = (max(numel(shape), 1),) + stride
            out = self.lower(prim, (), {**params, "shape": (self.size,) + shape,
                                        "stride": stride})
            return batched(out, 0, self.level)
        if prim is draw_like_p:
            if bdim is None:
                if same:
                    return self.lower(prim, args, params)
                if not params["dense"]:
                    raise RuntimeError(
                        "vmap: Cannot ask for different inplace randomness on an unbatched "
                        "tensor. This will appear like same randomness. If this is necessary "
                        "for your usage, please file an issue with functorch.")
                like = args[0]  # a fresh tensor per example: a factory of the batch
                return self._random(draw_p, (), {
                    "shape": like._shape, "stride": like_strides(like),
                    "dtype": params["dtype"], "make": params["make"]})
            if same:  # one example's draw, laid out as one example of the batch
                one = self.below(lambda: vals[0].select(bdim, 0))
                return self.lower(prim, (one,), params)
            return _AS_ANY_OP
        if prim is sample_p:
            if same and bdim is not None:
                raise RuntimeError("Vmap does not currently support same randomness with a "
                                   "batched tensor input. Please file an issue with functorch")
            if not same and bdim is None and "generator" in params:
                out, odim = self._loop(prim, vals, dims, params)
                return self._wrap(out, odim)
        return _AS_ANY_OP

    def _unwrap(self, args) -> tuple[list, list]:
        vals, dims = [], []
        for a in args:
            if isinstance(a, BatchedTensor) and a._level == self.level:
                vals.append(a._value)
                dims.append(a._bdim)
            else:
                vals.append(a)
                dims.append(None)
        return vals, dims

    def _wrap(self, out, odim):
        if isinstance(out, tuple):
            odims = odim if isinstance(odim, tuple) else (odim,) * len(out)
            return tuple(self._wrap(o, d) for o, d in zip(out, odims))
        return out if odim is None or not isinstance(out, Tensor) else \
            batched(out, odim, self.level)

    def process(self, prim, args: tuple, params: dict):
        if prim in random_ops or params.get("fn") in random_ops:
            out = self._random(prim, args, params)
            if out is not _AS_ANY_OP:
                return out
        if isinstance(prim, FunctionPrimitive) and not _own(prim.fn_cls):
            return self._function(prim, args, params)
        vals, dims = self._unwrap(args)
        if all(d is None for d in dims):
            return self.lower(prim, args, params)
        if isinstance(prim, InplacePrimitive):
            return self._inplace(prim, args, vals, dims, params)
        if prim.writes_first:
            return self._write(prim, args, vals, dims, params)
        out, odim = self._batched(prim, vals, dims, params)
        return self._wrap(out, odim)

    def _function(self, prim, args, params):
        """A custom autograd.Function (see `_function_vmap`)."""
        cls = prim.fn_cls
        check_vmappable(cls)
        vals, dims = self._unwrap(args)
        if all(d is None for d in dims):
            return self.lower(prim, args, params)
        if records(args):  # (one graph node per example: run it once per example)
            out, odim = self._loop(prim, vals, dims, params)
            return self._wrap(out, odim)
        if cls.generate_vmap_rule:
            return run_generated(cls, args, params)
        return run_own_rule(self, cls, vals, dims, params)

    def _write(self, prim, args, vals, dims, params):
        """`x[key] = value` inside vmap: each example's write into its own slice of x's
        batch (x must be batched when anything written is)."""
        if dims[0] is None:
            raise unbatched_self_error(prim, args, dims, params, self.size, self.torch_level)

        def run():
            for b in range(self.size):
                bind(prim, *[v.select(d, b) if d is not None else v
                             for v, d in zip(vals, dims)], **params)

        self.below(run)

    def _batched(self, prim, vals, dims, params):
        rule = batch_rules.get(prim, MISSING)
        if rule is MISSING or rule is BY_LOOP:
            if rule is MISSING and prim not in _warned:
                _warned.add(prim)
                name = params["fn"].name if isinstance(prim, Family) else prim.name
                warnings.warn(f"vmap: there is no batching rule for '{name}'; it runs once "
                              "per example and the results are stacked (slow).",
                              stacklevel=user_stacklevel())
            return self._loop(prim, vals, dims, params)
        return self.below(rule, tuple(vals), tuple(dims), **params)

    def _loop(self, prim, vals, dims, params):
        def run():
            outs = []
            for b in range(self.size):
                sl = [v.select(d, b) if d is not None else v for v, d in zip(vals, dims)]
                outs.append(bind(prim, *sl, **params))
            if outs[0] is None:  # (an op that only writes into its inputs)
                return None, None
            if isinstance(outs[0], tuple):
                return tuple(stack([o[k] for o in outs]) for k in range(len(outs[0]))), 0
            return stack(outs), 0

        return self.below(run)

    def _inplace(self, prim, args, vals, dims, params):
        """`x.op_(y)` inside vmap: the functional op, batched, written into `x`'s batch."""
        if dims[0] is None:
            raise unbatched_self_error(prim, args, dims, params, self.size, self.torch_level)
        out, odim = self._batched(prim.base, vals, dims, params)

        def write():
            src = out.movedim(odim, dims[0]) if odim is not None else out
            vals[0].copy_(src)

        self.below(write)
        return args[0]


def _get_name(func) -> str:
    """The name PyTorch's vmap messages give `func`."""
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def spec_str(spec, indent: int = 0) -> str:
    """A pytree spec as PyTorch's `TreeSpec` prints it (its messages quote specs)."""
    if spec.type is None:
        return "*"
    if spec.context is None:
        name, context = spec.type.__name__, "None"
    elif issubclass(spec.type, dict):
        name, context = spec.type.__name__, repr(list(spec.context))
    else:  # a namedtuple, its class the context
        name, context = "namedtuple", repr(spec.context)
    indent += 2
    children = (",\n" + " " * indent).join(spec_str(c, indent) for c in spec.children)
    return f"TreeSpec({name}, {context}, [{children}])"


def _broadcast_to_and_flatten(prefix, spec) -> list | None:
    """`prefix` (in_dims or out_dims: a tree whose leaves stand for whole subtrees of the
    tree of structure `spec`) as one entry per leaf of that tree; None when the structures
    do not match (PyTorch's pytree `_broadcast_to_and_flatten`)."""
    out: list = []

    def go(p, s) -> bool:
        ps = tree_flatten(p)[1]
        if ps.type is None:
            out.extend([p] * s.num_leaves)
            return True
        if ps.type is not s.type or len(ps.children) != len(s.children):
            return False
        if issubclass(s.type, dict):
            if set(p) != set(s.context):
                return False
            return all(go(p[k], c) for k, c in zip(s.context, s.children))
        return all(go(c, cs) for c, cs in zip(p, s.children))

    return out if go(prefix, spec) else None


def _process_inputs(func, in_dims, args) -> tuple:
    """`(batch size, one in_dim per leaf (non-negative), the leaves, the args' spec)`, the
    inputs checked as PyTorch's `_process_batched_inputs` checks them, in its words."""
    where = f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_get_name(func)})(<inputs>): got no inputs. Maybe you forgot "
                         "to add inputs, or you are trying to vmap over a function with no "
                         "inputs. The latter is unsupported.")
    leaves, spec = tree_flatten(args)
    dims = _broadcast_to_and_flatten(in_dims, spec)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {spec_str(tree_flatten(in_dims)[1])} but "
                         f"inputs has structure {spec_str(spec)}.")
    for i, (x, d) in enumerate(zip(leaves, dims)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if isinstance(d, int) and not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if d is not None and (d < -x.dim() or d >= x.dim()):
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {x.dim()} so expected in_dim to "
                             f"satisfy -{x.dim()} <= in_dim < {x.dim()}.")
        if d is not None and d < 0:
            dims[i] = d % x.dim()
    sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(n != sizes[0] for n in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], dims, leaves, spec


def _check_out_dims(out_dims, func) -> None:
    """out_dims must be an int or a tree of ints and Nones (checked per call, as PyTorch)."""
    if isinstance(out_dims, int):
        return
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an "
                "int, None or a python collection of ints representing where in the outputs "
                "the vmapped dimension should appear.")


_depth = [0]  # vmap levels open now


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """`func` of one example, mapped over axis `in_dims` of its inputs; the results are
    stacked along `out_dims`. `chunk_size` runs that many examples at a time. A random op
    inside raises under `randomness="error"`, draws once for the whole batch under "same"
    and once per example under "different" (see BatchInterpreter._random)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        size, ldims, leaves, spec = _process_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run_or_loop(func, kwargs, leaves, ldims, spec, size, out_dims, randomness)
        parts = []
        # under 'same', every chunk draws what the first did (PyTorch restores the default
        # generator's state before each chunk); under 'different' the chunks draw in turn
        state = get_rng_state() if randomness == "same" else None
        for start in range(0, size, chunk_size):
            if state is not None:
                set_rng_state(state)
            n = min(chunk_size, size - start)
            cl = [x.narrow(d % x.dim(), start, n) if d is not None else x
                  for x, d in zip(leaves, ldims)]
            parts.append(_run_or_loop(func, kwargs, cl, ldims, spec, n, out_dims, randomness))
        p_leaves = [tree_flatten(p)[0] for p in parts]
        od = _out_dims_list(out_dims, parts[0], func)
        return tree_unflatten([cat([pl[k] for pl in p_leaves], dim=od[k])
                               for k in range(len(p_leaves[0]))], tree_flatten(parts[0])[1])

    return wrapped


def _out_dims_list(out_dims, out, func) -> list:
    """One out_dim per leaf of the output `out` (PyTorch's `_unwrap_batched`: a single
    Tensor output takes an int, None or a 1-tuple)."""
    spec = tree_flatten(out)[1]
    if isinstance(out, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        flat = None
    else:
        flat = _broadcast_to_and_flatten(out_dims, spec)
    if flat is None:
        raise ValueError(
            f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            "compatible with the structure of `outputs`. out_dims has structure "
            f"{spec_str(tree_flatten(out_dims)[1])} but outputs has structure {spec_str(spec)}.")
    return flat


class ForwardAboveVmap(Exception):
    """A reverse transform ran under a forward level that sits above vmaps (`jacfwd`'s
    tangents around `jacrev`), and its tape holds values batched by some of those vmaps
    (`levels`): the tape's backward ops would happen below them, where the forward level
    cannot see them. `hessian` then takes reverse over reverse; a vmap whose level is in
    `levels` runs its function once per example."""

    def __init__(self, levels) -> None:
        self.levels = set(levels)
        super().__init__(
            f"forward mode (jvp, jacfwd) over a reverse transform (grad, vjp, jacrev) whose "
            f"tape holds values batched by vmap levels {sorted(self.levels)} below the "
            "forward level")


def _run_or_loop(func, kwargs, leaves, ldims, spec, size, out_dims, randomness):
    try:
        return _run(func, kwargs, leaves, ldims, spec, size, out_dims, randomness)
    except ForwardAboveVmap as e:
        if _depth[0] + 1 not in e.levels:  # (this vmap's level: _run has closed it)
            raise
        if "forward-over-reverse" not in _warned:
            _warned.add("forward-over-reverse")
            warnings.warn("vmap: forward mode over a reverse transform of a batched value "
                          "(vmap of hessian or of jacfwd(jacrev)) runs once per example and "
                          "the results are stacked (slow).", stacklevel=user_stacklevel())
        outs = []
        for b in range(size):
            sl = [x.select(d, b) if d is not None else x for x, d in zip(leaves, ldims)]
            outs.append(func(*tree_unflatten(sl, spec), **kwargs))
        o_leaves = [tree_flatten(o)[0] for o in outs]
        od = _out_dims_list(out_dims, outs[0], func)
        res = [stack([ol[k] for ol in o_leaves], dim=od[k]) if od[k] is not None
               else o_leaves[0][k] for k in range(len(o_leaves[0]))]
        return tree_unflatten(res, tree_flatten(outs[0])[1])


def _other_transforms_open() -> int:
    """How many grad-like and jvp-like transforms run now (PyTorch numbers its levels
    across all transforms)."""
    # (imported here: those modules build on this one)
    from . import _forward, _reverse

    return _reverse._depth[0] + _forward._levels[0]


def _run(func, kwargs, leaves, ldims, spec, size, out_dims, randomness):
    _depth[0] += 1
    level = _depth[0]
    interp = BatchInterpreter(level, size, randomness, level + _other_transforms_open())
    name = _get_name(func)
    try:
        with interpret(interp):
            wrapped = [batched(x, d, level) if d is not None else x
                       for x, d in zip(leaves, ldims)]
            out = func(*tree_unflatten(wrapped, spec), **kwargs)
        o_leaves, o_spec = tree_flatten(out)
        od = _out_dims_list(out_dims, out, func)
        res = []
        for o, d in zip(o_leaves, od):
            mine = isinstance(o, BatchedTensor) and o._level == level
            if d is None:
                if mine:
                    raise ValueError(f"vmap({name}, ...): `{name}` can not return a "
                                     "BatchedTensor when out_dim is None")
                res.append(o)
            elif not isinstance(o, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(o)}. Did you mean to set out_dims= to None for "
                                 "output?")
            elif mine:
                v = o._value
                res.append(v.movedim(o._bdim, d) if d != o._bdim else v)
            else:  # the same for every example: broadcast it over the batch
                res.append(o.unsqueeze(d).expand(*_shape_with(o.shape, d, size)))
    finally:
        _depth[0] -= 1
    return tree_unflatten(res, o_spec)


def _shape_with(shape, d: int, size: int) -> tuple:
    s = list(shape)
    s.insert(d % (len(s) + 1), size)
    return tuple(s)


__all__ = ["BatchInterpreter", "BatchedTensor", "ForwardAboveVmap", "batched", "loop_reasons",
           "vmap"]
