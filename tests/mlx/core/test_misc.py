"""`depends`, `from_dlpack`, `get_array_buffer_size`, `export_to_dot` and the types
`ArrayAt`, `ArrayIterator`, `ArrayLike` against MLX 0.32.4's CPU wheel.

Each case is an expression run with `mx` bound to ember's face and to MLX (after the same
setup statements); the two must give the same repr, or raise the same exception type with
the same message. A DOT file is compared as text with the primitives' numbers (MLX's are
addresses) and labels (ember draws its own primitives) replaced, so what is compared is
the graph: its arrays, their names and ranks, and its edges.
"""

import io
import re

import numpy as np
import pytest

import ember.mlx.core as mx
from ember.mlx.core import _lazy
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")
torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _lazy_on():
    # (pending arrays are what depends, export_to_dot and get_array_buffer_size are about;
    # the suite also runs with ember's lazy mode off)
    was, _lazy.enabled[0] = _lazy.enabled[0], True
    _lazy.evaluate("test start")
    yield
    _lazy.evaluate("test end")
    _lazy.enabled[0] = was


def _same(expr: str, setup: str = "", show=repr) -> None:
    assert outcome(expr, mx, setup, show) == outcome(expr, mlx, setup, show), expr


# -- depends --------------------------------------------------------------------------------

DEPENDS_SETUP = "a = mx.array([1.0, 2.0]); b = mx.array([3.0])"

DEPENDS = [
    "mx.depends(a, b)",
    "mx.depends([a], [b])",
    "mx.depends((a,), (b,))",
    "mx.depends([a, b], b)",
    "mx.depends(a, [a, b])",
    "mx.depends([a], [])",
    "mx.depends(a, ())",
    "mx.depends((a, b), (b,))",
    "type(mx.depends((a, b), (b,)))",
    "mx.depends(a, b) is a",
    "mx.depends([a], [b])[0] is a",
    "mx.depends(a * 2, b * 3)",
    "mx.depends(mx.array(1, mx.int8), mx.array(2.0))",
    "mx.depends(mx.array([1, 2], mx.uint32), b).dtype",
    "mx.depends(1, b)",
    "mx.depends(a, 1)",
    "mx.depends([a, 1], b)",
    "mx.depends({'x': a}, b)",
    "mx.depends(a, {'x': b})",
    "mx.depends(np.ones(2), b)",
    "mx.depends('x', b)",
    "mx.depends(a)",
    "mx.depends(a, None)",
    "mx.depends(None, a)",
    "mx.depends(inputs=a, dependencies=b)",
    "mx.depends(a, b, stream=mx.cpu)",
    "mx.grad(lambda x: mx.depends(x * 2, x * 5).sum())(a)",
    "mx.grad(lambda x: mx.depends([x * 2, x * 3], [x * 5, x])[1].sum())(a)",
    "mx.grad(lambda x, y: mx.depends(x * 2, y * 5).sum(), argnums=1)(a, a)",
    "mx.vjp(lambda x: mx.depends(x * 2, x * 5), [a], [mx.ones(2)])",
    "mx.compile(lambda x: mx.depends(x * 2, x * 5))(a)",
]


@pytest.mark.parametrize("expr", DEPENDS)
def test_depends(expr):
    _same(expr, DEPENDS_SETUP)


def test_depends_keeps_pending_dependencies_until_its_outputs_are_computed():
    import gc

    x = mx.array([1.0, 2.0])
    out = mx.depends(x * 2, mx.exp(x))  # (the exp array itself is dropped at once)
    gc.collect()
    assert mx.graph_size() == 3  # mul, exp and the identity that depends on both
    assert out.tolist() == [2.0, 4.0] and mx.graph_size() == 0


def test_depends_with_no_inputs_raises():
    # (MLX reads the first input without checking and crashes: no outcome to compare)
    with pytest.raises(ValueError, match="at least one input"):
        mx.depends([], [mx.array(1.0)])


# -- from_dlpack ----------------------------------------------------------------------------

DLPACK_SETUP = """
import array as pyarr
import torch
a = mx.array([1.0, 2.0, 3.0])
class Producer:
    def __init__(self, x): self.x = x
    def __dlpack__(self, **kw): return self.x.__dlpack__(**kw)
class DeviceOnly:
    def __dlpack_device__(self): return (1, 0)
"""

