"""Argument families for indexing: take_along_dim, unravel_index, the scatter /
index_copy family, in-place view ops and NumPy / range index keys. Each family takes
(g, op, form, bad) and returns (args, expr, tags), as in catalogue.py."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .catalogue import Op, _dims_arg, _index_tensor, call
from .inputs import Gen, Lit, Tensor


@dataclass(frozen=True)
class NpArray:
    """A NumPy integer array passed as-is to both libraries (an index key)."""

    values: np.ndarray

    def build(self, lib):
        return self.values.copy()

    def code(self) -> str:
        return f"__import__('numpy').array({self.values.tolist()!r}, dtype='int64')"


def fam_take_along(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor(g.shape(max_ndim=3))
    nd = len(a.shape)
    if g.chance(0.2):  # no dim: indices into the flattened tensor
        numel = int(np.prod(a.shape)) if a.shape else 1
        idx = _index_tensor(g, numel, (g.int(0, 4),), bad=bad)
        idx = Tensor(idx.values % max(numel, 1) if not bad else idx.values, "int64")
        return {"a": a, "i": idx}, call(form, "take_along_dim", "a", ["i"]), (
            {"bad", "index-out-of-range"} if bad else set())
    dim, tags = _dims_arg(g, nd, bad and g.chance(0.5), False)
    size = a.shape[dim] if nd and not tags else 1
    ishape = [s if g.chance(0.7) else 1 for s in a.shape]
    if nd and not tags:
        ishape[dim] = g.int(0, 3)
    idx = _index_tensor(g, size, tuple(ishape), bad=bad and not tags)
    idx = Tensor(idx.values % max(size, 1) if not bad else idx.values, "int64")
    if bad and not tags:
        tags = {"bad", "index-out-of-range"}
    return {"a": a, "i": idx}, call(form, "take_along_dim", "a", ["i", f"dim={dim}"]), tags


def fam_unravel(g: Gen, op: Op, form: str, bad: bool):
    shape = tuple(g.int(1, 4) for _ in range(g.int(0, 3)))
    numel = int(np.prod(shape)) if shape else 1
    vals = g.rng.integers(-numel, numel, size=g.shape(max_ndim=2))
    tags = set()
    if bad:
        kind = g.pick(("oob", "float", "neg-shape"))
        if kind == "oob":
            vals, tags = vals * 0 + numel, {"bad", "index-out-of-range"}
        elif kind == "float":
            return ({"i": Tensor(vals.astype("float32"), "float32")},
                    f"L.unravel_index(i, {shape!r})", {"bad", "wrong-dtype"})
        else:
            shape, tags = shape + (-1,), {"bad", "bad-shape"}
    i = Tensor(vals.astype("int64"), "int64") if g.chance(0.85) else Lit(int(vals.flat[0]) if
                                                                         vals.size else 0)
    shape_arg = repr(shape) if g.chance(0.8) or not shape else str(shape[0])
    return {"i": i}, f"L.unravel_index(i, {shape_arg})", tags


def fam_scatter(g: Gen, op: Op, form: str, bad: bool):
    """scatter / scatter_add / scatter_reduce / index_copy / index_add / index_fill."""
    n = op.name
    dt = g.dtype()
    a = g.tensor(g.shape(max_ndim=3), dt)
    nd = len(a.shape)
    dim, tags = _dims_arg(g, nd, bad and g.chance(0.4), False)
    size = a.shape[dim] if nd and not tags else 1
    args = {"a": a}
    oob = bad and not tags
    if n.startswith("index_"):
        k = g.int(0, 4)
        if nd and not tags and size:
            vals = g.rng.permutation(size)[:min(k, size)] if n == "index_copy" else (
                g.rng.integers(0, size, size=k))
        else:
            vals = np.zeros(0 if not nd else min(k, 1), "int64")
        vals = np.asarray(vals, "int64") + (size + 1 if oob else 0)
        args["i"] = Tensor(vals, "int64")
        if n == "index_fill":
            rest = [str(dim), "i", g.scalar(g.pick(("int", "float", "bool"))).code()]
        else:
            sshape = list(a.shape)
            if nd and not tags:
                sshape[dim] = len(vals)
            args["s"] = g.tensor(tuple(sshape), dt if g.chance(0.85) else g.dtype())
            rest = [str(dim), "i", "s"]
            if n == "index_add" and g.chance(0.3):
                rest.append("alpha=2")
    else:
        ishape = tuple(g.int(0, s) for s in a.shape)
        idx = _index_tensor(g, size, ishape, bad=oob)
        args["i"] = Tensor(idx.values % max(size, 1) if not oob else idx.values, "int64")
        use_scalar = n == "scatter" and g.chance(0.3)
        if use_scalar:
            rest = [str(dim), "i", g.scalar(g.pick(("int", "float"))).code()]
        else:
            sshape = tuple(s + g.int(0, 1) for s in ishape)
            args["s"] = g.tensor(sshape, dt if g.chance(0.85) else g.dtype())
            rest = [str(dim), "i", "s"]
        if n == "scatter_reduce":
            rest.append(repr(g.pick(("sum", "prod", "mean", "amax", "amin"))))
            if g.chance(0.5):
                rest.append(f"include_self={g.chance(0.5)}")
        elif n == "scatter" and g.chance(0.3):
            rest.append(f"reduce={g.pick(('add', 'multiply'))!r}")
    if oob:
        tags = {"bad", "index-out-of-range"}
    return args, call(form, n, "a", rest), tags


def fam_view_inplace(g: Gen, op: Op, form: str, bad: bool):
    """t_, transpose_, swapaxes_, squeeze_, unsqueeze_, as_strided_: the view ops that
    change their input's own shape; the result and the input are compared."""
    n = op.name
    a = g.tensor(g.shape(max_ndim=3 if n == "t_" else 4))
    nd = len(a.shape)
    d = (lambda: g.dim(nd, bad=True)) if bad else (lambda: g.dim(nd))
    tags = {"bad", "dim-out-of-range"} if bad else set()
    if n == "t_":
        rest, tags = [], ({"bad", "too-many-dims"} if nd > 2 else set())
    elif n in ("transpose_", "swapaxes_"):
        rest = [str(d()), str(d())]
    elif n == "squeeze_":
        rest = [str(d())] if g.chance(0.6) or bad else []
    elif n == "unsqueeze_":
        rest = [str(g.int(-nd - 1, nd) if not bad else nd + 2)]
    else:  # as_strided_
        numel = int(np.prod(a.values.shape)) if a.values.shape else 1
        size = (g.int(0, 2), g.int(1, 2)) if numel >= 4 else (1,) if numel else (0,)
        stride = (g.int(0, 2), 1) if len(size) == 2 else (1,)
        offset = 0 if numel < 6 else g.int(0, 1)
        rest = [repr(size), repr(stride)] + ([str(offset)] if g.chance(0.5) else [])
        if bad:
            rest, tags = [repr(size), repr(stride + (1,))], {"bad", "bad-shape"}
        # as_strided_ reads the storage: only defined on a contiguous base tensor.
        a = Tensor(a.values, a.dtype, "")
    return {"a": a}, f"(a.{n}({', '.join(rest)}), a)", tags | {"inplace"}


