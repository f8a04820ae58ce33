"""Bad indices raise as torch raises, op by op and path by path.

Every indexing op is run on a grid of inputs (dims 0, the last and -1; float32, bfloat16,
int64 and bool; 2-D, 3-D, 1-D, 0-d and empty inputs) with in-range, out-of-range (positive
and negative), empty, wrongly typed and wrongly shaped indices. Both frameworks must succeed
together, or raise the same exception type with the same message. PyTorch's type and message
depend on the path its CPU kernel takes (index_select's dim-1 fast path raises RuntimeError,
its general path IndexError; index_add goes through scatter_add when it can), so each op is
compared case by case rather than against one rule.
"""

import itertools
import warnings

import pytest
import torch

import ember

SHAPES = [(3, 4), (2, 3, 4), (3,), (), (0, 4), (3, 0)]
DTYPES = ["float32", "bfloat16", "int64", "bool"]
INDICES = {  # name -> (values, dtype)
    "in-range": ([0, 2], "int64"), "past-end": ([0, 4], "int64"), "far-past-end": ([5], "int64"),
    "minus-one": ([-1], "int64"), "below-start": ([-5], "int64"), "empty": ([], "int64"),
    "float": ([0.0], "float32"), "int32": ([0], "int32"), "int16": ([1], "int16"),
    "uint8": ([1], "uint8"), "bool": ([True, False, True], "bool"), "2-d": ([[0], [1]], "int64"),
    "0-d": (0, "int64"), "0-d-past-end": (7, "int64"),
}


def _input(m, shape, dtype):
    n = 1
    for s in shape:
        n *= s
    values = [i % 5 for i in range(n)]
    t = m.tensor(values, dtype=getattr(m, dtype))
    return t.reshape(shape)


def _column(m, x, i):
    """A 1-D index made a column (k, 1, ...) matching x's rank, for gather and scatter."""
    if x.dim() > 1 and i.dim() == 1:
        return i.reshape([-1] + [1] * (x.dim() - 1))
    return i


def _along(m, x, d, i):
    """A 1-D index spread over x's other dims (not expanded: PyTorch checks its bounds)."""
    if x.dim() < 1 or i.dim() != 1:
        return i
    d = d % x.dim()
    shape = list(x.shape)
    shape[d] = i.numel()
    view = [1] * x.dim()
    view[d] = -1
    return i.reshape(view).expand(shape).contiguous()


def _source(m, x, d, i):
    shape = list(x.shape)
    if shape:
        shape[d] = i.numel()
    return m.ones(tuple(shape), dtype=x.dtype)


