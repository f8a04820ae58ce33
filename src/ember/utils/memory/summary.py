"""`summary(model, input_size=...)`: what a model costs in memory, counted on the meta device.

Called as torchinfo's `summary` is (`input_size`, `input_data`, `batch_dim`, `dtypes` for
the inputs' dtypes, `depth`, `verbose`), plus `optimizer=`. Nothing is allocated: the
parameters and inputs are stood in for by `meta` tensors of the same shapes, the
forward runs on them (through `functional_call`, so the model itself is untouched), and
the optimizer takes one step on meta parameters. Counted, for float32, bfloat16 and
float16 copies of the model:

- parameters and their gradients (one per trainable parameter, in its dtype);
- optimizer state: whatever the optimizer keeps after a step (Adam's two moments and
  its step counts; SGD's momentum buffers; nothing for plain SGD);
- activations: the tensors the forward saved for backward, each storage once, not
  counting the parameters, buffers and inputs they alias.

int8 and 4-bit are counted for the weights alone (1 byte and half a byte per parameter;
there is no 4-bit dtype). Bytes print in GB (10^9 bytes, as the course texts count: a
7B-parameter model is 28 GB in float32) with GiB (2^30 bytes) beside.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ... import _dtype
from ..._tensor import Tensor
from ..._view import storage_extent
from ...autograd.grad_mode import enable_grad
from ...autograd.graph import AccumulateGrad
from ...func import functional_call
from ...nn.parameter import Parameter
from ...ops.creation import empty, zeros_like
from ...optim.optimizer import Optimizer

GB = 10**9
GiB = 2**30

# The dtypes of the table: (name, bytes per parameter, the dtype a training copy uses).
TRAINING_DTYPES = (("float32", 4, _dtype.float32), ("bfloat16", 2, _dtype.bfloat16),
                   ("float16", 2, _dtype.float16))
WEIGHT_ONLY = (("int8", 1), ("int4", 0.5))  # quantized weights; no int4 dtype exists


@dataclass(frozen=True)
class Breakdown:
    """Bytes of one copy of the model; None where it was not asked for (no input, no
    optimizer) or makes no sense (gradients of int8 weights)."""

    parameters: float
    gradients: float | None = None
    optimizer_state: float | None = None
    activations: float | None = None

    @property
    def total(self) -> float:
        return sum(v for v in (self.parameters, self.gradients, self.optimizer_state,
                               self.activations) if v is not None)


@dataclass(frozen=True)
class LayerRow:
    name: str
    kind: str
    depth: int
    output_shape: list | None
    params: int | None  # None: a container with no parameters of its own


@dataclass
class MemorySummary:
    """The result of `summary`: counts, per-dtype bytes, the layer table; `str()` prints it."""

    model_name: str
    total_params: int
    trainable_params: int
    layers: list[LayerRow]
    by_dtype: dict[str, Breakdown]  # float32, bfloat16, float16, int8, int4
    input_shapes: list = field(default_factory=list)
    input_bytes: int = 0
    optimizer_name: str | None = None
    optimizer_keys: tuple = ()

    total_param_bytes: int = 0  # the parameters as they are now, in their own dtypes

    def __str__(self) -> str:
        return "\n".join(_render(self))

    __repr__ = __str__


def summary(model, input_size: Sequence | None = None, input_data=None, batch_dim: int | None
            = None, dtypes: Sequence | None = None, device=None, optimizer=None,
            depth: int = 3, verbose: int | None = None, **kwargs) -> MemorySummary:
    """Count `model`'s memory on the meta device; print the table (unless `verbose=0`)
    and return it.

    `input_size`: one shape or a list of shapes (the forward's positional inputs), with a
    batch dim inserted at `batch_dim` if given; or `input_data`, tensors whose shapes and
    dtypes are used. `dtypes`: the inputs' dtypes (float32 by default); floating inputs
    follow the model's copy to bfloat16 and float16. `optimizer`: an optimizer class, a
    callable taking the parameters (`functools.partial(Adam, lr=...)`), or an optimizer
    instance (its class and param groups are reused). `device` is accepted for
    torchinfo's signature; the count always runs on `meta`. `kwargs` go to the forward.
    """
    named = list(model.named_parameters())  # (a tied weight once, under its first name)
    buffers = dict(model.named_buffers(remove_duplicate=False))
    total = sum(p.numel() for _, p in named)
    trainable = sum(p.numel() for _, p in named if p.requires_grad)
    inputs = _input_specs(input_size, input_data, batch_dim, dtypes)

    by_dtype: dict[str, Breakdown] = {}
    layers: list[LayerRow] = []
    opt_name, opt_keys = None, ()
    for name, _, dtype in TRAINING_DTYPES:
        params = {n: _meta_like(p, dtype, p.requires_grad) for n, p in named}
        bufs = {n: _meta_like(b, dtype, False) for n, b in buffers.items()}
        param_bytes = sum(_nbytes(p) for p in params.values())
        grad_bytes = sum(_nbytes(p) for p in params.values() if p.requires_grad)
        activations = None
        if inputs is not None:
            args = [_meta_input(shape, dt, dtype) for shape, dt in inputs]
            hooks = _LayerHooks(model, depth) if not layers else None
            try:
                activations = _saved_bytes(model, params, bufs, args, kwargs)
            finally:
                if hooks is not None:
                    layers = hooks.finish()
        state_bytes = None
        if optimizer is not None:
            state_bytes, opt_name, opt_keys = _optimizer_state(optimizer, named, params)
        by_dtype[name] = Breakdown(param_bytes, grad_bytes, state_bytes, activations)
    for name, size in WEIGHT_ONLY:
        by_dtype[name] = Breakdown(total * size)
    if not layers:
        layers = _static_layers(model, depth)

    result = MemorySummary(
        model_name=type(model).__name__, total_params=total, trainable_params=trainable,
        layers=layers, by_dtype=by_dtype,
        input_shapes=[list(s) for s, _ in inputs or ()],
        input_bytes=sum(_numel(s) * dt.itemsize for s, dt in inputs or ()),
        optimizer_name=opt_name, optimizer_keys=opt_keys,
        total_param_bytes=sum(_nbytes(p) for _, p in named))
    if verbose is None or verbose > 0:
        print(result)
    return result


# --- standing in with meta tensors -------------------------------------------------------

def _meta_like(t: Tensor, dtype, requires_grad: bool) -> Tensor:
    dt = dtype if t.is_floating_point() else t.dtype
    out = empty(tuple(t.shape), dtype=dt, device="meta")
    return out.requires_grad_(requires_grad) if requires_grad else out


def _nbytes(t: Tensor) -> int:
    return t.numel() * t.element_size()


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _input_specs(input_size, input_data, batch_dim, dtypes):
    """[(shape, dtype)] of the forward's inputs, or None when none were given."""
    if input_data is not None:
        data = input_data if isinstance(input_data, (list, tuple)) else [input_data]
        for x in data:
            if not isinstance(x, Tensor):
                raise TypeError(f"summary(): input_data holds a {type(x).__name__}; pass "
                                "tensors (or input_size= for shapes)")
        return [(tuple(x.shape), x.dtype) for x in data]
    if input_size is None:
        return None
    sizes = [input_size] if all(isinstance(d, int) for d in input_size) else list(input_size)
    for s in sizes:
        if not all(isinstance(d, int) and d >= 0 for d in s):
            raise ValueError(f"summary(): input_size entries must be shapes of non-negative "
                             f"ints, got {s!r}")
    if batch_dim is not None:
        sizes = [tuple(s[:batch_dim]) + (1,) + tuple(s[batch_dim:]) for s in sizes]
    if dtypes is None:
        dtypes = [_dtype.float32] * len(sizes)
    if len(dtypes) != len(sizes):
        raise ValueError(f"summary(): {len(dtypes)} dtypes for {len(sizes)} inputs")
    return [(tuple(s), dt) for s, dt in zip(sizes, dtypes)]


def _meta_input(shape, dtype, model_dtype) -> Tensor:
    return empty(shape, dtype=model_dtype if dtype.is_floating_point else dtype, device="meta")


# --- what a forward saves for backward ------------------------------------------------------

def _storage_key(t: Tensor):
    """One key per storage: every view of a storage shares its version counter."""
    return id(t._vc) if t._vc is not None else id(t)


def _saved_bytes(model, params: dict, bufs: dict, args: list, kwargs: dict) -> int:
    """Bytes of the distinct storages the forward's graph saved for backward."""

    with enable_grad():
        out = functional_call(model, {**params, **bufs}, tuple(args), kwargs)
    outputs = [t for t in _tensors_in(out) if t.grad_fn is not None]
    held = {_storage_key(t) for t in (*params.values(), *bufs.values(), *args)}
    sizes: dict = {}
    seen: set[int] = set()
    stack = [t.grad_fn for t in outputs]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen or isinstance(fn, AccumulateGrad):
            continue
        seen.add(id(fn))
        for t in _saved_tensors(fn):
            key = _storage_key(t)
            if key not in held:
                sizes[key] = max(sizes.get(key, 0), _storage_bytes(t))
        stack.extend(n for n, _ in fn.next_functions)
    return sum(sizes.values())


def _saved_tensors(fn) -> list[Tensor]:
    saved = list(getattr(fn, "_saved", None) or ())
    out = getattr(fn, "_out", None)
    saved.extend(out if isinstance(out, tuple) else (out,))
    return [t for t in saved if isinstance(t, Tensor)]


def _storage_bytes(t: Tensor) -> int:
    storage = t._storage
    if storage is not None:
        return storage.nbytes()
    # (a fresh result a node kept without its Storage object: it is its own whole storage)
    return storage_extent(t.shape, t.stride(), t.storage_offset()) * t.element_size()


def _tensors_in(obj) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tensors_in(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _tensors_in(v)]
    return []


# --- the optimizer's state ------------------------------------------------------------------

def _optimizer_state(optimizer, named, params: dict):
    """(bytes of state after one step on meta parameters, the optimizer's name, its keys)."""

    leaves = {n: Parameter(p.detach(), requires_grad=True) for n, p in params.items()
              if p.requires_grad}
    by_id = {id(p): leaves[n] for n, p in named if n in leaves}
    if isinstance(optimizer, Optimizer):
        groups = [{**{k: v for k, v in g.items() if k != "params"},
                   "params": [by_id[id(p)] for p in g["params"] if id(p) in by_id]}
                  for g in optimizer.param_groups]
        opt = type(optimizer)(groups)
    elif isinstance(optimizer, Callable):
        opt = optimizer(list(leaves.values()))
    else:
        raise TypeError(f"summary(): optimizer must be an optimizer, its class or a callable "
                        f"taking the parameters, not {type(optimizer).__name__}")
    for p in leaves.values():
        p.grad = zeros_like(p)
    opt.step()
    sizes: dict = {}
    keys: dict = {}
    for state in opt.state.values():
        for k, v in state.items():
            for t in _tensors_in(v):
                sizes[_storage_key(t)] = _nbytes(t)
                keys[k] = None
    return sum(sizes.values()), type(opt).__name__, tuple(keys)


# --- the layer table ------------------------------------------------------------------------

class _LayerHooks:
    """Forward hooks that note each module's output shape during the first meta forward."""

    def __init__(self, model, depth: int) -> None:
        self.rows: dict[int, list] = {}
        self.order = []
        self.handles = []
        for name, mod, level in _modules(model, depth):
            row = [name, type(mod).__name__, level, None, _own_params(mod, level, depth)]
            self.order.append(row)
            self.handles.append(mod.register_forward_hook(self._hook(row)))

    @staticmethod
    def _hook(row):
        def hook(module, args, output):
            shapes = [list(t.shape) for t in _tensors_in(output)]
            row[3] = shapes[0] if len(shapes) == 1 else shapes or None
        return hook

    def finish(self) -> list[LayerRow]:
        for h in self.handles:
            h.remove()
        return [LayerRow(*row) for row in self.order]


def _modules(model, depth: int):
    """(name, module, depth) for the model and its submodules down to `depth`, in order."""
    stack = [("", model, 0)]
    while stack:
        name, mod, level = stack.pop()
        yield name or type(mod).__name__, mod, level
        if level < depth:
            children = [(f"{name}.{n}" if name else n, m, level + 1)
                        for n, m in mod.named_children()]
            stack.extend(reversed(children))


def _own_params(mod, level: int, depth: int) -> int | None:
    """A row's parameter count: everything below a module the table does not open; a
    container's own parameters (None for "--" when it has none, as torchinfo prints)."""
    if level >= depth or not any(True for _ in mod.children()):
        return sum(p.numel() for p in mod.parameters())
    own = sum(p.numel() for p in mod.parameters(recurse=False))
    return own or None


def _static_layers(model, depth: int) -> list[LayerRow]:
    return [LayerRow(name, type(mod).__name__, level, None, _own_params(mod, level, depth))
            for name, mod, level in _modules(model, depth)]


# --- printing -------------------------------------------------------------------------------

_UNITS = ((10**9, "GB", 2**30, "GiB"), (10**6, "MB", 2**20, "MiB"), (10**3, "kB", 2**10, "KiB"),
          (1, "bytes", 1, "bytes"))


def _unit(largest: float) -> tuple:
    """The decimal unit the table counts in: the largest that the biggest total reaches
    (GB for a 7B model, as the course counts), with its binary twin."""
    return next((u for u in _UNITS if largest >= u[0]), _UNITS[-1])


def _fmt(n: float | None, scale: int) -> str:
    if n is None:
        return "-"
    return f"{n / scale:,.2f}" if scale > 1 else f"{n:,g}"


def _render(s: MemorySummary) -> list[str]:
    width = 92
    rule, thin = "=" * width, "-" * width
    lines = [rule, f"{s.model_name}: memory counted on the meta device (nothing allocated)",
             rule, f"{'Layer (type)':<44}{'Output Shape':<30}{'Param #':>18}", thin]
    for row in s.layers:
        label = row.kind if row.depth == 0 else f"{row.name.rsplit('.', 1)[-1]} ({row.kind})"
        label = ("  " * row.depth + label)[:43]
        shape = "--" if row.output_shape is None else str(row.output_shape)
        count = "--" if row.params is None else f"{row.params:,}"
        lines.append(f"{label:<44}{shape[:29]:<30}{count:>18}")
    lines += [rule, f"Total params: {s.total_params:,}",
              f"Trainable params: {s.trainable_params:,}",
              f"Non-trainable params: {s.total_params - s.trainable_params:,}"]
    if s.input_shapes:
        shapes = ", ".join(str(sh) for sh in s.input_shapes)
        lines.append(f"Input: {shapes} ({s.input_bytes:,} bytes)")
    dec, dec_name, binary, bin_name = _unit(max(b.total for b in s.by_dtype.values()))
    lines += [rule, f"Weights by dtype ({dec_name} = {dec:,} bytes, {bin_name} = "
                    f"{binary:,} bytes)" if dec > 1 else "Weights by dtype",
              f"{'':<12}{'bytes/param':>12}{dec_name:>16}{bin_name:>16}"]
    per = [(n, b) for n, b, _ in TRAINING_DTYPES] + list(WEIGHT_ONLY)
    for name, b in per:
        label = "4-bit" if name == "int4" else name
        value = s.by_dtype[name].parameters
        lines.append(f"{label:<12}{b:>12g}{_fmt(value, dec):>16}{_fmt(value, binary):>16}")
    lines += [thin, f"Training memory by dtype, {dec_name}",
              f"{'':<12}{'parameters':>12}{'gradients':>12}{'optimizer':>12}"
              f"{'activations':>13}{'total ' + dec_name:>14}{'total ' + bin_name:>14}"]
    for name, _, _ in TRAINING_DTYPES:
        b = s.by_dtype[name]
        lines.append(f"{name:<12}{_fmt(b.parameters, dec):>12}{_fmt(b.gradients, dec):>12}"
                     f"{_fmt(b.optimizer_state, dec):>12}{_fmt(b.activations, dec):>13}"
                     f"{_fmt(b.total, dec):>14}{_fmt(b.total, binary):>14}")
    notes = []
    if s.optimizer_name:
        notes.append(f"optimizer: {s.optimizer_name} ({', '.join(s.optimizer_keys) or 'no state'})")
    else:
        notes.append("optimizer: not given (optimizer=)")
    notes.append("activations: tensors saved for backward by one forward" if s.input_shapes
                 else "activations: not counted without input_size= or input_data=")
    lines += [thin, *notes, rule]
    return lines
