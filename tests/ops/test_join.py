"""cat / stack family, repeat / tile / repeat_interleave, broadcasting, flip / roll / rot90,
meshgrid, cartesian_prod, combinations against torch."""

import re
import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import DTYPE_PAIRS, assert_same, check_grads, check_op, rand_array, to_torch

DTYPES = [(np.float32, ember.float32), (np.float64, ember.float64), (np.int64, ember.int64),
          (np.int32, ember.int32), (np.bool_, ember.bool), (np.float16, ember.float16)]


def _e(a):
    return ember.tensor(a)


def _t(a):
    return torch.tensor(a)


def both(fn, **kw):
    out_e, out_t = fn(ember, _e), fn(torch, _t)
    assert_same(out_e, out_t, **kw)
    return out_e


def raises_like_torch(exc, fn):
    with pytest.raises(exc):
        fn(torch, _t)
    with pytest.raises(exc):
        fn(ember, _e)


# --- cat ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_values_and_grads(dim):
    shapes = [(2, 3, 4), (2, 3, 4)]
    shapes = [tuple(n + i if d == dim % 3 else n for d, n in enumerate(s))
              for i, s in enumerate(shapes)] + [shapes[0]]
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    check_op(lambda *xs: ember.cat(xs, dim), lambda *xs: torch.cat(xs, dim), *arrays)


def test_cat_aliases_out_and_single_input():
    a, b = rand_array((2, 3)), rand_array((1, 3), seed=1)
    check_op(lambda x, y: ember.concat((x, y)), lambda x, y: torch.concat((x, y)), a, b)
    check_op(lambda x, y: ember.concatenate([y.t(), x.t()], axis=1),
             lambda x, y: torch.concatenate([y.t(), x.t()], axis=1), a, b)
    check_op(lambda x: ember.cat([x]), lambda x: torch.cat([x]), a)
    out_e, out_t = ember.empty(3, 3), torch.empty(3, 3)
    ember.cat([_e(a), _e(b)], out=out_e)
    torch.cat([_t(a), _t(b)], out=out_t)
    assert_same(out_e, out_t)


@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("db", DTYPES)
def test_cat_promotes_dtypes_like_torch(da, db):
    a = rand_array((2, 2), da[0], seed=1)
    b = rand_array((1, 2), db[0], seed=2)
    both(lambda lib, c: lib.cat([c(a), c(b)]))


def test_cat_bfloat16_and_noncontiguous():
    a = ember.tensor(rand_array((2, 3))).to(ember.bfloat16)
    b = ember.tensor(rand_array((2, 3), seed=3))
    assert_same(ember.cat([a, b.t().t()]), torch.cat([torch.tensor(a.float().numpy()).bfloat16(),
                                                      torch.tensor(b.numpy())]))
    check_op(lambda x, y: ember.cat([x.t(), y[:, ::2]], 1),
             lambda x, y: torch.cat([x.t(), y[:, ::2]], 1),
             rand_array((3, 4)), rand_array((4, 6), seed=1))


def test_cat_skips_legacy_empty_1d_tensors():
    both(lambda lib, c: lib.cat([c(rand_array((2, 3))), lib.zeros(0)]))
    both(lambda lib, c: lib.cat([lib.zeros(0), lib.zeros(0)]))
    both(lambda lib, c: lib.cat([lib.zeros(2, 0), lib.zeros(2, 3)], 1))


def test_cat_grad_fn_and_double_backward():
    x = ember.tensor(rand_array((2,), np.float64), requires_grad=True)
    y = ember.cat([x, x * x])
    assert type(y.grad_fn).__name__ == "CatBackward0"
    check_grads(lambda a, b: ember.cat([a * b, b.exp()], 0) ** 2, rand_array((2, 2)),
                rand_array((2, 2), seed=1))
    (g,) = ember.autograd.grad((y ** 2).sum(), x, create_graph=True)
    g.sum().backward()
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    (tg,) = torch.autograd.grad((torch.cat([tx, tx * tx]) ** 2).sum(), tx, create_graph=True)
    tg.sum().backward()
    assert_same(x.grad, tx.grad)