OPS = {
    "index_select": lambda m, x, d, i: m.index_select(x, d, i),
    "Tensor.index_select": lambda m, x, d, i: x.index_select(d, i),
    "index_add": lambda m, x, d, i: m.index_add(x, d, i, _source(m, x, d, i)),
    "index_add-alpha": lambda m, x, d, i: m.index_add(x, d, i, _source(m, x, d, i), alpha=2)
    if x.dtype != m.bool else m.index_add(x, d, i, _source(m, x, d, i)),
    "index_add_": lambda m, x, d, i: x.clone().index_add_(d, i, _source(m, x, d, i)),
    "index_copy": lambda m, x, d, i: m.index_copy(x, d, i, _source(m, x, d, i)),
    "index_copy_": lambda m, x, d, i: x.clone().index_copy_(d, i, _source(m, x, d, i)),
    "index_fill": lambda m, x, d, i: m.index_fill(x, d, i, 1),
    "index_fill_": lambda m, x, d, i: x.clone().index_fill_(d, i, 1),
    "take": lambda m, x, d, i: m.take(x, i),
    "put": lambda m, x, d, i: m.put(x, i, m.ones(i.shape, dtype=x.dtype)),
    "put_": lambda m, x, d, i: x.clone().put_(i, m.ones(i.shape, dtype=x.dtype)),
    "put_-accumulate": lambda m, x, d, i: x.clone().put_(i, m.ones(i.shape, dtype=x.dtype),
                                                         accumulate=True),
    "gather": lambda m, x, d, i: m.gather(x, d, _column(m, x, i)),
    "take_along_dim": lambda m, x, d, i: m.take_along_dim(x, _along(m, x, d, i), d),
    "scatter": lambda m, x, d, i: m.scatter(x, d, _column(m, x, i),
                                            m.ones(_column(m, x, i).shape, dtype=x.dtype)),
    "scatter-value": lambda m, x, d, i: m.scatter(x, d, _column(m, x, i), 1),
    "scatter_": lambda m, x, d, i: x.clone().scatter_(
        d, _column(m, x, i), m.ones(_column(m, x, i).shape, dtype=x.dtype)),
    "scatter_add": lambda m, x, d, i: m.scatter_add(
        x, d, _column(m, x, i), m.ones(_column(m, x, i).shape, dtype=x.dtype)),
    "scatter_reduce": lambda m, x, d, i: m.scatter_reduce(
        x, d, _column(m, x, i), m.ones(_column(m, x, i).shape, dtype=x.dtype), "amax"),
    "index_put": lambda m, x, d, i: m.index_put(x, (i,), m.tensor(1, dtype=x.dtype)),
    "index_put_-accumulate": lambda m, x, d, i: x.clone().index_put_(
        (i,), m.tensor(1, dtype=x.dtype), accumulate=True),
    "getitem": lambda m, x, d, i: x[i],
    "getitem-at-dim": lambda m, x, d, i: x[(slice(None),) * (d % max(x.dim(), 1)) + (i,)],
    "setitem": lambda m, x, d, i: x.clone().__setitem__(i, 1),
    "setitem-at-dim": lambda m, x, d, i: x.clone().__setitem__(
        (slice(None),) * (d % max(x.dim(), 1)) + (i,), 1),
    "embedding": lambda m, x, d, i: m.nn.functional.embedding(
        i, x.float() if x.dim() == 2 else x),
}

# PyTorch's own failures that ember cannot reproduce word for word: the type must match.
_TYPE_ONLY = {
    # a target whose indexed dim is empty: PyTorch's TensorIterator refuses the restrided
    # operands with a message about storage sizes
    "index_copy", "index_copy_", "index_fill", "index_fill_",
}


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        return ("ok",)
    except Exception as err:
        return (type(err).__name__, str(err).split("\n")[0])


def _cases():
    for shape, dtype, name in itertools.product(SHAPES, DTYPES, INDICES):
        for dim in sorted({0, -1, len(shape) - 1} if shape else {0, -1}):
            yield shape, dtype, name, dim


def _skip(op, shape, dim, name) -> bool:
    """take_along_dim with an index outside the input: PyTorch's kernel reads past the input
    without a check (or, on an input with no elements, divides by zero inside it); ember
    raises gather's error."""
    if op != "take_along_dim" or not shape:
        return False
    values, dtype = INDICES[name]
    flat = values if isinstance(values, list) else [values]
    flat = [v for row in flat for v in (row if isinstance(row, list) else [row])]
    size = shape[dim]
    return dtype in ("int64", "int32") and any(not 0 <= v < size for v in flat) or \
        0 in shape and bool(flat)


@pytest.mark.parametrize("op", list(OPS))
def test_indexing_op_raises_as_torch(op):
    fn = OPS[op]
    wrong = []
    for shape, dtype, name, dim in _cases():
        if _skip(op, shape, dim, name):
            continue
        values, idtype = INDICES[name]

        def run(m, shape=shape, dtype=dtype, values=values, idtype=idtype, dim=dim):
            x = _input(m, shape, dtype)
            i = m.tensor(values, dtype=getattr(m, idtype))
            return fn(m, x, dim, i)

        t, e = _outcome(lambda: run(torch)), _outcome(lambda: run(ember))
        if e[0] != t[0] or (e != t and op not in _TYPE_ONLY):
            wrong.append(f"{shape} {dtype} index={name} dim={dim}: torch {t} ember {e}")
    assert not wrong, f"{len(wrong)} cases differ:\n" + "\n".join(wrong[:20])


# --- views that take a position: narrow, select, unbind ------------------------------------

