"""x[key], x[key] = v, index_put, gather, take_along_dim, nonzero, argwhere against torch."""

import random
import re
import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, check_grads, check_op, rand_array

X = rand_array((3, 4, 5), np.float64)


def _pair(k):
    """A key element for ember and the same for torch."""
    if isinstance(k, np.ndarray):
        return ember.tensor(k), torch.tensor(k)
    return k, k


def _keys(key):
    items = key if isinstance(key, tuple) else (key,)
    pairs = [_pair(k) for k in items]
    ek, tk = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    return (ek, tk) if isinstance(key, tuple) else (ek[0], tk[0])


IDX = np.array([2, 0, 2])
IDX2 = np.array([[0, 1], [1, 0]])
MASK = rand_array((3, 4), np.bool_, seed=3)

GETITEM_KEYS = [
    0, -1, (1, 2), (1, -1, 3), slice(None), slice(1, None), (slice(None), 1),
    (Ellipsis, 1), (None, 0), (0, None, slice(1, 3)), (slice(None, None, 2), Ellipsis),
    IDX, (IDX,), (slice(None), IDX), (Ellipsis, IDX), (IDX, IDX), (IDX, slice(None), IDX),
    (slice(None), IDX, 1), (slice(None), 1, IDX), (IDX, 1, IDX), (1, IDX, IDX),
    (IDX2,), (slice(None), IDX2), (IDX2, IDX2), (IDX2, slice(None), np.array([0, 4])),
    (None, IDX, None, IDX), (slice(None), None, IDX), MASK, (MASK, 0), (MASK, IDX[:1]),
    (slice(None), MASK[0]), (MASK[:, 0], slice(None), IDX[:1]), True, False,
    (True, IDX), (slice(None), True, IDX), (Ellipsis, None), [0, 2], [[0, 1], [1, 2]],
    [-3, -1], (np.array([], np.int64),), (slice(None), np.array([], np.int64)),
    np.array([True, False, True]), (1, slice(4, None)), (slice(3, None), IDX),
    (Ellipsis, 0, Ellipsis), (np.array(1), IDX), (IDX, Ellipsis, None),
]


@pytest.mark.parametrize("key", GETITEM_KEYS, ids=[str(i) for i in range(len(GETITEM_KEYS))])
def test_getitem_matches_torch(key):
    ek, tk = _keys(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(lambda x: x[ek], lambda x: x[tk], X)


def _random_key(rng: random.Random, shape):
    """A random torch-valid-or-not key mixing every kind of index."""
    key, i = [], 0
    while i < len(shape) and rng.random() > 0.1:
        n, r = shape[i], rng.random()
        if r < 0.15:
            key.append(rng.randint(-n, n - 1))
            i += 1
        elif r < 0.35:
            key.append(slice(rng.choice([None, rng.randint(-n - 1, n + 1)]),
                             rng.choice([None, rng.randint(-n - 1, n + 1)]),
                             rng.choice([None, 1, 2, 3])))
            i += 1
        elif r < 0.55:
            size = rng.choice([(2,), (3,), (2, 2), (1,), (0,)])
            key.append(np.array([rng.randint(-n, n - 1) for _ in range(int(np.prod(size)))],
                                np.int64).reshape(size))
            i += 1
        elif r < 0.65:
            k = rng.randint(1, min(2, len(shape) - i))
            key.append(np.array([rng.random() < 0.5 for _ in range(int(np.prod(shape[i:i + k])))]
                                ).reshape(shape[i:i + k]))
            i += k
        elif r < 0.75:
            key.append(None)
        elif r < 0.8:
            key.append(rng.choice([True, False]))
        elif r < 0.85:
            key.append(np.array(rng.randint(-n, n - 1)))
            i += 1
        else:
            key.append(slice(None))
            i += 1
    return tuple(key)


def test_getitem_random_keys_match_torch_values_shapes_and_errors():
    rng = random.Random(0)
    for _ in range(400):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 4)))
        x = rand_array(shape, np.float64, seed=rng.randint(0, 99))
        key = _random_key(rng, shape)
        ek, tk = _keys(key)
        try:
            expected = torch.tensor(x)[tk]
        except (IndexError, RuntimeError) as e:
            with pytest.raises(type(e)):
                ember.tensor(x)[ek]
            continue
        got = ember.tensor(x)[ek]
        assert_same(got, expected)
        # the same layout too (strides of size-1 dims, and of empty results, are arbitrary)
        for n, a, b in zip(got.shape, got.stride(), expected.stride()):
            assert n <= 1 or a == b or got.numel() == 0, (key, got.stride(), expected.stride())