@pytest.mark.parametrize("fn, exc", [
    (lambda lib, c: lib.cat([]), ValueError),
    (lambda lib, c: lib.cat([lib.zeros(2, 3), lib.zeros(2, 4)]), RuntimeError),
    (lambda lib, c: lib.cat([lib.zeros(2, 3), lib.zeros(3)]), RuntimeError),
    (lambda lib, c: lib.cat([lib.tensor(1.0), lib.tensor(2.0)]), RuntimeError),
    (lambda lib, c: lib.cat([lib.zeros(2, 3), lib.zeros(2, 3)], 2), IndexError),
    (lambda lib, c: lib.cat(lib.zeros(2, 3)), TypeError),
    (lambda lib, c: lib.stack([]), RuntimeError),
    (lambda lib, c: lib.stack([lib.zeros(2), lib.zeros(3)]), RuntimeError),
    (lambda lib, c: lib.stack([lib.zeros(2), lib.zeros(2)], 2), IndexError),
])
def test_cat_and_stack_errors(fn, exc):
    raises_like_torch(exc, fn)


def test_cat_mismatch_message_matches_torch():
    with pytest.raises(RuntimeError) as te:
        torch.cat([torch.zeros(2, 3), torch.zeros(2, 4)])
    with pytest.raises(RuntimeError) as ee:
        ember.cat([ember.zeros(2, 3), ember.zeros(2, 4)])
    assert str(ee.value) == str(te.value)


def test_cat_on_meta():
    e = ember.cat([ember.empty(2, 3, device="meta"), ember.empty(4, 3, device="meta",
                                                                dtype=ember.float64)])
    t = torch.cat([torch.empty(2, 3, device="meta"), torch.empty(4, 3, device="meta",
                                                                dtype=torch.float64)])
    assert_same(e, t, check_stride=True)


# --- stack family --------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_values_and_grads(dim):
    arrays = [rand_array((2, 3), np.float64, seed=i) for i in range(3)]
    check_op(lambda *xs: ember.stack(xs, dim), lambda *xs: torch.stack(xs, dim), *arrays,
             check_stride=True)


def test_stack_of_transposed_inputs_is_contiguous_like_torch():
    check_op(lambda *xs: ember.stack([x.t() for x in xs], 1),
             lambda *xs: torch.stack([x.t() for x in xs], 1),
             rand_array((3, 4)), rand_array((3, 4), seed=1), check_stride=True)


def test_stack_promotes_and_on_meta():
    both(lambda lib, c: lib.stack([c(np.arange(3)), c(np.ones(3, np.float32))], 1))
    e = ember.stack([ember.empty(2, 3, device="meta")] * 2, 1)
    t = torch.stack([torch.empty(2, 3, device="meta")] * 2, 1)
    assert_same(e, t, check_stride=True)


SHAPE_SETS = [[(), (3,)], [(3,), (3,)], [(2, 3), (2, 1)], [(2, 3, 1), (2, 3, 2)], [(3,), ()]]


@pytest.mark.parametrize("shapes", SHAPE_SETS)
@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
def test_hvd_column_stack(name, shapes):
    arrays = [rand_array(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = getattr(torch, name)([torch.tensor(a) for a in arrays])
    except RuntimeError:
        with pytest.raises(RuntimeError):
            getattr(ember, name)([ember.tensor(a) for a in arrays])
        return
    check_op(lambda *xs: getattr(ember, name)(xs), lambda *xs: getattr(torch, name)(xs),
             *arrays)
    assert expected.shape == getattr(ember, name)([ember.tensor(a) for a in arrays]).shape


# --- repeat / tile / repeat_interleave -----------------------------------------------------

@pytest.mark.parametrize("reps", [(2, 1), (1, 3), (2, 2, 2), (3, 0, 1), (1, 1)])
def test_repeat_values_and_grads(reps):
    check_op(lambda x: x.repeat(*reps), lambda x: x.repeat(*reps), rand_array((2, 3), np.float64))


def test_repeat_edge_cases():
    check_op(lambda x: x.repeat(2, 3), lambda x: x.repeat(2, 3), np.array(1.5))
    check_op(lambda x: x.t().repeat((2, 1)), lambda x: x.t().repeat((2, 1)), rand_array((2, 3)))
    both(lambda lib, c: c(np.arange(4).reshape(2, 2)).repeat(1, 2))
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(2, 3).repeat(2))
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(2, 3).repeat(-1, 1))
    check_grads(lambda x: x.repeat(3, 2) ** 2, rand_array((2, 2)))
    e = ember.empty(2, 3, device="meta").repeat(2, 1, 2)
    assert_same(e, torch.empty(2, 3, device="meta").repeat(2, 1, 2), check_stride=True)


