"""What a primitive is, and the tables that say how each transform treats it.

A `Primitive` is a named piece of math and nothing else. Everything a transform needs
to know about it lives in a table keyed by the primitive:

- `kernels[backend]`: backend arrays in, a fresh backend array out (`cpu` is NumPy;
  a CUDA backend fills `kernels["cuda"]` where CuPy cannot run the NumPy kernel);
- `meta_rules`: input tensors' metadata in, `(shape, dtype[, strides])` out, no data read
  (the `meta` device runs this);
- `vjp_rules`: the derivative, written in ember ops (`defvjp`, next to the op);
- `jvp_rules`: forward mode, `rule(primals, tangents, out, **params)` -> the output's
  tangent (a tuple for several outputs), written in ember ops and linear in `tangents`
  (None where an input's tangent is zero or the input is a constant);
  `BY_VJP` instead says the tangent is the VJP transposed (`jvp_by_vjp`, with the reason);
- `lower_rules`: the compiler, a pointwise member's C expression over its operands
  (`"{0} + {1}"`, `{T}` the C type): a chain of them is fused into one generated loop
  (`deflower`, next to the op; `ember.graph.fuse`);
- `batch_rules`: vmap, `rule(args, dims, /, **params)` -> `(out, out_dim)`, where `dims[i]`
  is the axis of `args[i]` that is the batch (None: not batched; args and dims are taken
  positionally, since a primitive's own params may be called `dims`); `BY_LOOP` instead
  says the transform runs the primitive once per batch element and stacks the results.
  A family's batch rule gets the call's params with `fn`; its members' vjp and jvp rules
  get them without.

`NOT_DIFFERENTIABLE` in `vjp_rules` and `jvp_rules` (via `nondifferentiable`) marks a
primitive with no derivative, so a missing rule and a deliberate "none" can be told apart.

A `Family` is one primitive for many functions of the same kind of math (every unary
elementwise function is `unary` with `fn=exp`, `fn=log` ...): the function is a static
param, a `Member` holding its own kernel, meta rule, node name and derivatives. The
family's table entries delegate to the member (`ByParam`), and a transform that treats
the whole family alike (vmap of an elementwise map) needs one rule for all of it.
"""

from __future__ import annotations

from collections.abc import Callable

MISSING = object()  # no rule registered: backward through the node raises
NOT_DIFFERENTIABLE = None  # the vjp / jvp entry of a primitive that has no derivative
BY_LOOP = "by loop"  # the batch entry of a primitive vmap runs once per element
BY_VJP = "by vjp"  # the jvp entry of a primitive whose tangent comes from its VJP, transposed

primitives: list[Primitive] = []  # every primitive, in the order defined
kernels: dict[str, dict] = {"cpu": {}, "cuda": {}}
meta_rules: dict = {}
vjp_rules: dict = {}
jvp_rules: dict = {}
batch_rules: dict = {}
lower_rules: dict = {}
lower_ulps: dict = {}  # member -> how many ulps its C expression may differ from its kernel
lower_terms: dict = {}  # member -> (params it holds for, dtype names, C support code)