def test_getitem_random_keys_gradients_accumulate_like_torch():
    rng = random.Random(1)
    for _ in range(60):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))
        key = _random_key(rng, shape)
        ek, tk = _keys(key)
        try:
            torch.zeros(shape)[tk]
        except (IndexError, RuntimeError):
            continue
        check_op(lambda x, ek=ek: x[ek] * 2, lambda x, tk=tk: x[tk] * 2,
                 rand_array(shape, np.float64))


def test_advanced_dims_land_where_torch_puts_them():
    x = ember.zeros(5, 3, 4, 6)
    t = torch.zeros(5, 3, 4, 6)
    i = [0, 1]
    for key in [(slice(None), i, 0, i), (slice(None), 0, slice(None), i), (i, slice(None), i),
                (slice(None), i, slice(None), i), (slice(None), i, slice(None), 0)]:
        assert x[key].shape == t[key].shape
    # NumPy treats the int as an index array and moves the result dims to the front;
    # PyTorch selects first, so the index tensor keeps its place.
    assert x[:, i, :, 0].shape == (5, 2, 4) != np.zeros((5, 3, 4, 6))[:, i, :, 0].shape


def test_repeated_indices_accumulate_gradient():
    check_op(lambda x: x[[0, 0, 2, 0]], lambda x: x[[0, 0, 2, 0]], rand_array((3, 2)))
    check_grads(lambda x: x[ember.tensor([[1, 1], [0, 1]])] ** 2, rand_array((2, 3)))


def test_bool_mask_gradient_and_double_backward():
    m = rand_array((4, 3), np.bool_, seed=4)
    check_op(lambda x: x[ember.tensor(m)], lambda x: x[torch.tensor(m)], rand_array((4, 3)))
    x = ember.tensor(rand_array((4,), np.float64), requires_grad=True)
    (g,) = ember.autograd.grad((x[[0, 0, 1]] ** 2).sum(), x, create_graph=True)
    g.sum().backward()
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    (tg,) = torch.autograd.grad((tx[[0, 0, 1]] ** 2).sum(), tx, create_graph=True)
    tg.sum().backward()
    assert_same(g, tg)
    assert_same(x.grad, tx.grad)


def test_getitem_of_noncontiguous_input():
    check_op(lambda x: x.t()[[1, 0]][:, 1:], lambda x: x.t()[[1, 0]][:, 1:], rand_array((3, 4)))
    check_op(lambda x: x[:, ::2][x[:, ::2] > 0], lambda x: x[:, ::2][x[:, ::2] > 0],
             rand_array((3, 6)))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.float16])
def test_getitem_keeps_dtype(dtype):
    x = rand_array((4, 3), dtype)
    check_op(lambda t: t[[3, 1]], lambda t: t[[3, 1]], x)


@pytest.mark.parametrize("key, exc", [
    (5, IndexError), ((0, 7), IndexError), ([0, 3], IndexError), (np.array([-4]), IndexError),
    ((0, 0, 0), IndexError), (1.5, IndexError), (np.array([0.0]), IndexError),
    (np.ones((2, 4), bool), IndexError), ((np.array([0, 1]), np.array([0, 1, 2])), IndexError),
    (slice(None, None, -1), ValueError), (slice(None, None, 0), ValueError), ("a", TypeError),
])
def test_getitem_errors_match_torch(key, exc):
    ek, tk = _keys(key)
    with pytest.raises(exc), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.zeros(3, 4)[tk]
    with pytest.raises(exc):
        ember.zeros(3, 4)[ek]


def test_zero_dim_indexing():
    for key in [None, Ellipsis, True, False, (None, None), ()]:
        check_op(lambda x, k=key: x[k], lambda x, k=key: x[k], np.array(2.5))
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        ember.tensor(1.0)[0]