@pytest.mark.parametrize("dims", [(2,), (2, 1), (1, 2, 2), 3])
def test_tile_matches_torch(dims):
    check_op(lambda x: x.tile(dims), lambda x: x.tile(dims), rand_array((2, 3), np.float64))
    fdims = (dims,) if isinstance(dims, int) else dims
    check_op(lambda x: ember.tile(x, fdims), lambda x: torch.tile(x, fdims), rand_array((3,)))
    raises_like_torch(TypeError, lambda lib, c: lib.tile(lib.zeros(2), 2))


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_repeat_interleave_values_and_grads(dim):
    x = rand_array((2, 3), np.float64)
    check_op(lambda t: t.repeat_interleave(2, dim), lambda t: t.repeat_interleave(2, dim), x)
    n = 6 if dim is None else x.shape[dim]
    reps = np.arange(n) % 3
    check_op(lambda t: ember.repeat_interleave(t, _e(reps), dim),
             lambda t: torch.repeat_interleave(t, _t(reps), dim), x)


def test_repeat_interleave_counts_only_and_errors():
    both(lambda lib, c: lib.repeat_interleave(c(np.array([1, 0, 3]))))
    both(lambda lib, c: lib.repeat_interleave(c(np.arange(3)), c(np.array(2)), dim=0))
    both(lambda lib, c: lib.repeat_interleave(c(np.arange(3)), 2, output_size=6))
    raises_like_torch(RuntimeError, lambda lib, c: lib.repeat_interleave(
        lib.zeros(2, 3), c(np.array([1, 2])), dim=1))
    raises_like_torch(RuntimeError, lambda lib, c: lib.repeat_interleave(
        lib.zeros(2, 3), c(np.array([-1, 2])), dim=0))


# --- broadcasting ---------------------------------------------------------------------------

def test_broadcast_shapes_and_tensors():
    for shapes in [((2, 1), (3,)), ((1,), ()), (4, (3, 1)), ((5, 1, 2), (1, 3, 1), (2,))]:
        assert ember.broadcast_shapes(*shapes) == torch.broadcast_shapes(*shapes)
    assert isinstance(ember.broadcast_shapes((2, 1), (3,)), ember.Size)
    raises_like_torch(RuntimeError, lambda lib, c: lib.broadcast_shapes((2, 3), (3, 3)))
    with pytest.raises(RuntimeError) as te:
        torch.broadcast_shapes((2, 3), (3, 3))
    with pytest.raises(RuntimeError) as ee:
        ember.broadcast_shapes((2, 3), (3, 3))
    assert str(ee.value) == str(te.value)
    check_op(lambda a, b: ember.broadcast_tensors(a, b), lambda a, b: torch.broadcast_tensors(a, b),
             rand_array((2, 1)), rand_array((3,), seed=1), check_stride=True)
    raises_like_torch(RuntimeError, lambda lib, c: lib.broadcast_tensors(lib.zeros(2, 3),
                                                                         lib.zeros(2, 4)))


# --- flip / roll / rot90 ------------------------------------------------------------------

@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2), (-1,), ()])
def test_flip_values_grads_and_layout(dims):
    check_op(lambda x: x.flip(dims), lambda x: x.flip(dims), rand_array((2, 3, 4), np.float64))
    check_op(lambda x: x.transpose(0, 2).flip(dims), lambda x: x.transpose(0, 2).flip(dims),
             rand_array((2, 3, 4)), check_stride=True)


def test_flip_method_takes_varargs():
    both(lambda lib, c: c(rand_array((2, 3))).flip(0, 1))
    both(lambda lib, c: c(rand_array((2, 3))).flip(1))
    raises_like_torch(TypeError, lambda lib, c: lib.flip(lib.zeros(2), 0))