class Primitive:
    """A named primitive op. `impl` is how eager evaluation runs it: the standard kernel
    path by default, or a special one (views alias their input; in-place ops write into it).
    """

    __slots__ = ("name", "grad_name", "n_outputs", "impl", "__weakref__")
    writes_first = False  # x[key] = value: writes into its first argument, returns nothing

    def __init__(self, name: str, kernel: Callable | None, meta: Callable | None = None, *,
                 grad_name: str | Callable | None = None, n_outputs: int = 1,
                 impl: Callable | None = None) -> None:
        from .dispatch import eval_kernel

        self.name = name
        self.n_outputs = n_outputs
        # PyTorch's node name for this primitive's grad_fn (`MulBackward0`), or, where
        # PyTorch names the node after the overload called, `grad_name(args, params)`
        self.grad_name = grad_name or "".join(
            p.capitalize() for p in name.split("_")) + "Backward0"
        self.impl = eval_kernel if impl is None else impl
        if kernel is not None:
            kernels["cpu"][self] = kernel
        if meta is not None:
            meta_rules[self] = meta
        primitives.append(self)

    @property
    def kernel(self) -> Callable | None:
        """The CPU (NumPy) kernel."""
        return kernels["cpu"].get(self)

    @property
    def meta(self) -> Callable | None:
        return meta_rules.get(self)

    @property
    def cuda_kernel(self) -> Callable | None:
        return kernels["cuda"].get(self)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class VJPRule:
    """The derivative of a primitive: one function per input, and what they read.

    Each function is called as `rule(g, out, *inputs, **params)` and returns the
    gradient for its input; `reads[i]` lists the input positions rule i uses, so a
    node saves only those (and `out` only when `save_output`: True for every output,
    or a tuple of the output positions read, the others passed to the rule as None).
    With `cache_output` the output is kept as a shortcut only, for a rule that can do
    without it: an in-place op on it since makes the rule get None, not the engine raise
    (PyTorch's formula reads the input alone, so there an in-place op on the output trains).
    """

    __slots__ = ("fns", "reads", "save_output", "wanted", "joint", "in_shape", "cache_output",
                 "optional", "metadata")

    def __init__(self, fns, reads, save_output: bool | tuple, joint: Callable | None = None,
                 in_shape: bool | int = False, cache_output: bool = False,
                 optional: int = 0, metadata: tuple | None = None) -> None:
        self.fns = fns
        self.optional = optional  # how many trailing inputs a call may leave out (a bias)
        self.reads = reads
        # per rule, the input positions it reads the shape and strides of only (not saved:
        # the node keeps a `graph.Metadata` of each, which no in-place op can make stale)
        self.metadata = metadata
        self.save_output = save_output or cache_output
        self.wanted: dict = {}  # which inputs are needed -> the positions to save (a cache)
        self.joint = joint  # one function for all inputs (see defvjp_joint), or None
        # the rules take `in_shape=`, the shape of the input at this position (True: the first)
        self.in_shape = None if in_shape is False else 0 if in_shape is True else in_shape
        self.cache_output = cache_output


def defvjp(prim: Primitive, *fns: Callable | None, reads=None, save_output: bool | tuple = False,
           in_shape: bool | int = False, cache_output: bool = False, optional: int = 0,
           metadata=None):
    """Register the VJP of `prim`: `fns[i](g, out, *inputs, **params)` is input i's gradient.

    A None entry marks an input that is not differentiable. `reads` (a tuple per
    input of input positions) limits what is saved; by default every rule may read
    every input. With `in_shape`, the rules also get `in_shape=`, the shape the first
    input had (metadata the node keeps, so a rule that undoes a reduction or a view
    needs neither the input itself nor a param that repeats its shape); `in_shape=i`, the
    shape input i had (None when it needs no gradient: then no rule of its is called). With
    `cache_output` (a single output), `out` is a shortcut the rules may be given as None
    (see `VJPRule`). `optional`: how many trailing inputs a call may leave out (a
    convolution's bias); the rules of the inputs present are given only those.
    `metadata` (a tuple per input of input positions): inputs whose shape and strides alone
    the rule reads, as PyTorch's nodes keep `self_sym_sizes` / `self_sym_strides` rather than
    the tensor; where the rule does not also read their values they are not saved.
    """
    n = len(fns)
    if reads is None:
        reads = tuple(tuple(range(n)) for _ in range(n))
    _put(vjp_rules, prim, VJPRule(fns, tuple(tuple(r) for r in reads), save_output,
                                  in_shape=in_shape, cache_output=cache_output,
                                  optional=optional, metadata=metadata))