def test_non_tuple_sequence_is_a_tuple_with_a_warning():
    x = rand_array((3, 4))
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        out = ember.tensor(x)[[0, slice(1, 3)]]
    assert_same(out, torch.tensor(x)[0, 1:3])


def test_getitem_on_meta_reports_shape():
    x = ember.empty(3, 4, 5, device="meta")
    t = torch.empty(3, 4, 5, device="meta")
    for key in [(0, slice(1, 3)), (slice(None), [0, 2]), ([[0, 1]], slice(None), [1, 1])]:
        ek = tuple(ember.tensor(k, device="meta") if isinstance(k, list) else k for k in key)
        tk = tuple(torch.tensor(k, device="meta") if isinstance(k, list) else k for k in key)
        assert_same(x[ek], t[tk])


def test_basic_key_returns_a_view():
    x = ember.zeros(3, 4)
    v = x[1:, None, 2]
    v += 1
    assert x[1:, 2].sum().item() == 2
    assert x[...]._base is x


# --- assignment ----------------------------------------------------------------------------

SETITEM_CASES = [
    (0, 1.5), ((slice(None), 1), np.arange(5.0)), (IDX[1:], np.ones((2, 4, 5))),
    ((slice(None), [0, 3]), rand_array((2, 5), np.float64)), (MASK, 7.0),
    (MASK, rand_array((int(MASK.sum()), 5), np.float64)), ((Ellipsis, 0), -1.0),
    ((0, [1, 2], [3, 4]), np.array([9.0, 8.0])), ((None, 1), np.ones((1, 1, 4, 5))),
    ((slice(None), 0, IDX), np.ones(3)), (True, np.ones((1, 3, 4, 5))),
]


@pytest.mark.parametrize("key, value", SETITEM_CASES,
                         ids=[str(i) for i in range(len(SETITEM_CASES))])
def test_setitem_matches_torch(key, value):
    ek, tk = _keys(key)
    e, t = ember.tensor(X), torch.tensor(X)
    ev = ember.tensor(value) if isinstance(value, np.ndarray) else value
    tv = torch.tensor(value) if isinstance(value, np.ndarray) else value
    e[ek] = ev
    t[tk] = tv
    assert_same(e, t)


@pytest.mark.parametrize("key, value", SETITEM_CASES,
                         ids=[str(i) for i in range(len(SETITEM_CASES))])
def test_setitem_gradients_match_torch(key, value):
    ek, tk = _keys(key)
    if not isinstance(value, np.ndarray):
        value = np.array(value)

    def run(lib, k, x, v):
        y = x * 1
        y[k] = v * 3
        return y

    check_op(lambda x, v: run(ember, ek, x, v), lambda x, v: run(torch, tk, x, v), X, value)


def test_setitem_random_keys_match_torch():
    rng = random.Random(2)
    done = 0
    while done < 150:
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 4)))
        key = _random_key(rng, shape)
        ek, tk = _keys(key)
        try:
            pos = torch.arange(int(np.prod(shape))).reshape(shape)[tk]
        except (IndexError, RuntimeError):
            continue
        if pos.unique().numel() != pos.numel():
            continue  # which duplicate wins is unspecified
        done += 1
        v = rand_array(tuple(pos.shape), np.float64, seed=done)
        e, t = ember.zeros(shape, dtype=ember.float64), torch.zeros(shape, dtype=torch.float64)
        e[ek] = ember.tensor(v)
        t[tk] = torch.tensor(v)
        assert_same(e, t)


def test_setitem_casts_and_broadcasts_value():
    e, t = ember.zeros(3, 4, dtype=ember.int32), torch.zeros(3, 4, dtype=torch.int32)
    e[:, 1] = ember.tensor([2.7, -1.2, 3.9])  # a copy into a view casts
    t[:, 1] = torch.tensor([2.7, -1.2, 3.9])
    assert_same(e, t)
    e[e == 0] = ember.tensor([5.5])  # so does a one-value fill through a mask
    t[t == 0] = torch.tensor([5.5])
    assert_same(e, t)
    e[[0, 1]] = 7.9  # a Python number is converted to the tensor's dtype
    t[[0, 1]] = 7.9
    assert_same(e, t)
    with pytest.raises(RuntimeError, match="dtypes match"):
        t[[0]] = torch.tensor([1.0])
    with pytest.raises(RuntimeError, match="dtypes match"):
        e[[0]] = ember.tensor([1.0])