def test_fliplr_flipud_and_errors():
    check_op(ember.fliplr, torch.fliplr, rand_array((2, 3)))
    check_op(ember.flipud, torch.flipud, rand_array((2, 3)))
    both(lambda lib, c: lib.flip(c(np.array(2.0)), (0,)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.fliplr(lib.zeros(3)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.flipud(lib.tensor(1.0)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.flip(lib.zeros(2, 3), (0, 0)))
    e = ember.empty(3, 4, device="meta").t().flip(0)
    assert_same(e, torch.empty(3, 4, device="meta").t().flip(0), check_stride=True)


@pytest.mark.parametrize("shifts, dims", [(1, 0), (-2, 1), ((1, 2), (0, 1)), (5, None),
                                          ((3,), (-1,)), ([4], [])])  # (no dims: flattened)
def test_roll_values_and_grads(shifts, dims):
    check_op(lambda x: x.roll(shifts, dims), lambda x: x.roll(shifts, dims),
             rand_array((3, 4), np.float64))
    check_op(lambda x: ember.roll(x.t(), shifts, dims), lambda x: torch.roll(x.t(), shifts, dims),
             rand_array((4, 3)), check_stride=True)


def test_roll_errors():
    raises_like_torch(RuntimeError, lambda lib, c: lib.roll(lib.zeros(2, 3), (1, 2)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.roll(lib.zeros(2, 3), (1, 2), (0,)))
    for shifts, dims in (((), None), ((), ()), ([], 0), ((1, 2), [])):
        messages = []
        for lib in (torch, ember):
            with pytest.raises(RuntimeError) as info:
                lib.roll(lib.zeros(2, 3), shifts, dims)
            messages.append(str(info.value))
        assert messages[0] == messages[1], (shifts, dims)


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 6])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (0, 2), (-1, -2)])
def test_rot90_values_grads_and_strides(k, dims):
    check_op(lambda x: x.rot90(k, dims), lambda x: x.rot90(k, dims),
             rand_array((2, 3, 4), np.float64), check_stride=True)