def defvjp_joint(prim: Primitive, fn: Callable, differentiable, *, reads=None,
                 save_output: bool | tuple = False, optional: int = 0) -> None:
    """Register a VJP computing every input's gradient in one call, for a fused kernel whose
    gradients share work: `fn(g, out, *inputs, needs=..., **params)` returns one gradient
    (or None) per input; `needs[i]` says whether input i wants one. `differentiable[i]`
    False marks an input with no derivative; `optional` as for `defvjp`."""
    n = len(differentiable)
    fns = tuple(fn if d else None for d in differentiable)
    if reads is None:
        reads = tuple(tuple(range(n)) for _ in range(n))
    _put(vjp_rules, prim, VJPRule(fns, tuple(tuple(r) for r in reads), save_output, joint=fn,
                                  optional=optional))


class _Each:
    """The same entry for every input, however many (a variadic primitive's `fns` and
    `reads`; a fixed arity's are tuples)."""

    __slots__ = ("item",)

    def __init__(self, item) -> None:
        self.item = item

    def __getitem__(self, i):
        return self.item


def defvjp_variadic(prim: Primitive, piece: Callable) -> None:
    """Register the VJP of a primitive of any number of inputs (`cat`, `stack`): input i's
    gradient is `piece(g, i, **params)`, a slice of the incoming gradient that reads no
    input."""
    def joint(g, out, *inputs, needs, **params):
        return [piece(g, i, **params) if need else None for i, need in enumerate(needs)]

    _put(vjp_rules, prim, VJPRule(_Each(joint), _Each(()), False, joint=joint))


def data_dependent(prim: Primitive) -> None:
    """Mark `prim` as having no meta rule because its output shape depends on the input's
    values (nonzero, unique ...): on `meta` it raises, saying so."""
    def meta(*args, **params):
        raise NotImplementedError(
            f"{prim.name}: the output shape depends on the input's values, so it cannot run "
            "on the 'meta' device")

    meta.data_dependent = True
    if prim.__class__ is Member:
        prim.meta = meta
    else:
        meta_rules[prim] = meta


def nondifferentiable(prim: Primitive) -> None:
    """Mark `prim` as having no derivative (comparisons, integer ops, argmax ...): no VJP,
    and its outputs carry no tangent in forward mode."""
    _put(vjp_rules, prim, NOT_DIFFERENTIABLE)
    _put(jvp_rules, prim, NOT_DIFFERENTIABLE)


def derivative_not_implemented(prim: Primitive, aten: str | Callable[[dict], str],
                               differentiable: tuple[bool, ...]) -> None:
    """Mark `prim` as one PyTorch has no derivative formula for (bincount's weights,
    histogram, heaviside): its float outputs still require grad, under a `NotImplemented`
    node whose backward raises, and forward mode refuses it. `differentiable[i]` says
    whether input i gets an edge (an index input does not). `aten` names the ATen op, or
    reads it from the call's params (one primitive standing for several ATen ops)."""
    def name(params) -> str:
        return aten(params) if callable(aten) else aten

    def vjp(g, out, *inputs, _inplace=False, **params):
        # (`_inplace`: set on the node by an in-place call, whose ATen overload ends in _)
        raise RuntimeError(f"derivative for aten::{name(params)}{'_' * _inplace} is not "
                           f"implemented")

    def jvp(primals, tangents, out, _inplace=False, **params):
        raise NotImplementedError(f"Trying to use forward AD with aten::{name(params)}"
                                  f"{'_' * _inplace} that does not support it.")

    _refuse_derivatives(prim, "NotImplemented", vjp, jvp, aten if isinstance(aten, str)
                        else prim.name, differentiable)


def mark_inplace(node) -> None:
    """Tell a node of `derivative_not_implemented` that an in-place call made it: PyTorch's
    refusal then names the in-place overload ("derivative for aten::floor_divide_ ...")."""
    if node is not None and node.__class__.__name__ == "NotImplemented" and \
            isinstance(getattr(node, "_params", None), dict):
        node._params = {**node._params, "_inplace": True}


