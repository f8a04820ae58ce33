"""ember.autograd: grad modes, the graph, the backward engine, custom Functions.

- grad_mode: no_grad / enable_grad / set_grad_enabled / inference_mode (thread-local)
- graph: Node (`grad_fn`), AccumulateGrad, `record` (what every op calls), hooks
- engine: the reverse walk over the graph; entry_points: `backward` and `grad`
- inplace: in-place ops under autograd, CopySlices for writes through views
- function: `Function`, custom ops with a user-written backward
- gradcheck / gradgradcheck, functional (jacobian, hessian, vjp, jvp, vhp, hvp),
  anomaly (detect_anomaly, set_detect_anomaly)
"""

from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck


def __getattr__(name):
    # The engine and Function need the Tensor class, which itself imports grad_mode
    # from this package; loading them on first use keeps that import cycle open.
    import importlib

    lazy = {
        "backward": ("engine", "backward"),
        "grad": ("engine", "grad"),
        "Function": ("function", "Function"),
        "FunctionCtx": ("function", "FunctionCtx"),
        "once_differentiable": ("function", "once_differentiable"),
        "set_detect_anomaly": ("anomaly", "set_detect_anomaly"),
        "detect_anomaly": ("anomaly", "detect_anomaly"),
        "is_anomaly_enabled": ("anomaly", "is_anomaly_enabled"),
        "is_anomaly_check_nan_enabled": ("anomaly", "is_anomaly_check_nan_enabled"),
        "functional": ("functional", None),
        "function": ("function", None),
        "graph": ("graph", None),
        "anomaly_mode": ("anomaly", None),
        "forward_ad": ("forward_ad", None),
        "profiler": ("profiler", None),
        "Variable": ("variable", "Variable"),
        "variable": ("variable", None),
    }
    if name not in lazy:
        from ..compat import missing

        raise missing(__name__, name)
    mod, attr = lazy[name]
    m = importlib.import_module(f".{mod}", __name__)
    value = m if attr is None else getattr(m, attr)
    globals()[name] = value
    return value
