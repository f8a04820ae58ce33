"""ember.func: PyTorch's function transforms (`torch.func`).

`grad`, `grad_and_value`, `vjp` and `jacrev` run on the tape (reverse mode); `jvp`,
`linearize` and `jacfwd` on a `JVPInterpreter` pushed onto the dispatch stack (forward
mode, one pass, each primitive's `jvp` rule); `hessian` is forward over reverse. They
compose (`grad(grad(f))`, `jacfwd(jacrev(f))`, `jvp(grad(f), ...)`). `functional_call`
makes a module a function of its weights. `vmap` runs a function of one example on a
batch with a `BatchInterpreter` (each primitive's `batch` rule);
`replace_all_batch_norm_modules_` drops BatchNorm running statistics so vmap can run them;
`functionalize` runs a function on copies of its inputs so its mutations stay inside.
"""

from ._batch_norm import replace_all_batch_norm_modules_
from ._forward import jvp, linearize
from ._functionalize import functionalize
from ._jacobian import hessian, jacfwd, jacrev
from ._module import functional_call, stack_module_state
from ._reverse import grad, grad_and_value, vjp
from ._vmap import vmap

__all__ = ["functional_call", "functionalize", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_", "stack_module_state",
           "vjp", "vmap"]