DLPACK = [
    "mx.from_dlpack(np.arange(3.0))",
    "mx.from_dlpack(np.arange(3))",
    "mx.from_dlpack(np.arange(6, dtype=np.int16).reshape(2, 3))",
    "mx.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3).T)",
    "mx.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2])",
    "mx.from_dlpack(np.lib.stride_tricks.as_strided(np.arange(3.0), (3, 2), (8, 0)))",
    "mx.from_dlpack(np.array(True))",
    "mx.from_dlpack(np.array([1 + 2j], np.complex64))",
    "mx.from_dlpack(np.array([1 + 2j], np.complex128))",
    "mx.from_dlpack(np.array([1, 2**63], np.uint64))",
    "mx.from_dlpack(np.array([1.5], np.float16))",
    "mx.from_dlpack(np.zeros((0, 3))).shape",
    "mx.from_dlpack(np.zeros(()))",
    "mx.from_dlpack(np.zeros((0, 3))[:, ::-1])",
    "mx.from_dlpack(np.arange(6, dtype=np.float32)[::-1])",
    "mx.from_dlpack(np.arange(4.0).reshape(2, 2)[::-1, :])",
    "mx.from_dlpack(np.zeros(3)[::-1], copy=False)",
    "mx.from_dlpack(np.arange(3.0), copy=False)",
    "mx.from_dlpack(np.arange(3.0), copy=True)",
    "mx.from_dlpack(np.arange(3.0), copy=None)",
    "mx.from_dlpack(np.zeros(2).__dlpack__())",
    "mx.from_dlpack(a)",
    "mx.from_dlpack(a) is a",
    "mx.from_dlpack(a, copy=False)",
    "mx.from_dlpack(mx.array(1.0, mx.float64))",
    "mx.from_dlpack(mx.arange(6).reshape(2, 3).T)",
    "mx.from_dlpack(mx.array([1, 2], mx.bfloat16))",
    "mx.from_dlpack(torch.arange(3.0))",
    "mx.from_dlpack(torch.arange(3.0, dtype=torch.bfloat16))",
    "mx.from_dlpack(torch.arange(3.0, dtype=torch.bfloat16)).dtype",
    "mx.from_dlpack(torch.tensor([True, False]))",
    "mx.from_dlpack(torch.arange(3.0, dtype=torch.float64))",
    "mx.from_dlpack(torch.arange(6.0).reshape(2, 3).t())",
    "mx.from_dlpack(torch.arange(3.0, requires_grad=True))",
    "mx.from_dlpack(torch.zeros(2, dtype=torch.complex128))",
    "mx.from_dlpack(torch.zeros(2, dtype=torch.uint32))",
    "mx.from_dlpack(torch.zeros(2, dtype=torch.float8_e4m3fn))",
    "mx.from_dlpack(Producer(np.arange(3.0)))",
    "mx.from_dlpack(memoryview(b'ab'))",
    "mx.from_dlpack(b'ab')",
    "mx.from_dlpack(pyarr.array('d', [1.0, 2.0]))",
    "mx.from_dlpack(pyarr.array('i', [1, 2]))",
    "mx.from_dlpack(np.array([1.5], dtype='>f4'))",
    "mx.from_dlpack(np.zeros(2, np.longdouble))",
    "mx.from_dlpack(np.array(['a']))",
    "mx.from_dlpack(DeviceOnly())",
    "mx.from_dlpack(1)",
    "mx.from_dlpack([1, 2])",
    "mx.from_dlpack(None)",
    "mx.from_dlpack()",
    "mx.from_dlpack(x=a)",
    "mx.from_dlpack(a, copy=1)",
    "mx.from_dlpack(a, True)",
]


@pytest.mark.parametrize("expr", DLPACK)
def test_from_dlpack(expr):
    _same(expr, DLPACK_SETUP)


def test_from_dlpack_copies():
    src = np.arange(3.0, dtype=np.float32)
    x = mx.from_dlpack(src)
    src[0] = 9.0
    assert x.tolist() == [0.0, 1.0, 2.0]


# -- get_array_buffer_size ------------------------------------------------------------------