def test_setitem_bumps_version_and_keeps_storage():
    x = ember.zeros(4)
    ptr, v0 = x.data_ptr(), x._version
    x[[1, 3]] = 2.0
    assert x.data_ptr() == ptr and x._version == v0 + 1


@pytest.mark.parametrize("key, shape", [
    (0, (3,)), ((slice(None), [0, 1]), (3,)), (slice(None), (2, 1, 4)), ([0, 1], (3, 4)),
])
def test_setitem_shape_mismatch_raises_runtime_error(key, shape):
    with pytest.raises(RuntimeError):
        torch.zeros(3, 4)[key] = torch.ones(shape)
    with pytest.raises(RuntimeError):
        ember.zeros(3, 4)[key] = ember.ones(shape)


def test_setitem_with_a_basic_key_writes_through_views_and_counts_versions():
    """ints, slices, None and `...` (ember writes these through NumPy's own indexing)."""
    for lib in (ember, torch):
        base = lib.arange(12.0).reshape(3, 4)
        x = base.t()  # a non-contiguous view: writes must reach `base`
        v0 = x._version
        x[1] = lib.tensor([10.0, 20.0, 30.0])
        x[-1, 2] = -5.0
        x[:, None, 0] = lib.ones(4, 1)
        x[..., 2:] = 7.0
        vec = lib.zeros(3)
        vec[2] = 4.0  # a full set of ints: one element
        scalar = lib.tensor(1.0)
        scalar[()] = 2.0
        scalar[...] = scalar + 1
        if lib is ember:
            e = (base, vec, scalar, x._version - v0)
        else:
            assert_same(e[0], base)
            assert_same(e[1], vec)
            assert_same(e[2], scalar)
            assert e[3] == x._version - v0 == 4


@pytest.mark.parametrize("key", [(0, 5), (None, 0, 9), (Ellipsis, 9), (0, slice(None), 9),
                                 (None, None, 2, 9), (slice(0, 1), 4), (-4,)], ids=str)
def test_out_of_range_int_keys_raise_like_torch(key):
    """The message names the key's item as PyTorch does (not the dim of the view)."""
    with pytest.raises(IndexError) as t:
        torch.zeros(3, 4, 5)[key] = 1.0
    with pytest.raises(IndexError) as e:
        ember.zeros(3, 4, 5)[key] = 1.0
    assert str(e.value) == str(t.value)
    with pytest.raises(IndexError) as e:
        ember.zeros(3, 4, 5)[key]
    assert str(e.value) == str(t.value)


def test_setitem_basic_key_errors_match_torch():
    with pytest.raises(IndexError, match="too many indices"):
        ember.zeros(3)[0, 0] = 1.0
    with pytest.raises(ValueError, match="step must be greater than zero"):
        ember.zeros(3)[::-1] = 1.0
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ember.zeros(3, requires_grad=True)[1:] = 1.0


def test_setitem_errors():
    with pytest.raises(IndexError):
        ember.zeros(3)[3] = 1.0
    with pytest.raises(TypeError, match="can't assign a list"):
        ember.zeros(3)[0] = [1.0]
    leaf = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf[0] = 1.0


@pytest.mark.parametrize("dst, src", [
    ((slice(2, 6),), (slice(0, 4),)), ((slice(None, None, 2),), (slice(1, None, 2),)),
    ((slice(None),), (slice(None),)), (([2, 3],), (slice(0, 2),)), ((slice(1, 3),), (0,)),
])
def test_setitem_from_overlapping_memory_like_torch(dst, src):
    e, t = ember.arange(10.0), torch.arange(10.0)
    try:
        t[dst] = t[src]
    except RuntimeError:
        with pytest.raises(RuntimeError, match="single memory location"):
            e[dst] = e[src]
        return
    e[dst] = e[src]
    assert_same(e, t)


