"""The op catalogue: a declarative table of ops, each naming its argument family (how its
inputs are drawn) and the call forms it is reached by (function, method, in-place,
operator, nn.functional). `make_case(seed, index)` turns one table row into one case."""

from __future__ import annotations

from dataclasses import dataclass, field

from .inputs import COMPLEX, FLOATS, INTS, Gen, Lit, Tensor, broadcastable, mismatched, np_dtype

BAD_SHARE = 0.12  # share of calls given deliberately bad arguments


@dataclass(frozen=True)
class Op:
    """One catalogue row: `family` draws the arguments, `forms` are the ways to call it."""

    name: str
    family: str
    forms: tuple = ("fn", "method")
    opts: dict = field(default_factory=dict)


@dataclass
class Case:
    """One call: its arguments (name -> input), the expression, and descriptive tags."""

    seed: int
    index: int
    op: str
    form: str
    args: dict
    expr: str
    tags: set

    @property
    def label(self) -> str:
        return f"{self.op}[{self.form}]"

    def code(self) -> str:
        """A standalone reproducer: the same call in ember and in torch."""
        lines = ["import ember, torch", "from math import nan, inf", "",
                 "for L in (ember, torch):", "    F = L.nn.functional"]
        lines += [f"    {k} = {v.code()}" for k, v in self.args.items()]
        lines.append(f"    print(L.__name__, {self.expr})")
        return "\n".join(lines)


def call(form: str, name: str, first: str, rest: list) -> str:
    """The expression calling `name` through `form`; `first` is the leading tensor arg."""
    tail = ", ".join(rest)
    sep = ", " if tail else ""
    if form == "fn":
        return f"L.{name}({first}{sep}{tail})"
    if form == "F":
        return f"F.{name}({first}{sep}{tail})"
    if form == "method":
        return f"{first}.{name}({tail})"
    if form == "inplace":
        return f"{first}.{name}_({tail})"
    raise ValueError(form)


# --- argument families --------------------------------------------------------------
# Each takes (g, op, form, bad) and returns (args, expr, tags).

def fam_unary(g: Gen, op: Op, form: str, bad: bool):
    pool = op.opts.get("dtypes")
    a = g.tensor(dtype=g.dtype(pool) if pool and not bad else None)
    rest = [f"{k}={v!r}" for k, v in op.opts.get("kw", {}).items()]
    if bad:
        form = "method" if form.startswith("op:") else form
        return {"a": a}, call(form, op.name, "a", ["'x'"]), {"bad", "wrong-arg-type"}
    if form.startswith("op:"):
        return {"a": a}, form[3:].format(a="a"), set()
    return {"a": a}, call(form, op.name, "a", rest), set()


def _pair_shapes(g: Gen, bad: bool):
    sa = g.shape()
    if bad:
        sb = mismatched(g, sa)
        if sb is not None:
            return sa, sb, {"bad", "shape-mismatch"}
    sb = broadcastable(g, sa)
    return (sb, sa, set()) if g.chance(0.3) else (sa, sb, set())


def fam_binary(g: Gen, op: Op, form: str, bad: bool):
    pool = op.opts.get("dtypes")
    sa, sb, tags = _pair_shapes(g, bad)
    da = g.dtype(pool) if pool else g.dtype()
    db = da if g.chance(0.5) else (g.dtype(pool) if pool else g.dtype())
    a = g.tensor(sa, da)
    scalar = not tags and g.chance(0.25)
    b = g.scalar() if scalar else g.tensor(sb, db, lo=op.opts.get("lo", -3))
    args = {"a": a, "b": b}
    if bad and not tags:
        args["b"] = Lit("x")
        tags = {"bad", "wrong-arg-type"}
    if scalar:
        tags.add("scalar")
    rest = ["b"] + [f"{k}={v!r}" for k, v in g.pick(op.opts.get("kws", [{}])).items()]
    if form.startswith("op:"):
        expr = form[3:].format(a="a", b="b")
        if scalar and g.chance(0.4) and op.opts.get("reflect", True):
            expr = form[3:].format(a="b", b="a")  # scalar on the left (reflected operator)
        return args, expr, tags
    return args, call(form, op.name, "a", rest), tags


def _dims_arg(g: Gen, ndim: int, bad: bool, tuple_ok: bool):
    if bad:
        return g.dim(ndim, bad=True), {"bad", "dim-out-of-range"}
    if tuple_ok and ndim >= 2 and g.chance(0.3):
        k = g.int(1, ndim)
        dims = g.rng.choice(ndim, k, replace=False).tolist()
        return tuple(d - ndim if g.chance(0.3) else d for d in dims), set()
    return g.dim(ndim), set()