# (MLX counts the allocator's size of a buffer, which a recycled buffer can exceed: its
# cache is emptied before each array is made)
BUFFER_SETUP = """
def ev(x):
    mx.clear_cache()
    mx.eval(x)
    return x
mx.clear_cache()
a = ev(mx.array([1.0, 2.0, 3.0]))
b = ev(mx.array(np.zeros(1000, np.float32)))
m = ev(mx.array([[1.0, 2.0], [3.0, 4.0]]))
mx.clear_cache()
"""

BUFFERS = [
    "mx.get_array_buffer_size(a)",
    "mx.get_array_buffer_size(b)",
    "mx.get_array_buffer_size(a, a)",
    "mx.get_array_buffer_size(a, b)",
    "mx.get_array_buffer_size([a, b], {'x': a}, (m,))",
    "mx.get_array_buffer_size()",
    "mx.get_array_buffer_size(1, 's', None, [2.0])",
    "mx.get_array_buffer_size(ev(a[1:]))",
    "mx.get_array_buffer_size(a, ev(a[1:]), ev(a[::2]))",
    "mx.get_array_buffer_size(ev(m.T), ev(m.reshape(4)), m)",
    "mx.get_array_buffer_size(ev(a * 2))",
    "mx.get_array_buffer_size(ev(a[::2] + 0))",
    "mx.get_array_buffer_size(ev(mx.sum(a)))",
    "mx.get_array_buffer_size(ev(mx.concatenate([a, a])))",
    "mx.get_array_buffer_size(ev(mx.broadcast_to(a[:1], (1000,))))",
    "mx.get_array_buffer_size(a * 2)",
    "mx.get_array_buffer_size([a, mx.exp(a)])",
    "mx.get_array_buffer_size(mx.array(1.0))",
    "mx.get_array_buffer_size(mx.array(True))",
    "mx.get_array_buffer_size(mx.array(np.arange(17, dtype=np.int8)))",
    "mx.get_array_buffer_size(mx.from_dlpack(np.zeros((4, 5), np.float32).T))",
    *(f"mx.get_array_buffer_size(mx.array([1, 2], mx.{d}))" for d in (
        "bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
        "float16", "bfloat16", "float32", "float64", "complex64")),
]


@pytest.mark.parametrize("expr", BUFFERS)
def test_get_array_buffer_size(expr):
    _same(expr, BUFFER_SETUP)


# -- export_to_dot --------------------------------------------------------------------------

DOT_SETUP = """
import io
import os
import tempfile
import re
def norm(text):
    ids = {}
    text = re.sub(r"\\b\\d{5,}\\b", lambda m: ids.setdefault(m.group(0), f"P{len(ids)}"), text)
    return re.sub(r'label ="[^"]*"', 'label ="?"', text)
def dot(*args, **kwargs):
    f = io.StringIO()
    mx.export_to_dot(f, *args, **kwargs)
    return norm(f.getvalue())
def dot_file(*args):
    path = os.path.join(tempfile.mkdtemp(), "graph.dot")
    mx.export_to_dot(path, *args)
    with open(path) as f:
        return norm(f.read())
x = mx.array([1.0, 2.0])
y = mx.array([2.0, 3.0])
mx.eval(x, y)
z = mx.exp(x * y) + x
"""

DOT = [
    "dot(mx.array(1.0) + mx.array(2.0))",
    "dot(x + y, x=x, y=y)",
    "dot(z)",
    "dot(z, x * y)",
    "dot(x * y, z)",
    "dot(z, z=z, x=x)",
    "dot(x)",
    "dot()",
    "dot(n=x)",
    "dot(x, n=x, m=x)",
    "dot([z, x], {'k': z})",
    "dot(mx.exp(mx.sin(x)) * mx.cos(y))",
    "dot(mx.depends(mx.exp(x), mx.sin(y)))",
    "dot(mx.depends(mx.exp(x), [mx.sin(y), y]))",
    "dot_file(mx.exp(x))",
    "dot(mx.exp(x), 1)",
    "dot(mx.exp(x), None)",
    "dot(mx.exp(x), n=1)",
    "dot(mx.exp(x), n=[x])",
    "dot(mx.exp(x), (x, 's'))",
    "mx.export_to_dot(3, x)",
    "mx.export_to_dot(None, x)",
    "mx.export_to_dot(x)",
    "mx.export_to_dot()",
    "mx.export_to_dot('/nonexistent/dir/graph.dot', x)",
    "mx.export_to_dot(b'graph.dot', x)",
    "mx.export_to_dot(file=io.StringIO(), n=x)",
    "mx.export_to_dot(io.StringIO(), x, file=x)",
    "mx.export_to_dot(None, np.zeros(1), 1.5, mx.float32, mx.cpu, k=None)",
]


