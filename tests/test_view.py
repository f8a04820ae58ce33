"""The strided view layer: stride arithmetic (`ember._view`) and chains of view ops vs torch.

The property test draws a starting shape and a chain of view ops, applies the
chain to an ember tensor and a torch tensor over the same values, and checks after
every step that shape, stride, storage offset, contiguity, values and memory
sharing agree (or that both raise the same exception type).
"""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember
from ember import _view as V

# --- pure stride arithmetic ------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (4, 1, 5), (2, 0, 3), (1, 1)])
def test_contiguous_strides_match_torch(shape):
    assert V.contiguous_strides(shape) == torch.empty(shape).stride()


def test_is_contiguous_ignores_size_one_dims_and_empty_tensors():
    cases = [torch.empty(4, 1).t(), torch.empty(2, 3).t(), torch.empty(3, 4)[:, :1],
             torch.empty(3, 4)[::2], torch.empty(0, 3).t(), torch.empty(2, 3, 0).permute(2, 0, 1),
             torch.empty(1, 3)[:, ::2], torch.empty(3).expand(2, 3), torch.empty(1).expand(1)]
    for t in cases:
        assert V.is_contiguous(tuple(t.shape), t.stride()) == t.is_contiguous(), t.stride()


def test_broadcast_shapes_and_its_error():
    assert V.broadcast_shapes((2, 1, 3), (4, 1), ()) == tuple(
        torch.broadcast_shapes((2, 1, 3), (4, 1), ()))
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match.*\(4\)"):
        V.broadcast_shapes((2, 3), (4,))


def test_view_strides_agree_with_torch_view():
    base = torch.empty(2, 3, 4)
    for t in (base, base.transpose(0, 1), base[:, 1:], base[..., ::2], base.permute(2, 0, 1)):
        for target in [(-1,), (6, 4), (2, 12), (3, 2, 4), (2, 3, 2, 2), (24, 1)]:
            if t.numel() != 24 and -1 not in target:
                continue
            size = V.infer_size(target, t.numel())
            got = V.view_strides(tuple(t.shape), t.stride(), size)
            try:
                want = t.view(size).stride()
            except RuntimeError:
                want = None
            assert got == want, (t.shape, t.stride(), size)


def test_infer_size_errors_match_torch():
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        V.infer_size((-1, -1), 6)
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        V.infer_size((4, -1), 6)
    for bad in [(-1, -1), (4, -1), (5,)]:
        with pytest.raises(RuntimeError):
            torch.empty(6).view(bad)


def test_like_strides_match_empty_like():
    base = torch.empty(2, 3, 4)
    for t in (base.permute(2, 0, 1), base[:, ::2], base.transpose(0, 2)[1:],
              torch.empty(3, 1).expand(3, 4), torch.empty(0, 3).t()):
        assert V.like_strides(tuple(t.shape), t.stride()) == torch.empty_like(t).stride()
        assert V.is_non_overlapping_and_dense(tuple(t.shape), t.stride()) == (
            torch.empty_like(t).stride() == t.stride())


# --- random chains of view ops -----------------------------------------------------------

def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0] if n else [0, 1]


@st.composite
def _index(draw, shape):
    """A basic index: ints, positive-step slices, None and at most one Ellipsis."""
    items, dim = [], 0
    used_ellipsis = False
    while dim < len(shape) and draw(st.booleans()):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis"]))
        n = shape[dim]
        if kind == "int" and n > 0:
            items.append(draw(st.integers(-n, n - 1)))
            dim += 1
        elif kind == "slice":
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            items.append(slice(start, stop, draw(st.sampled_from([None, 1, 2, 3]))))
            dim += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            items.append(Ellipsis)
            dim = len(shape) - draw(st.integers(0, len(shape) - dim))
    return tuple(items)