def test_rot90_errors():
    raises_like_torch(RuntimeError, lambda lib, c: lib.rot90(lib.zeros(3)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.rot90(lib.zeros(2, 3), 1, (0, 0)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.rot90(lib.zeros(2, 3), 1, (0, 1, 1)))


# --- meshgrid / cartesian_prod / combinations ---------------------------------------------

@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_values_grads_and_strides(indexing):
    arrays = [rand_array((3,), np.float64), rand_array((2,), np.float64, seed=1),
              rand_array((4,), np.float64, seed=2)]
    check_op(lambda *xs: ember.meshgrid(*xs, indexing=indexing),
             lambda *xs: torch.meshgrid(*xs, indexing=indexing), *arrays, check_stride=True)
    check_op(lambda *xs: ember.meshgrid(list(xs), indexing=indexing),
             lambda *xs: torch.meshgrid(list(xs), indexing=indexing), *arrays[:2],
             check_stride=True)
    both(lambda lib, c: lib.meshgrid(c(np.array(2.0)), c(np.arange(3.0)), indexing=indexing))


def test_meshgrid_default_warns_and_errors():
    with pytest.warns(UserWarning, match="indexing argument"):
        out = ember.meshgrid(ember.arange(3), ember.arange(2))
    assert out[0].shape == (3, 2)
    raises_like_torch(RuntimeError, lambda lib, c: lib.meshgrid(lib.arange(3), lib.zeros(2),
                                                                indexing="ij"))
    raises_like_torch(RuntimeError, lambda lib, c: lib.meshgrid(indexing="ij"))
    raises_like_torch(RuntimeError, lambda lib, c: lib.meshgrid(lib.zeros(2, 2), indexing="ij"))


def test_cartesian_prod_matches_torch():
    check_op(lambda a, b, c: ember.cartesian_prod(a, b, c),
             lambda a, b, c: torch.cartesian_prod(a, b, c),
             rand_array((3,), np.float64), rand_array((2,), np.float64, seed=1),
             rand_array((2,), np.float64, seed=2))
    both(lambda lib, c: lib.cartesian_prod(c(np.arange(3))))
    raises_like_torch(RuntimeError, lambda lib, c: lib.cartesian_prod(lib.zeros(2, 2)))


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_matches_torch(r, with_replacement):
    check_op(lambda x: ember.combinations(x, r, with_replacement),
             lambda x: torch.combinations(x, r, with_replacement), rand_array((4,), np.float64))


def test_combinations_errors():
    raises_like_torch(RuntimeError, lambda lib, c: lib.combinations(lib.zeros(2, 2)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.combinations(lib.zeros(3), -1))


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_cat_result_layout_follows_torch(device):
    x = rand_array((2, 3, 4, 5))
    e = ember.tensor(x).to(device).contiguous(memory_format=ember.channels_last)
    t = torch.tensor(x).to(device).contiguous(memory_format=torch.channels_last)
    assert_same(ember.cat([e, e], 1), torch.cat([t, t], 1), check_stride=True)
    assert_same(ember.cat([e, e.contiguous()], 1), torch.cat([t, t.contiguous()], 1),
                check_stride=True)
    assert_same(ember.cat([e[0, 0].t(), e[0, 0].t()], 1), torch.cat([t[0, 0].t(), t[0, 0].t()], 1),
                check_stride=True)


META_CASES = {
    "roll": lambda l, x: l.roll(x, (1, -1), (0, 2)),
    "roll_flat": lambda l, x: x.roll(3),
    "rot90": lambda l, x: x.rot90(1, (1, 2)),
    "flip": lambda l, x: x.flip(1),
    "tile": lambda l, x: x.tile((2, 1, 1, 1)),
    "repeat_interleave": lambda l, x: x.repeat_interleave(2, 1),
    "broadcast_tensors": lambda l, x: l.broadcast_tensors(x, x[:1, :, :1])[1],
    "meshgrid": lambda l, x: l.meshgrid(x[0, 0], x[0, :, 0], indexing="xy")[0],
    "hstack": lambda l, x: l.hstack([x, x]),
    "dstack": lambda l, x: l.dstack([x[0], x[1]]),
    "column_stack": lambda l, x: l.column_stack([x[0, :, 0], x[0]]),
    "stack": lambda l, x: l.stack([x, x], -1),
}


@pytest.mark.parametrize("name", list(META_CASES))
def test_ops_on_meta_report_torch_shape_dtype_strides(name):
    fn = META_CASES[name]
    assert_same(fn(ember, ember.empty(2, 3, 4, device="meta")),
                fn(torch, torch.empty(2, 3, 4, device="meta")), check_stride=True)


JOIN_DTYPE_CASES = {
    "cat": lambda l, t: l.cat([t, t[:1]]),
    "stack": lambda l, t: l.stack([t, t], 1),
    "flip": lambda l, t: t.flip(0),
    "roll": lambda l, t: t.roll(1, 1),
    "repeat": lambda l, t: t.repeat(2, 1),
    "repeat_interleave": lambda l, t: t.repeat_interleave(2, 0),
    "rot90": lambda l, t: t.rot90(),
    "combinations": lambda l, t: l.combinations(t[0]),
    "meshgrid": lambda l, t: l.meshgrid(t[0], t[1], indexing="ij"),
}


@pytest.mark.parametrize("dtype", [e for e, _ in DTYPE_PAIRS], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(JOIN_DTYPE_CASES))
def test_every_dtype_matches_torch(name, dtype):
    fn = JOIN_DTYPE_CASES[name]
    e = ember.tensor(rand_array((3, 4), np.float64, low=-3, high=3)).to(dtype)
    assert_same(fn(ember, e), fn(torch, to_torch(e)))


def _second_derivative(lib, fn, x):
    (g,) = lib.autograd.grad((fn(x) ** 2).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad((g ** 2).sum(), x)
    return g, gg


@pytest.mark.parametrize("name", ["cat", "stack", "flip", "roll", "repeat", "rot90",
                                  "repeat_interleave", "combinations"])
def test_double_backward_matches_torch(name):
    fns = {
        "cat": lambda l, x: l.cat([x, x * x], 1),
        "stack": lambda l, x: l.stack([x, x.exp()], 0),
        "flip": lambda l, x: (x * x).flip((0,)),
        "roll": lambda l, x: (x * x).roll(1, 1),
        "repeat": lambda l, x: (x * x).repeat(2, 1),
        "rot90": lambda l, x: (x * x).rot90(),
        "repeat_interleave": lambda l, x: (x * x).repeat_interleave(2, 0),
        "combinations": lambda l, x: l.combinations((x * x)[0]),
    }
    a = rand_array((2, 3), np.float64)
    xe = ember.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    assert_same(_second_derivative(ember, lambda x: fns[name](ember, x), xe),
                _second_derivative(torch, lambda x: fns[name](torch, x), xt))


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).flip("x"),          # was AttributeError
    lambda L: L.flip(L.ones(2), 1.5),
    lambda L: L.roll(L.ones(2), "x"),       # was ValueError
    lambda L: L.roll(L.ones(2), [1.5], 0),
    lambda L: L.roll(L.tensor(1.0), 1, 0),  # 0-d: IndexError (was NumPy's AxisError)
    lambda L: L.roll(L.tensor(1.0), 1, -1),
    lambda L: L.hstack([]),                 # RuntimeError, not cat's ValueError
    lambda L: L.vstack([]),
])
def test_bad_arguments_raise_pytorchs_error_type(call):
    from helpers import same_error

    same_error(call)


def test_roll_of_a_0d_tensor_without_dims_is_the_tensor():
    from helpers import same_result

    same_result(lambda L: L.roll(L.tensor(1.5), 1))


def _elements_refused(call, kind=TypeError):
    """`call(L)` raises `kind` with the same words in torch and ember."""
    msgs = []
    for L in (torch, ember):
        with pytest.raises(kind) as info:
            call(L)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


@pytest.mark.parametrize("name", ["meshgrid", "broadcast_tensors", "cartesian_prod"])
@pytest.mark.parametrize("args", ["list", "int", "none", "one_list", "nested"])
def test_tensor_list_functions_refuse_non_tensor_elements(name, args):
    """A non-Tensor element is PyTorch's parser TypeError naming its position, not an
    AttributeError from inside ember; meshgrid unpacks one list, the others do not."""
    def call(L):
        a = L.arange(2)
        given = {"list": (a, [1, 2]), "int": (a, 3), "none": (a, None),
                 "one_list": ([a, 3],), "nested": ([[a]],)}[args]
        kw = {"indexing": "ij"} if name == "meshgrid" else {}
        return getattr(L, name)(*given, **kw)

    _elements_refused(call)


def test_broadcast_tensors_takes_tensors_one_by_one():
    _elements_refused(lambda L: L.broadcast_tensors([L.ones(2), L.ones(1)]))
    assert [t.shape for t in ember.broadcast_tensors(ember.ones(2, 1), ember.ones(3))] == \
        [(2, 3), (2, 3)]


@pytest.mark.parametrize("name", ["cat", "concat", "concatenate", "vstack", "row_stack"])
def test_join_aliases_name_themselves_in_argument_errors(name):
    _elements_refused(lambda L: getattr(L, name)(3))
    _elements_refused(lambda L: getattr(L, name)([L.ones(2), 3]))
    _elements_refused(lambda L: getattr(L, name)(L.ones(2), L.ones(2)))
    x = [ember.ones(2, 2), ember.zeros(1, 2)]
    assert getattr(ember, name)(x).tolist() == getattr(torch, name)(
        [torch.ones(2, 2), torch.zeros(1, 2)]).tolist()


@pytest.mark.parametrize("shape,fmt", [((2, 3, 4, 6, 6), "channels_last_3d"),
                                       ((2, 3, 6, 6), "channels_last")])
@pytest.mark.parametrize("shifts,dims", [(1, 2), (-2, 1), ((1, 2), (2, 3)), (0, 2),
                                         ((1, 6), (2, 3)), (3, None)])
def test_roll_keeps_a_channels_last_layout_as_torch(shape, fmt, shifts, dims):
    # each dim's roll is a cat of two slices (the input's format kept); a zero shift (mod
    # the size) is a contiguous clone, and a flat roll a contiguous one
    a = rand_array(shape)
    e = ember.tensor(a).contiguous(memory_format=getattr(ember, fmt))
    t = torch.tensor(a).contiguous(memory_format=getattr(torch, fmt))
    assert_same(ember.roll(e, shifts, dims), torch.roll(t, shifts, dims), rtol=0, atol=0,
                check_stride=True)


def test_roll_of_channels_last_keeps_its_gradient():
    a = rand_array((2, 3, 4, 5), np.float64)
    e = ember.tensor(a).contiguous(memory_format=ember.channels_last).requires_grad_()
    t = torch.tensor(a).contiguous(memory_format=torch.channels_last).requires_grad_()
    g = rand_array((2, 3, 4, 5), np.float64, seed=1)
    ember.roll(e, (1, -2), (1, 3)).backward(ember.tensor(g))
    torch.roll(t, (1, -2), (1, 3)).backward(torch.tensor(g))
    assert_same(e.grad, t.grad, rtol=0, atol=0)


@pytest.mark.parametrize("src,out", [("float32", "int64"), ("int64", "bool"),
                                     ("complex64", "float32"), ("float64", "float32"),
                                     ("int32", "uint8")])
@pytest.mark.parametrize("fn", ["cat", "concat", "stack", "hstack", "vstack", "dstack",
                                "column_stack"])
def test_join_out_of_a_lower_category_is_torchs_type_error(fn, src, out):
    """Regression: cat(..., out=) into an integer `out` from float inputs raised the
    pointwise ops' RuntimeError ("result type Float can't be cast ..."); torch's cat kernel
    (which stack and the h/v/d/column forms run) raises a TypeError in its own words."""
    def call(L):
        o = L.empty(0, dtype=getattr(L, out))
        return getattr(L, fn)([L.ones(2, dtype=getattr(L, src))] * 2, out=o)

    try:
        want = call(torch)
    except TypeError as exc:
        with pytest.raises(TypeError) as got:
            call(ember)
        assert str(got.value) == str(exc)
    else:
        got = call(ember)
        assert got.dtype == getattr(ember, out) and got.tolist() == want.tolist()


def test_stack_of_samples_matches_torch_on_every_path():
    # a batch's collation (row-major samples of one dtype, no graph) and every way out of
    # that path: mixed dtypes, grad wanted, strided samples, unequal shapes, out=
    r = np.random.default_rng(3)
    for shape in [(), (5,), (3, 4), (2, 3, 2)]:
        for dim in range(-len(shape) - 1, len(shape) + 1):
            for dtypes in [("float32",) * 3, ("float16",) * 3, ("bool",) * 3,
                           ("float32", "float64", "int64")]:
                arrs = [(r.standard_normal(shape) * 3).astype(d) for d in dtypes]
                got = ember.stack([ember.tensor(a) for a in arrs], dim)
                want = torch.stack([torch.tensor(a) for a in arrs], dim)
                assert got.dtype == getattr(ember, str(want.dtype)[6:])
                assert got.shape == want.shape and got.stride() == want.stride()
                assert np.array_equal(got.numpy(), want.numpy())
            xs = [ember.tensor(r.standard_normal(shape), requires_grad=True) for _ in range(3)]
            ys = ember.stack(xs, dim)
            assert type(ys.grad_fn).__name__ == "StackBackward0"
            ys.backward(ember.ones(ys.shape))
            assert all(x.grad.numpy().tolist() == np.ones(shape).tolist() for x in xs)
    a = torch.tensor(r.standard_normal((4, 3)))
    e = ember.tensor(a.numpy())
    got, want = ember.stack([e.t(), e.t()]), torch.stack([a.t(), a.t()])
    assert got.stride() == want.stride() and np.array_equal(got.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match=re.escape(
            "stack expects each tensor to be equal size, but got [3] at entry 0 and [2] at "
            "entry 1")):
        ember.stack([ember.ones(3), ember.ones(2)])
    out = ember.empty(2, 3)
    assert ember.stack([ember.ones(3), ember.zeros(3)], out=out) is out
    assert out.numpy().tolist() == [[1, 1, 1], [0, 0, 0]]