def test_setitem_value_requiring_grad_into_plain_tensor():
    v = ember.tensor([1.0, 2.0], requires_grad=True)
    x = ember.zeros(3)
    x[[0, 2]] = v
    assert x.grad_fn is not None
    (x * ember.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert_same(v.grad, torch.tensor([1.0, 100.0]))


@pytest.mark.parametrize("key", [None, Ellipsis, True, False, (None, None), (), (False, None)])
def test_setitem_on_zero_dim_tensor_with_grad(key):
    def run(x, v):
        y = x * 1
        y[key] = v * 3
        return y

    check_op(run, run, np.array(2.0), np.array(5.0))


def test_setitem_on_meta_checks_shapes_only():
    x = ember.empty(3, 4, device="meta")
    x[:, [0, 1]] = ember.empty(3, 2, device="meta")
    with pytest.raises(RuntimeError):
        x[:, [0, 1]] = ember.empty(3, 3, device="meta")


# --- index_put -----------------------------------------------------------------------------

@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_torch(accumulate):
    i0, i1 = np.array([0, 2, 0]), np.array([1, 1, 1])
    if not accumulate:
        i0 = np.array([0, 2, 1])

    def fe(x, v):
        return x.index_put((ember.tensor(i0), ember.tensor(i1)), v, accumulate=accumulate)

    def ft(x, v):
        return x.index_put((torch.tensor(i0), torch.tensor(i1)), v, accumulate=accumulate)

    check_op(fe, ft, rand_array((3, 4, 2), np.float64), rand_array((3, 2), np.float64))


def test_index_put_with_mask_and_inplace():
    m = rand_array((3, 4), np.bool_, seed=5)
    e, t = ember.zeros(3, 4), torch.zeros(3, 4)
    e.index_put_((ember.tensor(m),), ember.tensor(2.0), accumulate=True)
    t.index_put_((torch.tensor(m),), torch.tensor(2.0), accumulate=True)
    assert_same(e, t)
    e2 = ember.index_put(e, (ember.tensor([1, 1]), ember.tensor([0, 0])), ember.tensor(1.0), True)
    t2 = torch.index_put(t, (torch.tensor([1, 1]), torch.tensor([0, 0])), torch.tensor(1.0), True)
    assert_same(e2, t2)
    with pytest.raises(TypeError):
        ember.index_put(e, (None, ember.tensor([0])), ember.tensor(1.0))


def test_index_put_dtype_mismatch_raises():
    with pytest.raises(RuntimeError):
        torch.zeros(3).index_put((torch.tensor([0]),), torch.tensor([1.0], dtype=torch.float64))
    with pytest.raises(RuntimeError):
        ember.zeros(3).index_put((ember.tensor([0]),), ember.tensor([1.0], dtype=ember.float64))


# --- gather / take_along_dim ------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_torch(dim):
    idx = np.random.default_rng(0).integers(0, 3, size=(3, 2, 4))
    check_op(lambda x: x.gather(dim, ember.tensor(idx)),
             lambda x: x.gather(dim, torch.tensor(idx)), rand_array((3, 3, 4), np.float64))


def test_gather_smaller_index_and_int32_index():
    idx = np.array([[0, 2], [1, 1]], np.int32)
    check_op(lambda x: ember.gather(x, 1, ember.tensor(idx)),
             lambda x: torch.gather(x, 1, torch.tensor(idx)), rand_array((3, 4)))
    check_grads(lambda x: x.gather(0, ember.tensor([[1, 1], [1, 0]])), rand_array((2, 2)))


@pytest.mark.parametrize("idx, exc", [
    (np.array([[3, 0]]), RuntimeError), (np.array([[-1, 0]]), RuntimeError),
    (np.array([0, 1]), RuntimeError), (np.array([[0.0]]), RuntimeError),
    (np.zeros((1, 5), np.int64), RuntimeError),
])
def test_gather_errors(idx, exc):
    with pytest.raises(exc):
        torch.zeros(3, 4).gather(0, torch.tensor(idx))
    with pytest.raises(exc):
        ember.zeros(3, 4).gather(0, ember.tensor(idx))


def test_gather_on_meta():
    x = ember.empty(3, 4, device="meta")
    i = ember.empty(2, 4, dtype=ember.int64, device="meta")
    assert_same(x.gather(0, i), torch.empty(3, 4, device="meta").gather(
        0, torch.empty(2, 4, dtype=torch.int64, device="meta")))


def test_take_along_dim_matches_torch():
    x = rand_array((3, 4), np.float64)
    idx = np.argsort(x, axis=1)[:, :2]
    check_op(lambda t: ember.take_along_dim(t, ember.tensor(idx), 1),
             lambda t: torch.take_along_dim(t, torch.tensor(idx), 1), x)
    check_op(lambda t: t.take_along_dim(ember.tensor([[5, 0]])),
             lambda t: t.take_along_dim(torch.tensor([[5, 0]])), x)
    bidx = np.array([0, 2, 1, 1, 0, 2, 2, 0]).reshape(2, 4, 1)  # broadcasts both ways off dim 0
    check_op(lambda t: ember.take_along_dim(t, ember.tensor(bidx), 0),
             lambda t: torch.take_along_dim(t, torch.tensor(bidx), 0), rand_array((3, 1, 2)))


# --- nonzero / argwhere --------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 0, 3), ()])
def test_nonzero_and_argwhere_match_torch(shape):
    x = rand_array(shape, np.int64, low=-1, high=2)
    e, t = ember.tensor(x), torch.tensor(x)
    assert_same(e.nonzero(), t.nonzero())
    assert_same(ember.argwhere(e), torch.argwhere(t))
    assert_same(ember.nonzero(e, as_tuple=True), torch.nonzero(t, as_tuple=True))
    assert_same(ember.where(e > 0), torch.where(t > 0))


def test_nonzero_of_float_and_bool():
    x = np.array([[0.0, 1.5], [float("nan"), -0.0]])
    assert_same(ember.tensor(x).nonzero(), torch.tensor(x).nonzero())
    assert_same(ember.tensor(x > 0).nonzero(), torch.tensor(x > 0).nonzero())


def test_nonzero_on_meta_raises_not_implemented():
    with pytest.raises(NotImplementedError):
        torch.empty(3, device="meta").nonzero()
    with pytest.raises(NotImplementedError):
        ember.empty(3, device="meta").nonzero()



# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

def test_gather_from_a_0d_tensor():
    from helpers import same_error, same_result

    same_result(lambda L: L.gather(L.tensor(2.5), 0, L.tensor(0)))
    same_result(lambda L: L.tensor(2.5).gather(-1, L.tensor([0, 0])))
    same_error(lambda L: L.gather(L.tensor(2.5), 0, L.tensor(1)))


def test_the_gradient_of_indexing_is_one_put_into_zeros_named_as_pytorch_names_it():
    # x[idx]'s VJP accumulates into zeros (repeated rows add up); under create_graph its
    # node is PyTorch's IndexPutImplBackward0, and its own gradient indexes again.
    def run(m):
        x = m.arange(6.0, dtype=m.float64).reshape(2, 3).requires_grad_()
        v = m.arange(9.0, dtype=m.float64).reshape(3, 3).requires_grad_()
        (g,) = m.autograd.grad(x[m.tensor([0, 1, 1])], x, v, create_graph=True)
        (gv,) = m.autograd.grad((g * g).sum(), v)
        return g, gv

    (g, gv), (tg, tgv) = run(ember), run(torch)
    assert type(g.grad_fn).__name__ == type(tg.grad_fn).__name__ == "IndexPutImplBackward0"
    assert_same(g, tg)
    assert_same(gv, tgv)


# --- x[key] = v: index tensors are inputs of the op, the key param is static ---------------

class _SetitemRecorder(ember._core.Interpreter):
    """Keeps every `setitem` op's inputs and params, then evaluates it below."""

    def __init__(self) -> None:
        self.calls: list = []

    def process(self, prim, args, params):
        if prim.name == "setitem":
            self.calls.append((prim, args, params))
        return self.lower(prim, args, params)


@pytest.mark.parametrize("key", [
    lambda L: L.tensor([2, 0]), lambda L: (slice(None), L.tensor([1, 1, 3])),
    lambda L: (L.tensor([0, 2]), None, L.tensor([3, 1])), lambda L: (Ellipsis, L.tensor(2)),
    lambda L: L.tensor([True, False, True]), lambda L: (1, L.tensor([[0, 3], [1, 2]])),
])
def test_setitem_takes_index_tensors_as_inputs(key):
    rec = _SetitemRecorder()
    e, t = ember.zeros(3, 4), torch.zeros(3, 4)
    with ember._core.interpret(rec):
        e[key(ember)] = 5.0
    t[key(torch)] = 5.0
    assert_same(e, t)
    (prim, args, params), = rec.calls
    static = params["key"] if isinstance(params["key"], tuple) else (params["key"],)
    assert not any(isinstance(k, ember.Tensor) for k in static)
    tensors = [k for k in (key(ember) if isinstance(key(ember), tuple) else (key(ember),))
               if isinstance(k, ember.Tensor)]
    assert len(args) == 2 + len(tensors)
    # replayed with other index values, the recorded op writes where those point
    other = [ember.zeros_like(i) for i in args[2:]]
    target = ember.zeros(3, 4)
    ember._core.bind(prim, target, 7.0, *other, **params)
    t_target = torch.zeros(3, 4)
    t_key = key(torch)
    t_other = iter([torch.zeros_like(torch.as_tensor(i.numpy())) for i in args[2:]])
    t_key = tuple(next(t_other) if isinstance(k, torch.Tensor) else k for k in t_key) \
        if isinstance(t_key, tuple) else next(t_other)
    t_target[t_key] = 7.0
    assert_same(target, t_target)


@pytest.mark.parametrize("shape", [(2, 3), (3,), (2, 3, 4), ()])
def test_nonzero_is_column_major_as_torch(shape):
    # PyTorch's CPU nonzero fills an (ndim, n) buffer and returns its transpose: strides (1, n),
    # so `x.nonzero().view(-1)` fails as it does there
    a = (rand_array(shape) > 0) if shape else np.array(True)
    res = []
    for m in (ember, torch):
        idx = m.tensor(a).nonzero()
        viewable = True
        try:
            idx.view(-1)
        except RuntimeError:
            viewable = False
        res.append((idx.tolist(), idx.is_contiguous(), viewable,
                    idx.stride() if idx.shape[0] > 1 and idx.shape[1] > 1 else None))
    assert res[0] == res[1]


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
def test_a_complex_value_written_into_a_real_tensor(dtype):
    """A bool destination reads both parts of each complex value (1j is True); the others
    take the real part, as torch's copy does."""
    def write(L):
        x = L.zeros(2, 3, dtype=getattr(L, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the discarded-imaginary-part warning)
            x[:, 1] = L.tensor([1.5j, 2 + 0j])
            x[0] = L.tensor([0j, 1j, -1 + 0j])
        return x

    assert_same(write(ember), write(torch))


def test_python_int_keys_select_views_as_torch_does():
    # x[i] and x[i, j] take the selects directly; values, layout, storage and node as torch
    base = rand_array((4, 5, 3), seed=7)
    for key in [0, 3, -1, -4, (1,), (2, 4), (-1, -5), (3, 0, 2), (0, -1, -3)]:
        for grad in (False, True):
            xe = ember.tensor(base, requires_grad=grad)
            xt = torch.tensor(base, requires_grad=grad)
            ye, yt = xe[key], xt[key]
            assert ye.shape == yt.shape and ye.stride() == yt.stride()
            assert ye.storage_offset() == yt.storage_offset()
            assert ye.detach().numpy().tolist() == yt.detach().numpy().tolist()
            assert ye._base is xe and ye.untyped_storage().data_ptr() == \
                xe.untyped_storage().data_ptr()
            if grad:
                assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
                assert ye.grad_fn._saved_index == yt.grad_fn._saved_index
                ye.sum().backward()
                yt.sum().backward()
                assert xe.grad.numpy().tolist() == xt.grad.numpy().tolist()
    x = ember.tensor(base)
    for key in [4, -5, (0, 5), (0, 0, 3), (0, 0, 0, 0), True, (1, False)]:
        try:
            want = torch.tensor(base)[key]
        except IndexError as e:
            with pytest.raises(IndexError, match=re.escape(str(e))):
                x[key]
        else:
            assert x[key].shape == want.shape