def _draw_op(data, shape):
    """One view op (name, fn(module, tensor)) with parameters valid for `shape` (mostly)."""
    nd = len(shape)
    n = int(np.prod(shape))
    dim = st.integers(-nd, nd - 1) if nd else st.just(0)
    names = ["reshape", "view", "unsqueeze", "index", "squeeze", "flatten", "contiguous",
             "clone", "view_dtype"]
    if nd:
        names += ["transpose", "permute", "expand", "narrow", "select", "unbind", "split",
                  "chunk", "unfold", "movedim", "unflatten", "as_strided"]
    if nd >= 2:
        names += ["diagonal", "mT"]
    if nd <= 2:
        names += ["t"]
    name = data.draw(st.sampled_from(names), label="op")
    draw = data.draw
    if name in ("reshape", "view"):
        target = list(shape)
        how = draw(st.sampled_from(["flat", "merge", "split", "one", "infer"]))
        if how == "flat":
            target = [-1]
        elif how == "merge" and nd >= 2:
            i = draw(st.integers(0, nd - 2))
            target[i:i + 2] = [shape[i] * shape[i + 1]]
        elif how == "split" and nd:
            i = draw(st.integers(0, nd - 1))
            a = draw(st.sampled_from(_divisors(shape[i])))
            target[i:i + 1] = [a, shape[i] // a if a else 0]
        elif how == "one":
            target.insert(draw(st.integers(0, nd)), 1)
        elif how == "infer" and nd and n:
            target[draw(st.integers(0, nd - 1))] = -1
        target = tuple(target)
        return f"{name}{target}", lambda m, x: getattr(x, name)(target)
    if name == "transpose":
        a, b = draw(dim), draw(dim)
        return f"transpose({a},{b})", lambda m, x: x.transpose(a, b)
    if name == "permute":
        perm = tuple(draw(st.permutations(range(nd))))
        return f"permute{perm}", lambda m, x: x.permute(*perm)
    if name == "mT":
        return "mT", lambda m, x: x.mT
    if name == "t":
        return "t", lambda m, x: x.t()
    if name == "expand":
        lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
        sizes = tuple(draw(st.integers(1, 3)) if s == 1 else draw(st.sampled_from([s, -1]))
                      for s in shape)
        return f"expand{lead + sizes}", lambda m, x: x.expand(*(lead + sizes))
    if name == "squeeze":
        d = draw(st.none() | dim)
        return f"squeeze({d})", lambda m, x: x.squeeze() if d is None else x.squeeze(d)
    if name == "unsqueeze":
        d = draw(st.integers(-nd - 1, nd))
        return f"unsqueeze({d})", lambda m, x: x.unsqueeze(d)
    if name == "flatten":
        a, b = (draw(dim), draw(dim)) if nd else (0, -1)
        return f"flatten({a},{b})", lambda m, x: x.flatten(a, b)
    if name == "unflatten":
        d = draw(dim)
        a = draw(st.sampled_from(_divisors(shape[d])))
        sizes = (a, -1) if a else (0, 1)
        return f"unflatten({d},{sizes})", lambda m, x: x.unflatten(d, sizes)
    if name == "narrow":
        d = draw(dim)
        size = shape[d]
        start = draw(st.integers(0, size))
        length = draw(st.integers(0, size - start))
        return f"narrow({d},{start},{length})", lambda m, x: x.narrow(d, start, length)
    if name == "select":
        d = draw(dim)
        i = draw(st.integers(-shape[d], max(shape[d] - 1, 0)))
        return f"select({d},{i})", lambda m, x: x.select(d, i)
    if name in ("unbind", "split", "chunk"):
        d = draw(dim)
        k = draw(st.integers(1, 3))
        pick = draw(st.integers(0, 5))

        def piece(m, x, name=name, d=d, k=k, pick=pick):
            parts = x.unbind(d) if name == "unbind" else getattr(x, name)(k, d)
            return parts[pick % len(parts)] if parts else x
        return f"{name}({k},{d})[{pick}]", piece
    if name == "diagonal":
        off = draw(st.integers(-3, 3))
        a, b = draw(dim), draw(dim)
        return f"diagonal({off},{a},{b})", lambda m, x: x.diagonal(off, a, b)
    if name == "unfold":
        d = draw(dim)
        size = draw(st.integers(0, max(shape[d], 0)))
        step = draw(st.integers(1, 3))
        return f"unfold({d},{size},{step})", lambda m, x: x.unfold(d, size, step)
    if name == "movedim":
        src, dst = draw(dim), draw(dim)
        return f"movedim({src},{dst})", lambda m, x: x.movedim(src, dst)
    if name == "as_strided":
        size = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
        stride = tuple(draw(st.integers(0, 4)) for _ in size)
        off = draw(st.none() | st.integers(0, 4))
        return (f"as_strided({size},{stride},{off})",
                lambda m, x: x.as_strided(size, stride, off))
    if name == "index":
        key = draw(_index(shape))
        return f"[{key}]", lambda m, x: x[key]
    if name == "view_dtype":
        # same size, smaller and larger element types (the last two reshape the last dim)
        target = draw(st.sampled_from(["int32", "int16", "float64"]))
        return f"view({target})", lambda m, x: x.view(getattr(m, target))
    return name, lambda m, x: getattr(x, name)()


def _storage_ptr(x):
    return x.untyped_storage().data_ptr()


def _assert_same_view(e, t, e_base, t_base, trail):
    assert tuple(e.shape) == tuple(t.shape), trail
    assert repr(e.dtype).split(".")[1] == repr(t.dtype).split(".")[1], trail
    assert e.stride() == t.stride(), trail
    assert e.storage_offset() == t.storage_offset(), trail
    assert e.is_contiguous() == t.is_contiguous(), trail
    assert (_storage_ptr(e) == _storage_ptr(e_base)) == (_storage_ptr(t) == _storage_ptr(t_base)), \
        trail
    np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=trail)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.lists(st.integers(0, 4), max_size=4), data=st.data())