def derivative_not_defined(prim: Primitive, aten: Callable[[dict], str],
                           differentiable: tuple[bool, ...]) -> None:
    """Mark `prim` as one whose PyTorch derivative entry says "not implemented" (unique,
    unique_consecutive): its float outputs require grad under a node named after the ATen op
    (`aten(params)`: '_unique2' gives Unique2Backward0), whose backward and forward mode both
    raise NotImplementedError in PyTorch's words."""
    def vjp(g, out, *inputs, **params):
        raise NotImplementedError(f"the derivative for '{aten(params)}' is not implemented.")

    def jvp(primals, tangents, out, **params):
        raise NotImplementedError(
            f"Trying to use forward AD with {aten(params)} that does not support it because it "
            f"has not been implemented yet.\nPlease file an issue to PyTorch at "
            f"https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so "
            f"that we can prioritize its implementation or submit a PR adding the "
            f"implementation to derivatives.yaml")

    def node(args, params) -> str:
        return "".join(w.capitalize() for w in aten(params).strip("_").split("_")) + "Backward0"

    _refuse_derivatives(prim, node, vjp, jvp, prim.name, differentiable)


def _refuse_derivatives(prim: Primitive, node, vjp, jvp, aten: str,
                        differentiable: tuple[bool, ...]) -> None:
    jvp.not_implemented = aten  # (for the rule checks: a refusal, not a derivative)
    prim.grad_name = node
    n = len(differentiable)
    _put(vjp_rules, prim, VJPRule(tuple(vjp if d else None for d in differentiable),
                                  ((),) * n, False))
    _put(jvp_rules, prim, jvp)


def defjvp(prim: Primitive, rule: Callable) -> None:
    """Register the forward-mode rule of `prim`: `rule(primals, tangents, out, **params)`
    returns the output's tangent, linear in `tangents` (None entries are zero)."""
    _put(jvp_rules, prim, rule)


def deflinear(prim: Primitive) -> None:
    """Register the JVP of a primitive linear in its tensor inputs (views, sums, add):
    the tangent is the primitive itself applied to the tangents."""
    from .dispatch import bind

    target = prim.family if prim.__class__ is Member else prim

    extra = {"fn": prim} if target is not prim else {}

    def jvp(primals, tangents, out, **params):
        args = [t if t is not None else (zeros_like(p) if hasattr(p, "_shape") else p)
                for p, t in zip(primals, tangents)]
        return bind(target, *args, **extra, **params)

    jvp.linear = True
    _put(jvp_rules, prim, jvp)


def jvp_by_vjp(prim: Primitive, reason: str) -> None:
    """Say that forward mode gets `prim`'s tangent by transposing its VJP (two reverse
    passes: `ember.autograd.jvp_from_vjp`), and why it has no rule of its own (a fused
    backward kernel, a recursion no closed form expresses)."""
    _put(jvp_rules, prim, BY_VJP)
    vjp_jvp_reasons[prim] = reason


vjp_jvp_reasons: dict = {}  # primitive (or member) -> why its jvp is its VJP transposed


def deflower(prim, template: str, *, ulps: int = 0, params: dict | None = None,
             dtypes: tuple = ("float32", "float64"), support: str = "") -> None:
    """Register the C expression of a pointwise member (float32 and float64 operands):
    `{0}`, `{1}` ... are its operands, `{T}` the C type. By default it must compute what the
    member's NumPy kernel computes, rounding for rounding (the compiler's fused loops are
    tested bit for bit against the kernels); a transcendental from `ember_math.h` says by
    `ulps` how far from the kernel it may land (tested too, with the same edge values).
    `params`: the node's other params it holds for (a node with others is not fused);
    `dtypes`: the dtypes it holds for; `support`: C definitions the expression calls."""
    lower_rules[prim] = template
    lower_ulps[prim] = ulps
    lower_terms[prim] = (dict(params or {}), tuple(dtypes), support)


def defbatch(prim: Primitive, rule: Callable) -> None:
    """Register the vmap rule of `prim`: `rule(args, dims, **params)` -> `(out, out_dim)`."""
    batch_rules[prim] = rule


def batch_by_loop(prim: Primitive, reason: str) -> None:
    """Say that vmap runs `prim` once per batch element and stacks the results, and why
    (the output's shape depends on the data, or no vectorised form exists yet)."""
    batch_rules[prim] = BY_LOOP
    loop_reasons[prim] = reason


