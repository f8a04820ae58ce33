"""Direct lowerings: nodes a program runs as one NumPy call written into its code instead
of through their kernel's Python (argument checks, dispatch on layouts and dtypes that the
recording already settled).

Each rule returns the lines computing a node, or None (the node then calls its kernel).
A rule claims a node only where its lines do what the kernel does for that node's
recorded operands, the same NumPy calls in the same order, so results are bit for bit
the kernel's: views are the same windows on the same memory, products the same BLAS call.
"""

from __future__ import annotations

import numpy as np

from .._core.primitive import Family
from ..ops import views as _views
from ..ops._parallel import SMALL_PRODUCT
from ..ops.copy import clone_p
from ..ops.matmul import addmm_p, matmul_p
from .ir import Node, Value, np_dtype

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_TRANSPOSES = (_views.transpose, _views.t)
_RESHAPES = (_views.view_, _views.unsafe_view, _views.reshape_alias)


def _np(v: Value):
    return np_dtype(v.dtype)


def _matrix(v) -> bool:
    return v.__class__ is Value and len(v.shape) == 2 and _np(v) in _FLOATS


def products(nodes: list[Node]) -> list[int]:
    """The flops of each matrix product the nodes do (matmul, addmm)."""
    out = []
    for n in nodes:
        if n.prim is matmul_p or n.prim is addmm_p:
            a, b = n.args[-2], n.args[-1]
            if a.__class__ is Value and b.__class__ is Value and a.shape and b.shape:
                k = a.shape[-1]
                rows = int(np.prod(a.shape[:-1])) if len(a.shape) > 1 else 1
                cols = b.shape[-1] if len(b.shape) > 1 else 1
                out.append(2 * k * rows * cols)
    return out


def serial_products(nodes: list[Node]) -> bool:
    """Whether every product of the nodes is small enough that the kernel would run it on
    the calling thread with OpenBLAS held to one thread (`ops._parallel.blas`): then the
    program holds OpenBLAS to one thread once around its whole run, and products are
    plain `np.matmul` calls."""
    return all(f < SMALL_PRODUCT for f in products(nodes))


def lines(n: Node, out: list[str], name_of, env: dict, serial: bool) -> list[str] | None:
    """The node's lines (`out` are its outputs' names), or None."""
    prim = n.prim
    if prim.__class__ is Family and prim is _views.view_p:
        return _view(n, out, name_of, env)
    if prim is matmul_p and serial:
        a, b = n.args
        if _matrix(a) and _matrix(b) and a.dtype is b.dtype and not n.params.get("conj"):
            env["_matmul"] = np.matmul
            return [f"{out[0]} = _matmul({name_of(a)}, {name_of(b)})  # matmul"]
    if prim is addmm_p and serial:
        inp, a, b = n.args
        p = n.params
        if _matrix(a) and _matrix(b) and a.dtype is b.dtype and inp.__class__ is Value \
                and inp.dtype is a.dtype and p.get("beta") == 1 and p.get("alpha") == 1 \
                and not p.get("batch_sum") and p["beta"].__class__ is int \
                and p["alpha"].__class__ is int:
            env["_matmul"], env["_add"] = np.matmul, np.add
            o = out[0]
            return [f"{o} = _matmul({name_of(a)}, {name_of(b)})  # addmm",
                    f"_add({o}, {name_of(inp)}, out={o})"]
    return None


def _view(n: Node, out: list[str], name_of, env: dict) -> list[str] | None:
    fn = n.params["fn"]
    x = n.args[0]
    if x.__class__ is not Value or len(n.args) != 1:
        return None
    if fn in _TRANSPOSES and x.shape:
        p = n.params
        return [f"{out[0]} = {name_of(x)}.swapaxes({p['dim0']}, {p['dim1']})  # view.{fn.name}"]
    if fn is _views.permute:
        return [f"{out[0]} = {name_of(x)}.transpose({tuple(n.params['dims'])!r})"
                "  # view.permute"]
    if fn in _RESHAPES:
        # a C-contiguous array's reshape is a view with the strides the view rule gives;
        # anything else goes to the kernel (the same window, or its error)
        env["_reshape_view"] = _reshape_view
        k = f"kv{len(env)}"
        env[k] = fn.kernel
        return [f"{out[0]} = _reshape_view({name_of(x)}, {tuple(n.params['size'])!r}, {k})"
                f"  # view.{fn.name}"]
    return None


def _reshape_view(a: np.ndarray, size: tuple, kernel):
    if a.flags.c_contiguous:
        return a.reshape(size)
    try:
        return kernel(a, size=size)
    except RuntimeError:
        # (the recording saw a layout this view fits; a kernel that laid its result out
        # otherwise than its meta rule says leaves a copy as the only way to these values)
        return np.reshape(a, size)


def elide_copies(outputs: list[Value], nodes: list[Node]) -> tuple[list[Node], dict]:
    """A contiguous `clone` of a value that nothing else reads, made by a node that returns
    a fresh C-order array (a product, a reduction, a fused loop ...), is that value itself:
    the copy would hold the same bits. Returns the nodes kept and {clone's value: its
    source}. Only for sources whose producers are known to return fresh arrays."""
    uses: dict = {}
    for n in nodes:
        for a in n.args:
            if a.__class__ is Value:
                uses[a] = uses.get(a, 0) + 1
    outputs = set(outputs)
    same: dict = {}
    kept = []
    for n in nodes:
        if n.prim is clone_p and n.params.get("dtype") is None and len(n.args) == 1:
            (src,) = n.args
            if src.__class__ is Value and src.node is not None and uses.get(src) == 1 \
                    and src not in outputs and _fresh(src.node) and \
                    src.stride == n.outs[0].stride:
                same[n.outs[0]] = src
                continue
        kept.append(n)
    return kept, same


def _fresh(n: Node) -> bool:
    """Whether node `n`'s kernel returns a new C-order array of its own."""
    from ..ops.activation import gelu_backward_p, threshold_backward_p
    from ..ops.reduce import SUM, SUM_DIMS
    from ..ops.softmax import softmax_backward_p, softmax_p

    return n.prim in (matmul_p, addmm_p, softmax_p, softmax_backward_p) or \
        n.params.get("fn") in (SUM, SUM_DIMS, threshold_backward_p, gelu_backward_p)
