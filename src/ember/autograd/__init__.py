"""ember.autograd: grad modes, the graph, the backward engine, custom Functions."""

from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)


def __getattr__(name):
    # The engine and Function need the Tensor class, which itself imports grad_mode
    # from this package; loading them on first use keeps that import cycle open.
    import importlib

    lazy = {
        "backward": ("engine", "backward"),
        "grad": ("engine", "grad"),
        "Function": ("function", "Function"),
        "gradcheck": ("gradcheck", "gradcheck"),
        "gradgradcheck": ("gradcheck", "gradgradcheck"),
        "set_detect_anomaly": ("anomaly", "set_detect_anomaly"),
        "detect_anomaly": ("anomaly", "detect_anomaly"),
        "functional": ("functional", None),
        "graph": ("graph", None),
        "forward_ad": ("forward_ad", None),
        "Variable": ("variable", "Variable"),
    }
    if name not in lazy:
        raise AttributeError(f"module 'ember.autograd' has no attribute '{name}'")
    mod, attr = lazy[name]
    m = importlib.import_module(f".{mod}", __name__)
    value = m if attr is None else getattr(m, attr)
    globals()[name] = value
    return value