def fam_index_keys(g: Gen, op: Op, form: str, bad: bool):
    """x[key] reads and writes with a range, a list or a NumPy array as (part of) the key."""
    a = g.tensor(g.shape(ndim=g.pick((1, 2, 2, 3))))
    shape, nd = a.shape, len(a.shape)
    args, parts, tags = {"a": a}, [], set()
    for i in range(g.int(1, nd)):
        size = shape[i]
        kind = g.pick(("range", "list", "np", "slice", "int"))
        if kind == "range":
            lo, hi = g.int(0, size), g.int(0, size)
            st = g.pick((1, 1, 2))
            parts.append(f"range({lo}, {hi}, {st})" if g.chance(0.7) else f"range({size})")
        elif kind == "list" and size:
            parts.append(repr([g.int(-size, size - 1) for _ in range(g.int(0, 3))]))
        elif kind == "np":
            k = g.int(0, 3)
            vals = g.rng.integers(-size, size, size=k) if size else np.zeros(0, "int64")
            args[f"n{i}"] = NpArray(np.asarray(vals, "int64"))
            parts.append(f"n{i}")
        elif kind == "int" and size:
            parts.append(str(g.int(-size, size - 1)))
        else:
            parts.append(":")
    if bad:
        kind = g.pick(("range", "np"))
        if kind == "range":
            parts[0], tags = f"range({shape[0] + 1})", {"bad", "index-out-of-range"}
        else:
            args["nb"] = NpArray(np.array([shape[0] + 1], "int64"))
            parts[0], tags = "nb", {"bad", "index-out-of-range"}
    key = ", ".join(parts)
    if op.name == "setitem_keys":
        if g.chance(0.7):
            args["v"] = g.scalar(g.pick(("int", "float", "bool")))
        else:
            args["v"] = g.tensor((), g.dtype())
        return args, f"a.__setitem__(({key},), v) or a", tags | {"inplace"}
    return args, f"a[{key}]", tags


INDEXING_FAMILIES = {
    "take_along": fam_take_along,
    "unravel": fam_unravel,
    "scatter": fam_scatter,
    "view_inplace": fam_view_inplace,
    "index_keys": fam_index_keys,
}