def test_random_view_chains_agree_with_torch(shape, data):
    shape = tuple(shape)
    n = int(np.prod(shape))
    e_base = ember.arange(n, dtype=ember.float32).reshape(shape)
    t_base = torch.arange(n, dtype=torch.float32).reshape(shape)
    e, t = e_base, t_base
    trail = f"start {shape}"
    for _ in range(data.draw(st.integers(1, 6), label="length")):
        name, fn = _draw_op(data, tuple(t.shape))
        trail += f" -> {name}"
        try:
            t_next = fn(torch, t)
        except (RuntimeError, IndexError, ValueError, TypeError) as err:
            with pytest.raises(type(err)):
                fn(ember, e)
            return
        e, t = fn(ember, e), t_next
        _assert_same_view(e, t, e_base, t_base, trail)
    # Writing through the final view lands in the same places of the base.
    if e.numel() and V.non_overlapping(tuple(t.shape), t.stride()):
        e.numpy()[...] = -1
        t.numpy()[...] = -1
        np.testing.assert_array_equal(e_base.numpy(), t_base.numpy(), err_msg=trail)


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((2, 3, 4), (5, 1, 6)), ((3,), (2, 4)),
                                   ((2, 1), (3, 4, 5))])
def test_broadcast_error_names_the_last_clashing_dim_as_torch(sa, sb):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            m.zeros(sa) + m.zeros(sb)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_pointwise_strides_worked_by_hand():
    # TensorIterator's layout rule on (shape, strides) operands; a number is ((), ())
    cases = [
        # all one shape and contiguous (size-1 dims ignored): row-major, the fast setup
        ((1, 4), [((1, 4), (1, 1))], (4, 1)),
        # all one shape, dense, the same strides: those strides, a size-1 dim's too
        ((2, 1, 3), [((2, 1, 3), (1, 7, 2))], (1, 7, 2)),
        # a number operand: dims sorted by strides; a tie goes to the larger dim outside
        ((1, 4), [((1, 4), (1, 1)), ((), ())], (1, 1)),
        ((4, 1), [((4, 1), (1, 4)), ((), ())], (1, 4)),
        # the first operand with an opinion decides; a broadcast (size-1) dim abstains
        ((3, 4), [((3, 1), (1, 1)), ((3, 4), (1, 3))], (1, 3)),
        ((3, 4), [((3, 4), (4, 1)), ((3, 4), (1, 3))], (4, 1)),
        # a size-0 dim zeroes the strides outside it in a non-row-major order
        ((0, 3), [((0, 3), (1, 1)), ((), ())], (1, 0)),
        # one channels-last 4-d operand alone: channels-last
        ((2, 3, 4, 5), [((2, 3, 4, 5), (60, 1, 15, 3))], (60, 1, 15, 3)),
        ((2, 3, 4, 5), [((2, 3, 4, 5), (60, 1, 15, 3)), ((2, 3, 4, 5), (60, 20, 5, 1))],
         (60, 1, 15, 3)),
    ]
    for shape, operands, want in cases:
        assert V.pointwise_strides(shape, operands) == want, (shape, operands)