loop_reasons: dict = {}  # primitive -> why vmap loops over it

random_ops: set = set()  # primitives (or family members) whose values come from a draw


def mark_random(prim) -> None:
    """Say that `prim` (a primitive or a family member) carries a random draw: vmap refuses
    it under `randomness="error"`, as PyTorch does."""
    random_ops.add(prim)


def zeros_like(x):
    """Zeros shaped and typed as tensor `x`, made by the op layer (plugged in from above)."""
    return _op_layer.zeros_like(x)


class _OpLayer:
    zeros_like = None  # set by ember.ops.creation


_op_layer = _OpLayer()


# --- families: one primitive for many functions of one kind ------------------------------

class ByParam:
    """A family's entry in a rule table: the rule is the one its member (params["fn"])
    registered."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: dict = {}

    def pick(self, params: dict):
        return self.table.get(params["fn"], MISSING)


class Family(Primitive):
    """One primitive for a kind of math whose functions differ only in their pointwise
    math (`unary(x, fn=exp)`): kernel and meta delegate to the member, `vjp` and `jvp`
    are the member's, and `batch` is one rule for the family. The node name is the
    member's (`ExpBackward0`). Eager evaluation is `dispatch.eval_member`, which calls the
    member's kernel directly."""

    __slots__ = ("members",)

    def __init__(self, name: str, *, n_outputs: int = 1, impl: Callable | None = None) -> None:
        from .dispatch import eval_member

        super().__init__(name, _family_kernel, _family_meta, n_outputs=n_outputs,
                         impl=eval_member if impl is None else impl,
                         grad_name=_member_grad_name)
        self.members: dict[str, Member] = {}
        vjp_rules[self] = ByParam()
        jvp_rules[self] = ByParam()


def _family_kernel(*arrays, fn, **params):
    return fn.kernel(*arrays, **params)


def _family_meta(*args, fn, **params):
    return fn.meta(*args, **params)


def _member_grad_name(args, params) -> str:
    return params["fn"].grad_name


class Member:
    """One function of a `Family`: its name, kernel, meta rule and node name. Register its
    derivatives with `defvjp(member, ...)` / `defjvp(member, ...)` as for a primitive; they
    are called with the call's params less `fn` (`rule_params`)."""

    __slots__ = ("name", "family", "kernel", "meta", "grad_name", "__weakref__")

    def __init__(self, family: Family, name: str, kernel: Callable, meta: Callable, *,
                 grad_name: str | None = None) -> None:
        if name in family.members:
            raise ValueError(f"{family.name} already has a member named {name}")
        self.name = name
        self.family = family
        self.kernel = kernel
        self.meta = meta
        self.grad_name = grad_name or "".join(
            p.capitalize() for p in name.split("_")) + "Backward0"
        family.members[name] = self

    def __repr__(self) -> str:
        return f"<{self.family.name} {self.name}>"


def _put(table: dict, prim, rule) -> None:
    """`table[prim] = rule`, or into the family's entry when `prim` is a family member."""
    if prim.__class__ is Member:
        table[prim.family].table[prim] = rule
    else:
        table[prim] = rule


def rule_params(prim, params: dict) -> dict:
    """The params a rule of `prim` is called with: a family member's rules get the call's
    params without `fn` (each member knows which function it is)."""
    if prim.__class__ is Family:
        return {k: v for k, v in params.items() if k != "fn"}
    return params


def vjp_rule(prim, params: dict):
    """The VJP rule a call of `prim` with `params` uses (a family's is its member's)."""
    rule = vjp_rules.get(prim, MISSING)
    return rule.pick(params) if rule.__class__ is ByParam else rule


def jvp_rule(prim, params: dict):
    """The JVP rule a call of `prim` with `params` uses (MISSING when none is registered)."""
    rule = jvp_rules.get(prim, MISSING)
    return rule.pick(params) if rule.__class__ is ByParam else rule