def fam_reduce(g: Gen, op: Op, form: str, bad: bool):
    pool = op.opts.get("dtypes")
    a = g.tensor(dtype=g.dtype(pool) if pool and not bad else None)
    nd = len(a.shape)
    rest, tags = [], set()
    if op.opts.get("dim_required") or g.chance(0.75) or bad:
        dim, tags = _dims_arg(g, nd, bad, op.opts.get("tuple_dims", True))
        rest.append(f"dim={dim!r}" if g.chance(0.5) else repr(dim))
        if op.opts.get("keepdim", True) and g.chance(0.5):
            rest.append(f"keepdim={g.chance(0.5)}")
    for k, choices in op.opts.get("extra", {}).items():
        if g.chance(0.4):
            rest.append(f"{k}={g.pick(choices)}")
    if not tags and form == "fn" and op.opts.get("dtype_kw") and g.chance(0.2):
        rest.append(f"dtype=L.{g.pick(('float64', 'int64', 'float32'))}")
    return {"a": a}, call(form, op.name, "a", rest), tags


def fam_scan(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor()
    dim, tags = _dims_arg(g, len(a.shape), bad, False)
    rest = [f"dim={dim}" if g.chance(0.5) else str(dim)]
    if op.opts.get("dtype_kw") and g.chance(0.2):
        rest.append(f"dtype=L.{g.pick(('float64', 'int64'))}")
    return {"a": a}, call(form, op.name, "a", rest), tags


def fam_softmax(g: Gen, op: Op, form: str, bad: bool):
    pool = FLOATS if g.chance(0.85) else None
    a = g.tensor(dtype=g.dtype(pool))
    dim, tags = _dims_arg(g, len(a.shape), bad, False)
    rest = [f"dim={dim}"]
    if g.chance(0.2):
        rest.append(f"dtype=L.{g.pick(('float64', 'float32'))}")
    return {"a": a}, call(form, op.name, "a", rest), tags


def _perm(g: Gen, n: int) -> tuple:
    return tuple(int(x) for x in g.rng.permutation(n))


def fam_view(g: Gen, op: Op, form: str, bad: bool):
    """Views and movement: each op draws its own extra arguments."""
    a = g.tensor()
    shape, nd, tags = a.shape, len(a.shape), set()
    bad_dim = bad and g.chance(0.7)
    if bad_dim:
        tags = {"bad", "dim-out-of-range"}
    d = (lambda: g.dim(nd, bad=True)) if bad_dim else (lambda: g.dim(nd))
    n = op.name
    numel = 1
    for s in shape:
        numel *= s
    if n in ("reshape", "view"):
        target = _factor_shape(g, numel)
        if target and g.chance(0.3):
            target[g.int(0, len(target) - 1)] = -1
        if bad:
            target, tags = target + [3], {"bad", "bad-shape"}
            if numel % 3 == 0 and numel:
                target.append(7)
        rest = [", ".join(str(t) for t in target)] if form != "fn" and g.chance(0.5) else [
            repr(tuple(target))]
    elif n in ("transpose", "swapaxes"):
        rest = [str(d()), str(d())]
    elif n == "permute":
        p = list(_perm(g, nd))
        if bad:
            p = p + [0] if g.chance(0.5) else ([0, 0] + p[2:] if nd >= 2 else [1])
            tags = {"bad", "bad-perm"}
        rest = [", ".join(str(x) for x in p)] if p and form != "fn" and g.chance(0.5) else [
            repr(tuple(p))]
    elif n == "movedim":
        rest = [str(d()), str(d())]
    elif n == "expand":
        target = [(g.int(2, 3) if s == 1 and g.chance(0.5) else s) for s in shape]
        target = [g.int(1, 2) for _ in range(g.int(0, 1))] + target
        target = [-1 if g.chance(0.2) and k >= len(target) - nd else t
                  for k, t in enumerate(target)]
        if bad and any(s >= 2 for s in shape):
            target = list(shape)
            k = next(k for k, s in enumerate(shape) if s >= 2)
            target[k] += 1
            tags = {"bad", "bad-shape"}
        rest = [", ".join(str(t) for t in target)] if target else ["()"]
    elif n == "squeeze":
        rest = [str(d())] if g.chance(0.6) or bad_dim else []
    elif n == "unsqueeze":
        rest = [str(g.int(-nd - 1, nd) if not bad_dim else g.pick((nd + 1, -nd - 2)))]
    elif n == "flatten":
        if nd and g.chance(0.6):
            s0, s1 = sorted((g.int(0, nd - 1), g.int(0, nd - 1)))
            rest = [str(s0), str(s1 - nd if g.chance(0.5) else s1)]
            if bad_dim:
                rest = [str(d()), str(nd - 1)]
        else:
            rest = [str(d())] if bad_dim else []
    elif n == "narrow":
        dim = d()
        size = shape[dim] if -nd <= dim < nd and nd else 1
        start = g.int(0, size)
        length = g.int(0, size - start)
        if bad and not bad_dim:
            length, tags = size + 1, {"bad", "out-of-range"}
        rest = [str(dim), str(start), str(length)]
    elif n == "select":
        dim = d()
        size = shape[dim] if -nd <= dim < nd and nd else 1
        idx = g.int(-size, size - 1) if size else 0
        if bad and not bad_dim:
            idx, tags = size, {"bad", "index-out-of-range"}
        rest = [str(dim), str(idx)]
    elif n == "unfold":
        dim = d()
        size = shape[dim] if -nd <= dim < nd and nd else 1
        rest = [str(dim), str(g.int(0, size + (1 if bad else 0))), str(g.int(1, 3))]
    elif n == "diagonal":
        rest = [f"offset={g.int(-2, 2)}"]
        if nd >= 2 or bad_dim:
            d1, d2 = d(), d()
            if not bad_dim and nd >= 2:
                while (d1 % nd) == (d2 % nd):
                    d2 = g.dim(nd)
            rest += [f"dim1={d1}", f"dim2={d2}"]
    elif n == "flip":
        k = g.int(0, nd) if nd else 0
        dims = [d() for _ in range(max(k, 1 if bad_dim else 0))]
        dims = list(dict.fromkeys(dims))
        rest = [repr(tuple(dims))]
    elif n == "roll":
        if g.chance(0.3) and not bad_dim:
            rest = [str(g.int(-3, 3))]
        else:
            rest = [str(g.int(-3, 3)), str(d())]
    elif n == "t":
        rest = []
    else:
        raise ValueError(n)
    if bad and not tags:
        rest, tags = ["'x'"] if n != "t" else ["0"], {"bad", "wrong-arg-type"}
    return {"a": a}, call(form, n, "a", rest), tags


def _factor_shape(g: Gen, numel: int) -> list:
    """A random shape with `numel` elements (a size-0 dim when numel is 0)."""
    if numel == 0:
        return [g.int(0, 3), 0] if g.chance(0.5) else [0]
    out, left = [], numel
    for p in (2, 3, 2, 2, 5):
        while left % p == 0 and g.chance(0.5):
            out.append(p)
            left //= p
    if left > 1:
        out.append(left)
    if g.chance(0.3):
        out.insert(g.int(0, len(out)), 1)
    g.rng.shuffle(out)
    return out


def fam_join(g: Gen, op: Op, form: str, bad: bool):
    n = op.name
    shape = g.shape(max_ndim=3)
    nd = len(shape)
    dtype = g.dtype()
    tags = set()
    if n in ("cat", "stack", "hstack", "vstack"):
        k = g.int(1, 3)
        ts = []
        dim = g.dim(nd if n != "stack" else nd + 1)
        for _ in range(k):
            s = list(shape)
            if n == "cat" and nd and -nd <= dim < nd:
                s[dim] = g.int(0, 3)
            ts.append(g.tensor(tuple(s), dtype if g.chance(0.8) else g.dtype()))
        if bad:
            kind = g.pick(("dim", "shape", "empty-list"))
            if kind == "dim":
                dim, tags = g.dim(nd + (n == "stack"), bad=True), {"bad", "dim-out-of-range"}
            elif kind == "shape" and (ms := mismatched(g, shape)) is not None:
                ts.append(g.tensor(ms, dtype))
                tags = {"bad", "shape-mismatch"}
            else:
                ts, tags = [], {"bad", "empty-list"}
        args = {f"t{i}": t for i, t in enumerate(ts)}
        seq = "[" + ", ".join(args) + "]"
        rest = [f"dim={dim}"] if n in ("cat", "stack") else []
        return args, f"L.{n}({seq}{', ' if rest else ''}{', '.join(rest)})", tags
    a = g.tensor(shape, dtype)
    dim, tags = (g.dim(nd, bad=True), {"bad", "dim-out-of-range"}) if bad else (g.dim(nd), set())
    size = shape[dim] if nd and -nd <= dim < nd else 1
    if n == "split":
        if g.chance(0.5):
            sizes, left = [], size
            while left:
                sizes.append(g.int(1, left))
                left -= sizes[-1]
            if bad and not tags and g.chance(0.5):
                sizes, tags, dim = sizes + [1], {"bad", "bad-sizes"}, g.dim(nd)
            rest = [repr(sizes), f"dim={dim}"]
        else:
            rest = [str(g.int(1, 3)), f"dim={dim}"]
    elif n == "chunk":
        rest = [str(g.int(1, 4) if not (bad and g.chance(0.3)) else 0), f"dim={dim}"]
    elif n == "unbind":
        rest = [f"dim={dim}"]
    else:
        raise ValueError(n)
    return {"a": a}, call(form, n, "a", rest), tags


def _index_tensor(g: Gen, size: int, shape: tuple, bad: bool) -> Tensor:
    hi = max(size - 1, 0)
    vals = g.rng.integers(-size if g.chance(0.3) else 0, hi + 1, size=shape)
    if size == 0:
        vals = vals * 0
    if bad:
        vals = vals + size + 1
    return Tensor(vals.astype("int64"), "int64")


def fam_getitem(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor(shape=g.shape(ndim=g.pick((0, 1, 2, 2, 3, 3))))
    shape, tags = a.shape, set()
    parts, args = [], {"a": a}
    nd = len(shape)
    k = g.int(0, nd)
    for i in range(k):
        size = shape[i]
        kind = g.pick(("int", "slice", "slice", "tensor", "none", "list"))
        if kind == "int" and size:
            parts.append(str(g.int(-size, size - 1)))
        elif kind == "tensor":
            args[f"i{i}"] = _index_tensor(g, size, g.shape(max_ndim=2), bad=False)
            parts.append(f"i{i}")
        elif kind == "none":
            parts.append("None")
        elif kind == "list" and size:
            parts.append(repr([g.int(-size, size - 1) for _ in range(g.int(1, 3))]))
        else:
            lo, hi, st = g.int(-4, 4), g.int(-4, 4), g.pick((1, 1, 2, 3))
            parts.append(f"{lo if g.chance(0.7) else ''}:{hi if g.chance(0.7) else ''}:{st}")
    if g.chance(0.2):
        parts.insert(g.int(0, len(parts)), "...")
    if g.chance(0.2) and nd:
        args["m"] = Tensor(g.rng.random(shape[:g.int(1, nd)]) < 0.5, "bool")
        parts = ["m"]
    if bad:
        kind = g.pick(("int", "float", "too-many"))
        if kind == "int" and nd:
            parts, tags = [str(shape[0] + g.int(0, 2))], {"bad", "index-out-of-range"}
        elif kind == "float":
            parts, tags = ["1.5"], {"bad", "wrong-arg-type"}
        else:
            parts, tags = ["0"] * (nd + 1), {"bad", "too-many-indices"}
    key = ", ".join(parts) if parts else "..."
    if op.name == "setitem":
        v = g.scalar(g.pick(("int", "float", "bool")))
        args["v"] = v
        return args, f"a.__setitem__(({key},), v) or a", tags | {"inplace"}
    return args, f"a[{key}]", tags


def fam_gather(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor(shape=g.shape(max_ndim=3))
    shape, nd = a.shape, len(a.shape)
    dim = g.dim(nd, bad=bad and g.chance(0.5))
    tags = {"bad", "dim-out-of-range"} if bad and not -max(nd, 1) <= dim < max(nd, 1) else set()
    size = shape[dim] if tags == set() and nd else 1
    if op.name == "gather":
        ishape = tuple(g.int(0, s) for s in shape) if nd else ()
        idx = _index_tensor(g, size, ishape, bad=bad and not tags)
        idx = Tensor(idx.values.clip(0 if size else 0, None) if not bad else idx.values, "int64")
    else:
        idx = _index_tensor(g, size, (g.int(0, 4),), bad=bad and not tags)
        idx = Tensor(idx.values % max(size, 1) if not bad else idx.values, "int64")
    if bad and not tags:
        tags = {"bad", "index-out-of-range"}
    return {"a": a, "i": idx}, call(form, op.name, "a", [str(dim), "i"]), tags


def fam_masked(g: Gen, op: Op, form: str, bad: bool):
    sa, sm, tags = _pair_shapes(g, bad)
    a = g.tensor(sa)
    m = Tensor(g.rng.random(sm) < 0.5, "bool") if not (bad and not tags) else g.tensor(sm, "int64")
    if bad and not tags:
        tags = {"bad", "wrong-dtype"}
    args = {"a": a, "m": m}
    if op.name == "where":
        args = {"m": m, "a": a, "b": g.tensor(broadcastable(g, sa)) if g.chance(0.7) else
                g.scalar()}
        return args, "L.where(m, a, b)", tags
    if op.name == "masked_select":
        return args, call(form, op.name, "a", ["m"]), tags
    v = g.scalar(g.pick(("int", "float", "bool")))
    if g.chance(0.2):
        v = g.tensor((), g.dtype())
    args["v"] = v
    return args, call(form, op.name, "a", ["m", "v"]), tags


def fam_matmul(g: Gen, op: Op, form: str, bad: bool):
    n = op.name
    dt = g.dtype(FLOATS + COMPLEX + ("int64",) if g.chance(0.9) else None)
    dt2 = dt if g.chance(0.9) else g.dtype()
    m, k, p = g.size(), g.size(), g.size()
    k2 = k + 1 if bad else k
    tags = {"bad", "shape-mismatch"} if bad else set()
    if k == 0:
        tags.add("zero-inner")
    batch = tuple(g.size() for _ in range(g.int(0, 2)))
    if n == "mm":
        sa, sb = (m, k), (k2, p)
    elif n == "bmm":
        b = g.size()
        sa, sb = (b, m, k), (b, k2, p)
    elif n == "dot":
        sa, sb = (k,), (k2,)
    elif n == "mv":
        sa, sb = (m, k), (k2,)
    elif n == "outer":
        sa, sb = (m,), (p,)
    elif n == "linear":
        sa, sb = batch + (m, k), (p, k2)
    else:  # matmul: 1-d to 4-d on either side, batch dims broadcasting
        ra, rb = g.int(1, 4), g.int(1, 4)
        sa = (k,) if ra == 1 else (batch + (m, k))[-ra:] if len(batch) + 2 >= ra else (
            (1,) * (ra - 2 - len(batch)) + batch + (m, k))
        sb = (k2,) if rb == 1 else tuple(broadcastable(g, batch)) + (k2, p)
    args = {"a": g.tensor(sa, dt), "b": g.tensor(sb, dt2)}
    if len(sa) == 3 and len(sb) >= 2 and k == 0:
        tags.add("zero-inner-3d")
    if n == "linear":
        rest = ["b"]
        if g.chance(0.5):
            args["c"] = g.tensor((p,), dt)
            rest.append("c")
        return args, f"F.linear(a, {', '.join(rest)})", tags
    if form.startswith("op:"):
        return args, "a @ b", tags
    return args, call(form, n, "a", ["b"]), tags


def fam_loss(g: Gen, op: Op, form: str, bad: bool):
    n = op.name
    dt = g.dtype(FLOATS if g.chance(0.9) else None)
    red = g.pick(("'mean'", "'sum'", "'none'"))
    tags = set()
    rest = [f"reduction={red}"]
    if n in ("cross_entropy", "nll_loss"):
        c = g.int(1, 4)
        batch = tuple(g.size() for _ in range(g.int(0, 2)))
        shape = (g.size(), c) + batch if g.chance(0.8) else (c,)
        x = g.tensor(shape, dt)
        tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
        if n == "cross_entropy" and g.chance(0.25):
            y = g.tensor(shape, dt, lo=0, hi=1)
            tags.add("prob-target")
        else:
            y = _index_tensor(g, c, tshape, bad=bad)
            y = Tensor(y.values % c if not bad else y.values, "int64")
            if bad:
                tags = {"bad", "target-out-of-range"}
            if g.chance(0.2):
                rest.append("ignore_index=1")
                tags.add("ignore_index")
        if g.chance(0.25):
            wdt = dt if g.chance(0.8) else g.dtype(FLOATS)
            args = {"x": x, "y": y, "w": g.tensor((c,), wdt, lo=0.1, hi=2)}
            rest.append("weight=w")
            if wdt != dt:
                tags.add("weight-dtype")
        else:
            args = {"x": x, "y": y}
        if n == "cross_entropy" and g.chance(0.2):
            rest.append("label_smoothing=0.1")
        return args, f"F.{n}(x, y, {', '.join(rest)})", tags
    shape = g.shape()
    sy, tags0 = shape, set()
    if bad:
        ms = mismatched(g, shape)
        if ms is not None:
            sy, tags0 = ms, {"bad", "shape-mismatch"}
    tags |= tags0
    lo = 0 if n in ("binary_cross_entropy",) else -3
    hi = 1 if lo == 0 else 3
    x = g.tensor(shape, dt, lo=lo, hi=hi)
    y = g.tensor(sy, dt if g.chance(0.9) else g.dtype(FLOATS), lo=0 if lo == 0 or
                 n == "binary_cross_entropy_with_logits" else -3, hi=1 if hi == 1 else 3)
    if not shape:
        tags.add("0d")
    return {"x": x, "y": y}, f"F.{n}(x, y, {', '.join(rest)})", tags


def fam_clamp(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor(dtype=g.dtype(FLOATS + INTS if g.chance(0.9) else None))
    args, rest, tags = {"a": a}, [], set()
    if op.name == "clamp":
        use_t = g.chance(0.3)
        for kw in ("min", "max"):
            if g.chance(0.7):
                if use_t:
                    args[kw[:2]] = g.tensor(broadcastable(g, a.shape), a.dtype)
                    rest.append(f"{kw}={kw[:2]}")
                else:
                    rest.append(f"{kw}={g.scalar(g.pick(('int', 'float'))).code()}")
        if not rest and not bad:
            tags.add("no-bounds")
    else:
        rest.append(g.scalar(g.pick(("int", "float"))).code())
    if bad:
        rest, tags = ["min='x'"] if op.name == "clamp" else ["'x'"], {"bad", "wrong-arg-type"}
    return args, call(form, op.name, "a", rest), tags


def fam_sort(g: Gen, op: Op, form: str, bad: bool):
    tie_free = op.name in ("topk", "kthvalue")
    a = g.tensor(dtype=g.dtype(FLOATS + INTS + (() if tie_free else ("bool",))))
    if tie_free:
        # Distinct values: which of several equal values torch's topk / kthvalue index
        # points at is unspecified, so ties would only measure that.
        vals = g.rng.permutation(a.values.size).reshape(a.values.shape)
        vals = vals - (0 if a.dtype == "uint8" else vals.size // 2)
        a = Tensor(vals.astype(np_dtype(a.dtype)), a.dtype, a.layout if "expand" not in
                   a.layout else "")
    nd = len(a.shape)
    dim = g.dim(nd, bad=bad)
    tags = {"bad", "dim-out-of-range"} if bad else set()
    size = a.shape[dim] if nd and not bad else 1
    if op.name == "topk":
        k = g.int(0, size) if not (bad and g.chance(0.5)) else size + 1
        rest = [str(k), f"dim={dim}", f"largest={g.chance(0.5)}"]
        tags.add("topk")
    elif op.name == "sort":
        rest = [f"dim={dim}", f"descending={g.chance(0.5)}", "stable=True"]
    elif op.name == "argsort":
        rest = [f"dim={dim}", f"descending={g.chance(0.5)}", "stable=True"]
    else:  # kthvalue
        rest = [str(g.int(1, max(size, 1)) if not bad else size + 1), f"dim={dim}"]
    return {"a": a}, call(form, op.name, "a", rest), tags


def fam_convert(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor()
    n = op.name
    if n == "to":
        target = g.dtype()
        if bad:
            return {"a": a}, "a.to('x')", {"bad", "wrong-arg-type"}
        return {"a": a}, f"a.to(L.{target})", {f"to:{target}"}
    if n == "item":
        if bad:
            return {"a": g.tensor((2, 3))}, "a.item()", {"bad", "numel"}
        return {"a": g.tensor(g.pick(((), (1,), (1, 1))))}, "a.item()", set()
    if n == "tolist":
        return {"a": a}, "a.tolist()", set()
    return {"a": a}, f"a.{n}()", {f"to:{n}"}


def fam_tri(g: Gen, op: Op, form: str, bad: bool):
    a = g.tensor(shape=g.shape(ndim=g.pick((2, 2, 3)) if not bad else 1))
    tags = {"bad", "too-few-dims"} if bad else set()
    return {"a": a}, call(form, op.name, "a", [str(g.int(-2, 2))]), tags


FAMILIES = {
    "unary": fam_unary, "binary": fam_binary, "reduce": fam_reduce, "scan": fam_scan,
    "softmax": fam_softmax, "view": fam_view, "join": fam_join, "getitem": fam_getitem,
    "gather": fam_gather, "masked": fam_masked, "matmul": fam_matmul, "loss": fam_loss,
    "clamp": fam_clamp, "sort": fam_sort, "convert": fam_convert, "tri": fam_tri,
}
