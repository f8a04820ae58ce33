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
from .dispatch import (
    Interpreter,
    bind,
    current_interpreter,
    forward_mode_active,
    interpret,
    set_autograd,
)
from .primitive import (
    BY_LOOP,
    BY_VJP,
    MISSING,
    NOT_DIFFERENTIABLE,
    ByParam,
    Family,
    Member,
    Primitive,
    VJPRule,
    batch_by_loop,
    batch_rules,
    data_dependent,
    defbatch,
    defjvp,
    deflinear,
    deflower,
    defvjp,
    defvjp_joint,
    defvjp_variadic,
    derivative_not_defined,
    derivative_not_implemented,
    jvp_by_vjp,
    jvp_rule,
    jvp_rules,
    kernels,
    loop_reasons,
    lower_rules,
    lower_terms,
    lower_ulps,
    mark_random,
    meta_rules,
    nondifferentiable,
    primitives,
    random_ops,
    rule_params,
    vjp_jvp_reasons,
    vjp_rule,
    vjp_rules,
)

__all__ = [
    "BY_LOOP", "BY_VJP", "MISSING", "NOT_DIFFERENTIABLE", "ByParam", "Family", "Interpreter",
    "Member", "Primitive", "VJPRule", "batch_by_loop", "batch_rules", "bind",
    "current_interpreter", "data_dependent", "defbatch", "defjvp", "deflower", "deflinear",
    "defvjp", "derivative_not_defined", "derivative_not_implemented",
    "defvjp_joint", "defvjp_variadic", "forward_mode_active",
    "grad_mode", "interpret", "jvp_by_vjp", "jvp_rule", "jvp_rules", "kernels", "lower_rules",
    "lower_terms", "lower_ulps", "loop_reasons",
    "mark_random", "meta_rules", "nondifferentiable", "primitives", "random_ops",
    "rule_params", "set_autograd", "vjp_rule", "vjp_jvp_reasons", "vjp_rules",
]
