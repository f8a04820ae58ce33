"""What a primitive is, and the tables that say how each transform treats it.

A `Primitive` is a named piece of math and nothing else. Everything a transform needs
to know about it lives in a table keyed by the primitive:

- `kernels[backend]`: backend arrays in, a fresh backend array out (`cpu` is NumPy;
  a CUDA backend fills `kernels["cuda"]` where CuPy cannot run the NumPy kernel);
- `meta_rules`: input tensors' metadata in, `(shape, dtype[, strides])` out, no data read
  (the `meta` device runs this);
- `vjp_rules`: the derivative, written in ember ops (`defvjp`, next to the op);
- `jvp_rules` and `batch_rules`: forward mode and vmap (filled as those transforms land).

`NOT_DIFFERENTIABLE` in `vjp_rules` (via `nondifferentiable`) marks a primitive with no
derivative, so a missing rule and a deliberate "none" can be told apart.
"""

from __future__ import annotations

from collections.abc import Callable

MISSING = object()  # no rule registered: backward through the node raises
NOT_DIFFERENTIABLE = None  # the vjp_rules entry of a primitive that has no derivative

primitives: list[Primitive] = []  # every primitive, in the order defined
kernels: dict[str, dict] = {"cpu": {}, "cuda": {}}
meta_rules: dict = {}
vjp_rules: dict = {}
jvp_rules: dict = {}
batch_rules: dict = {}


class Primitive:
    """A named primitive op. `impl` is how eager evaluation runs it: the standard kernel
    path by default, or a special one (views alias their input; in-place ops write into it).
    """

    __slots__ = ("name", "grad_name", "n_outputs", "impl", "__weakref__")

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
    """

    __slots__ = ("fns", "reads", "save_output", "wanted", "joint", "in_shape")

    def __init__(self, fns, reads, save_output: bool | tuple, joint: Callable | None = None,
                 in_shape: bool = False) -> None:
        self.fns = fns
        self.reads = reads
        self.save_output = save_output
        self.wanted: dict = {}  # which inputs are needed -> the positions to save (a cache)
        self.joint = joint  # one function for all inputs (see defvjp_joint), or None
        self.in_shape = in_shape  # the rules take `in_shape=`, the first input's shape


def defvjp(prim: Primitive, *fns: Callable | None, reads=None, save_output: bool | tuple = False,
           in_shape: bool = False):
    """Register the VJP of `prim`: `fns[i](g, out, *inputs, **params)` is input i's gradient.

    A None entry marks an input that is not differentiable. `reads` (a tuple per
    input of input positions) limits what is saved; by default every rule may read
    every input. With `in_shape`, the rules also get `in_shape=`, the shape the first
    input had (metadata the node keeps, so a rule that undoes a reduction or a view
    needs neither the input itself nor a param that repeats its shape).
    """
    n = len(fns)
    if reads is None:
        reads = tuple(tuple(range(n)) for _ in range(n))
    vjp_rules[prim] = VJPRule(fns, tuple(tuple(r) for r in reads), save_output,
                              in_shape=in_shape)


def defvjp_joint(prim: Primitive, fn: Callable, differentiable, *, reads=None,
                 save_output: bool | tuple = False) -> None:
    """Register a VJP computing every input's gradient in one call, for a fused kernel whose
    gradients share work: `fn(g, out, *inputs, needs=..., **params)` returns one gradient
    (or None) per input; `needs[i]` says whether input i wants one. `differentiable[i]`
    False marks an input with no derivative."""
    n = len(differentiable)
    fns = tuple(fn if d else None for d in differentiable)
    if reads is None:
        reads = tuple(tuple(range(n)) for _ in range(n))
    vjp_rules[prim] = VJPRule(fns, tuple(tuple(r) for r in reads), save_output, joint=fn)


def data_dependent(prim: Primitive) -> None:
    """Mark `prim` as having no meta rule because its output shape depends on the input's
    values (nonzero, unique ...): on `meta` it raises, saying so."""
    def meta(*args, **params):
        raise NotImplementedError(
            f"{prim.name}: the output shape depends on the input's values, so it cannot run "
            "on the 'meta' device")

    meta.data_dependent = True
    meta_rules[prim] = meta


def nondifferentiable(prim: Primitive) -> None:
    """Mark `prim` as having no derivative (comparisons, integer ops, argmax ...)."""
    vjp_rules[prim] = NOT_DIFFERENTIABLE