VIEW_OPS = {
    "narrow": lambda m, x, d, k: m.narrow(x, d, k, 1),
    "narrow-long": lambda m, x, d, k: x.narrow(d, k, 3),
    "narrow-tensor-start": lambda m, x, d, k: x.narrow(d, m.tensor(k), 1),
    "select": lambda m, x, d, k: m.select(x, d, k),
    "unbind": lambda m, x, d, k: m.unbind(x, k),
    "chunk": lambda m, x, d, k: m.chunk(x, 2, k),
    "split": lambda m, x, d, k: m.split(x, 1, k),
}


@pytest.mark.parametrize("op", list(VIEW_OPS))
def test_positional_views_raise_as_torch(op):
    fn = VIEW_OPS[op]
    wrong = []
    for shape, dim, k in itertools.product(SHAPES, (0, 1, -1, 2, -3), (0, 2, 3, 4, -1, -4, -5)):
        def run(m, shape=shape, dim=dim, k=k):
            return fn(m, _input(m, shape, "float32"), dim, k)

        t, e = _outcome(lambda: run(torch)), _outcome(lambda: run(ember))
        if e != t:
            wrong.append(f"{shape} dim={dim} k={k}: torch {t} ember {e}")
    assert not wrong, f"{len(wrong)} cases differ:\n" + "\n".join(wrong[:20])


# --- reductions over dim lists: repeats, ranges, empty dims -------------------------------

REDUCTIONS = {
    "amax": lambda m, x, d: m.amax(x, d), "amin": lambda m, x, d: m.amin(x, d),
    "amax-keepdim": lambda m, x, d: m.amax(x, d, keepdim=True),
    "sum": lambda m, x, d: m.sum(x, d), "mean": lambda m, x, d: m.mean(x, d),
    "nansum": lambda m, x, d: m.nansum(x, d), "nanmean": lambda m, x, d: m.nanmean(x, d),
    "std": lambda m, x, d: m.std(x, d), "var": lambda m, x, d: m.var(x, d),
    "std_mean": lambda m, x, d: m.std_mean(x, d), "var_mean": lambda m, x, d: m.var_mean(x, d),
    "logsumexp": lambda m, x, d: m.logsumexp(x, d), "norm": lambda m, x, d: m.norm(x, dim=d),
    "vector_norm": lambda m, x, d: m.linalg.vector_norm(x, dim=d),
    "count_nonzero": lambda m, x, d: m.count_nonzero(x, d),
    "any": lambda m, x, d: m.any(x, d), "all": lambda m, x, d: m.all(x, d),
    "aminmax": lambda m, x, d: m.aminmax(x, dim=d[0] if isinstance(d, list) else d),
    "max": lambda m, x, d: m.max(x, d[0] if isinstance(d, list) else d),
    "min": lambda m, x, d: m.min(x, d[0] if isinstance(d, list) else d),
    "argmax": lambda m, x, d: m.argmax(x, d[0] if isinstance(d, list) else d),
    "argmin": lambda m, x, d: m.argmin(x, d[0] if isinstance(d, list) else d),
    "median": lambda m, x, d: m.median(x, d[0] if isinstance(d, list) else d),
    "Tensor.sum": lambda m, x, d: x.sum(d),
}
DIM_LISTS = [[0, 0], [0, -2], [1, 1], [-1, 1], [0], [1], [-1], [], 0, 1, -1, 2, -3, [0, 5],
             [5, 0]]


@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reductions_over_dim_lists_raise_as_torch(op):
    fn = REDUCTIONS[op]
    wrong = []
    for shape, dims, dtype in itertools.product([(2, 3), (0, 3), (2, 0), (), (0,)], DIM_LISTS,
                                                ["float32", "int64"]):
        def run(m, shape=shape, dtype=dtype, dims=dims):
            return fn(m, m.zeros(shape, dtype=getattr(m, dtype)), dims)

        t, e = _outcome(lambda: run(torch)), _outcome(lambda: run(ember))
        if e != t:
            wrong.append(f"{shape} {dtype} dim={dims}: torch {t} ember {e}")
    assert not wrong, f"{len(wrong)} cases differ:\n" + "\n".join(wrong[:20])
