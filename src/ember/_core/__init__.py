"""The core: what a primitive is, the rule tables, and the one dispatch point, `bind`.

Every op in ember ends in `bind(primitive, *inputs, **params)`. `bind` hands the
call to the innermost active interpreter (`dispatch.py`): eager evaluation at the
bottom, which runs the backend's kernel and lets autograd record a node; a
transform (a tracer, a recorder, later vmap and jvp) pushes its own interpreter
with `interpret(...)` and sees every op. What a transform needs to know about a
primitive sits in one table per transform, keyed by primitive (`primitive.py`).

This package sits below both the op layer and autograd: it imports only the tensor
layer beneath it, and autograd plugs its recorder in from above (`set_autograd`).
"""

from .. import _grad_mode as grad_mode
from .dispatch import Interpreter, bind, current_interpreter, interpret, set_autograd
from .primitive import (
    MISSING,
    NOT_DIFFERENTIABLE,
    Primitive,
    VJPRule,
    batch_rules,
    data_dependent,
    defvjp,
    defvjp_joint,
    jvp_rules,
    kernels,
    meta_rules,
    nondifferentiable,
    primitives,
    vjp_rules,
)

__all__ = [
    "MISSING", "NOT_DIFFERENTIABLE", "Interpreter", "Primitive", "VJPRule", "batch_rules",
    "data_dependent",
    "bind", "current_interpreter", "defvjp", "defvjp_joint", "grad_mode", "interpret",
    "jvp_rules", "kernels", "meta_rules", "nondifferentiable", "primitives", "set_autograd",
    "vjp_rules",
]