@pytest.mark.parametrize("expr", DOT)
def test_export_to_dot(expr):
    _same(expr, DOT_SETUP, show=str)


def test_export_to_dot_names_many_arrays_past_z():
    setup = DOT_SETUP + "s = mx.array(0.0)\nfor i in range(1, 30):\n    s = s + mx.array(float(i))"
    _same("dot(s)", setup, show=str)


def test_export_to_dot_labels_nodes_with_ember_primitives():
    x = mx.array([1.0, 2.0])
    f = io.StringIO()
    mx.export_to_dot(f, mx.depends(mx.exp(x), mx.sin(x)), x=x)
    labels = re.findall(r'label ="([^"]*)"', f.getvalue())
    # (mx.exp is the MLX face's own saturating member of the unary family: _saturating.py)
    assert labels == ["unary.mlx_exp", "unary.sin", "depends"]
    assert f.getvalue().startswith('digraph {\n{ rank=source; "x"; }\n')


# -- the types of `x.at` and `iter(x)`, and ArrayLike ---------------------------------------

TYPES_SETUP = """
a = mx.array([[1, 2], [3, 4], [5, 6]])
at = a.at
it = iter(a)
"""

TYPES = [
    "type(a.at) is mx.ArrayAt",
    "repr(type(a.at))",
    "repr(a.at)[:26]",
    "type(a.at[0]) is mx.ArrayAt",
    "a.at[0] is a.at[0]",
    "sorted(k for k in dir(mx.ArrayAt) if not k.startswith('_'))",
    "mx.ArrayAt()",
    "mx.ArrayAt(a)",
    "a.at.add(1)",
    "a.at.subtract(1)",
    "a.at.multiply(2)",
    "a.at.divide(2)",
    "a.at.maximum(2)",
    "a.at.minimum(2)",
    "a.at.add('x')",
    "a.at[None].add(1)",
    "a.at[1].add(1)",
    "a.at[1][0].add(10)",
    "a.at[0, 1].add(10)",
    "type(a.at['x']).__name__",
    "(at[1], at.add(1))[1]",  # (`[idx]` sets the index of the object indexed too)
    "(at[1][0], at.add(1))[1]",
    "a.at.foo",
    "type(it) is mx.ArrayIterator",
    "repr(type(it))",
    "repr(it)[:32]",
    "mx.ArrayIterator()",
    "mx.ArrayIterator(a)",
    "(next(it), next(it), next(it))",
    "(next(it), next(it), next(it), next(it))",
    "(next(it), list(it))",
    "(next(it), list(iter(it)), list(it))",  # (iter() of it is a copy at its place)
    "iter(it) is it",
    "len(it)",
    "iter(mx.array(1))",
    "list(mx.zeros((0, 2)))",
    "list(mx.array([[1], [2]]))",
    "[v.item() for v in mx.arange(3) * 2]",
    "repr(mx.ArrayLike)",
    "type(mx.ArrayLike(a)).__name__",
    "type(mx.ArrayLike(1)).__name__",
    "repr(mx.ArrayLike(1))[:27]",
    "isinstance(a, mx.ArrayLike)",
    "isinstance(np.zeros(2), mx.ArrayLike)",
    "mx.ArrayLike(1).__dict__",
    "mx.ArrayLike()",
    "mx.ArrayLike(None)",
    "mx.ArrayLike(a, 1)",
    "mx.ArrayLike(arg=a)",
    "[c.__module__ for c in (mx.ArrayAt, mx.ArrayIterator, mx.ArrayLike)]",
]


@pytest.mark.parametrize("expr", TYPES)
def test_array_types(expr):
    _same(expr, TYPES_SETUP)


def test_iterating_reads_the_array_as_it_was():
    setup = """
b = mx.array([1.0, 2.0, 3.0])
seen = []
for i, row in enumerate(b):
    if i == 0:
        b[1] = 7.0
    seen.append(row)
c = mx.arange(4)
it = iter(c)
c[...] = mx.array([9, 9, 9, 9])
"""
    _same("(seen, b, list(it))", setup)
