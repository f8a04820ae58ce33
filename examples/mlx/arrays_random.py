"""MLX arrays and random numbers the way MLX's documentation uses them: explicit keys and
the global seed driving every `mx.random` distribution; construction (float-step arange,
tri, full with an array fill, NumPy arrays of each dtype); integer-array, negative-step,
None / Ellipsis indexing, take / put_along_axis, `.at[]` updates with repeated indices,
slice / slice_update; dtype promotion with weak scalars, integer wrap and sign
conventions, bitwise ops, NaN handling; shape ops, einsum / tensordot / kron; reductions;
printing (summarised, 0-d, half / complex / bool, repr); and the mistakes users make.
The same file runs on MLX and, via `python -m ember.run arrays_random.py`, on ember.
"""

import numpy as np

import mlx.core as mx


def show(name, x):
    """One line per array: name, shape, dtype and its printed values."""
    text = str(x).replace("\n", " ")
    print(f"{name}: {tuple(x.shape)} {x.dtype} {text}")


def random_numbers():
    print("== random")
    key = mx.random.key(42)
    show("key", key)
    k1, k2 = mx.random.split(key)
    show("split", mx.random.split(k1, num=3))
    show("uniform bounds", mx.random.uniform(mx.array([0.0, 10.0]), mx.array([1.0, 20.0]),
                                             shape=(3, 2), key=k1))
    show("uniform f16", mx.random.uniform(shape=(4,), dtype=mx.float16, key=k2))
    show("normal f16", mx.random.normal((2, 3), dtype=mx.float16, loc=1.0, scale=0.5, key=k1))
    show("normal bf16", mx.random.normal((3,), dtype=mx.bfloat16, key=k2))
    show("truncated", mx.random.truncated_normal(mx.array([-1.0, 0.0]), 1.0, (2, 2), key=k1))
    show("bernoulli p", mx.random.bernoulli(mx.array([0.1, 0.5, 0.9]), (2, 3), key=k2))
    logits = mx.log(mx.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]]))
    show("categorical", mx.random.categorical(logits, key=k1))
    show("categorical n", mx.random.categorical(logits, num_samples=5, key=k2))
    show("categorical shape", mx.random.categorical(logits.T, axis=0, shape=(4, 2), key=k1))
    show("gumbel", mx.random.gumbel((4,), key=k2))
    show("laplace", mx.random.laplace((4,), loc=2.0, scale=0.25, key=k1))
    cov = mx.array([[1.0, 0.5], [0.5, 2.0]])
    mvn = mx.random.multivariate_normal(mx.array([1.0, -1.0]), cov, shape=(3,), key=k2,
                                        stream=mx.cpu)
    show("multivariate", mvn)
    show("randint", mx.random.randint(mx.array([0, 100]), 110, (3, 2), key=k1))
    show("randint int16", mx.random.randint(-5, 5, (6,), dtype=mx.int16, key=k2))
    mx.random.seed(7)
    show("perm int", mx.random.permutation(8))
    show("perm array", mx.random.permutation(mx.arange(6).reshape(3, 2) * 10))
    show("perm axis 1", mx.random.permutation(mx.arange(8).reshape(2, 4), axis=1))
    first = mx.random.uniform(shape=(3,))
    mx.random.seed(7)
    for _ in range(3):
        mx.random.permutation(4)
    print("reseeded repeats:", mx.array_equal(mx.random.uniform(shape=(3,)), first).item())


def construction():
    print("== construction")
    show("arange float", mx.arange(0, 1, 0.15))
    show("linspace", mx.linspace(-1, 1, 5))
    show("eye k", mx.eye(3, 4, k=1, dtype=mx.int32))
    show("tri", mx.tri(3, 4, k=-1))
    m = mx.arange(1, 10).reshape(3, 3)
    show("tril", mx.tril(m, k=-1))
    show("triu", mx.triu(m, 1))
    show("full array", mx.full((2, 3), mx.array([1.0, 2.0, 3.0])))
    show("ones_like f16", mx.ones_like(mx.array([1.0, 2.0], dtype=mx.float16)) +
         mx.zeros_like(m[:, :2]))
    show("mixed list", mx.array([[1, 2.5], [True, 3]]))
    for dt in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64, np.float16, np.float32, np.float64, np.complex64):
        a = mx.array(np.arange(3).astype(dt))
        back = np.array(a)
        print(f"from numpy {np.dtype(dt).name}: {a.dtype} -> {back.dtype} {back.tolist()}")


def indexing():
    print("== indexing")
    a = mx.arange(24).reshape(2, 3, 4)
    show("int array", a[mx.array([1, 0, 1])])
    show("two arrays", a[mx.array([0, 1]), mx.array([2, 0])])
    show("neg step", a[:, ::-2, 3:0:-1])
    show("none ellipsis", a[None, ..., 1, None])
    show("mixed", a[1, mx.array([[0], [2]]), mx.array([1, 3])])
    show("take", mx.take(a, mx.array([3, 0, 1]), axis=2))
    idx = mx.argsort(a, axis=-1)[..., ::-1]
    show("take_along", mx.take_along_axis(a, idx, axis=-1)[0])
    z = mx.zeros((2, 3))
    show("put_along", mx.put_along_axis(z, mx.array([[2], [0]]), mx.array([[5.0], [6.0]]), axis=1))
    x = mx.array([1.0, 2.0, 3.0, 4.0])
    i = mx.array([0, 0, 2, 2, 2])
    show("at add", x.at[i].add(1.0))
    show("at subtract", x.at[i].subtract(mx.array([1.0, 2.0, 3.0, 4.0, 5.0])))
    show("at multiply", x.at[i].multiply(2.0))
    show("at divide", x.at[i].divide(4.0))
    show("at minimum", x.at[i].minimum(mx.array([0.5, -1.0, 9.0, 2.5, 3.5])))
    show("at maximum", x.at[1:3].maximum(2.5))
    y = mx.zeros((3, 3), dtype=mx.int32)
    y[mx.array([0, 2]), 1:] = mx.array([7, 8])
    y[..., 0] = -1
    show("setitem", y)
    show("slice", mx.slice(a, mx.array([1, 1]), axes=(1, 2), slice_size=(2, 2, 2)))
    ones = mx.ones((2, 2), dtype=mx.int32)
    show("slice_update", mx.slice_update(mx.zeros((3, 4), dtype=mx.int32), ones, mx.array([1, 2]),
                                         axes=(0, 1)))


def dtypes():
    print("== dtypes")
    pairs = [(mx.int8, mx.uint8), (mx.uint32, mx.int32), (mx.float16, mx.int32),
             (mx.bfloat16, mx.float16), (mx.uint64, mx.int64), (mx.bool_, mx.int16),
             (mx.uint8, mx.uint16), (mx.int64, mx.float16)]
    for p, q in pairs:
        print(f"{p} + {q} -> {(mx.ones(1, dtype=p) + mx.ones(1, dtype=q)).dtype}")
    i8 = mx.array([100, -100], dtype=mx.int8)
    show("int8 + 1", i8 + 1)
    show("scalar", mx.array(3) * 2.5)
    show("int / int", mx.array([7, -7]) / 2)
    show("astype", mx.array([-1.7, 2.9, 300.0]).astype(mx.uint8))
    show("view", mx.array([1.0, -2.0]).view(mx.int32))
    a, b = mx.array([7, -7, 7, -7]), mx.array([2, 2, -2, -2])
    show("floor div", a // b)
    show("remainder", a % b)
    show("wrap int8", mx.array([127], dtype=mx.int8) + mx.array([1], dtype=mx.int8))
    show("bitwise", mx.bitwise_and(mx.array([12, 10]), 6) | mx.array([1, 0]) ^ 3)
    show("invert", mx.bitwise_invert(mx.array([0, 5], dtype=mx.uint8)))
    show("shifts", mx.left_shift(mx.array([1, 3]), 4) >> mx.array([1, 2]))
    f = mx.array([1.0, float("nan"), float("inf"), -float("inf")])
    show("isclose", mx.isclose(f, mx.array([1.0 + 1e-6, float("nan"), float("inf"), 0.0])))
    show("isclose nan", mx.isclose(f, f, equal_nan=True))
    print("allclose:", mx.allclose(mx.array([1.0, 2.0]), mx.array([1.0, 2.001]), atol=1e-2).item())
    print("array_equal nan:", mx.array_equal(f, f).item(),
          mx.array_equal(f, f, equal_nan=True).item())
    show("nan_to_num", mx.nan_to_num(f, nan=-1.0, posinf=9.0, neginf=-9.0))
    show("nan_to_num f16", mx.nan_to_num(f.astype(mx.float16)))
    show("isnan isinf", mx.stack([mx.isnan(f), mx.isinf(f), mx.isposinf(f), mx.isneginf(f)]))


def shapes():
    print("== shapes")
    a = mx.arange(24).reshape(2, -1, 4)
    show("reshape", a.reshape(-1, 6)[1])
    print("flatten", a.flatten(1, 2).shape, mx.unflatten(a, 2, (2, 2)).shape)
    b = mx.zeros((1, 3, 1, 2, 1))
    print("squeeze", b.squeeze((0, 2)).shape, mx.expand_dims(a, (0, 3, -1)).shape)
    print("moveaxis", mx.moveaxis(a, 0, -1).shape, mx.swapaxes(a, 0, 2).shape,
          a.transpose(1, 2, 0).shape, mx.transpose(a, (2, 0, 1)).shape)
    show("broadcast_to", mx.broadcast_to(mx.array([1, 2]), (2, 2)))
    print("broadcast_arrays", [x.shape for x in mx.broadcast_arrays(mx.ones((3, 1)), mx.ones(4))])
    show("concatenate", mx.concatenate([mx.ones((2, 1)), mx.zeros((2, 2))], axis=-1))
    print("split idx", [s.tolist() for s in mx.split(mx.arange(7), [2, 5])])
    print("split sections", [s.shape for s in mx.split(a, 2, axis=2)])
    show("repeat", mx.repeat(mx.array([[1, 2]]), 2, axis=0))
    show("pad edge", mx.pad(mx.array([[1, 2], [3, 4]]), [(1, 0), (0, 2)], mode="edge"))
    show("roll", mx.roll(mx.arange(6).reshape(2, 3), (1, -1), axis=(0, 1)))
    x = mx.arange(6, dtype=mx.float32).reshape(2, 3)
    y = mx.arange(12, dtype=mx.float32).reshape(3, 4)
    show("einsum", mx.einsum("ij,jk->ik", x, y))
    show("einsum trace", mx.einsum("ii", mx.arange(9.0).reshape(3, 3)))
    show("tensordot pairs", mx.tensordot(x, x, axes=([0, 1], [0, 1])))
    show("kron", mx.kron(mx.eye(2), mx.array([[1, 2], [3, 4]])))
    show("outer", mx.outer(mx.array([1, 2]), mx.array([3.0, 4.0, 5.0])))
    show("inner", mx.inner(x, x))
    gx, gy = mx.meshgrid(mx.array([1, 2, 3]), mx.array([4, 5]))
    print("meshgrid xy", gx.shape, gy.tolist())
    gx, gy = mx.meshgrid(mx.array([1, 2, 3]), mx.array([4, 5]), indexing="ij")
    print("meshgrid ij", gx.shape, gy.tolist())
    sq = mx.arange(12).reshape(3, 4)
    show("diag", mx.diag(mx.array([1, 2]), k=1))
    show("diagonal", mx.diagonal(mx.arange(24).reshape(2, 3, 4), offset=1, axis1=1, axis2=2))
    show("trace", mx.trace(sq, offset=1))


def reductions():
    print("== reductions")
    a = mx.array([[1.0, 5.0, 5.0], [-2.0, 0.5, 7.0]])
    show("sum keep", a.sum(axis=1, keepdims=True))
    show("max tuple", mx.max(a.reshape(1, 2, 3), axis=(0, 2)))
    show("argmax ties", mx.argmax(a, axis=1))
    show("logsumexp", mx.logsumexp(a, axis=-1))
    show("logsumexp inf", mx.logsumexp(mx.array([-float("inf"), -float("inf")])))
    show("var ddof", mx.var(a, axis=1, ddof=1))
    show("cumsum rev", mx.cumsum(mx.array([1, 2, 3, 4]), reverse=True))
    show("cumsum excl", mx.cumsum(mx.array([1, 2, 3, 4]), inclusive=False))
    show("cumprod rev excl", mx.cumprod(mx.array([1, 2, 3, 4]), reverse=True, inclusive=False))
    show("sort nan", mx.sort(mx.array([3.0, float("nan"), -1.0, float("inf"), 0.0])))
    show("prod int8", mx.prod(mx.array([100, 2], dtype=mx.int8)))
    show("all any", mx.stack([mx.all(a > 0, axis=1), mx.any(a > 6, axis=1)]))


def printing():
    print("== printing")
    print(mx.arange(2000))
    print(mx.arange(2000.0).reshape(40, 50) / 7)
    print(mx.array(True), mx.array(7, dtype=mx.uint8), repr(mx.array([1, 2], dtype=mx.int64)))
    print(mx.array([1.5, 2.0, -0.1], dtype=mx.float16), mx.array([1e-3], dtype=mx.bfloat16))
    print(repr(mx.array([1 + 2j, -0.5j])))
    print(mx.array([[True, False], [False, True]]))
    print(repr(mx.array([1e-5, 1e5, 3.0])), repr(mx.array([[1e10, 1.0], [2.0, 3.0]])))
    print(mx.array([float("nan"), float("inf"), -float("inf"), 0.0]), repr(mx.zeros((2, 0))))
    t = mx.array([[1, 2], [3, 4]], dtype=mx.int16)
    print(t.tolist(), type(t[0, 0].item()).__name__, mx.array(2.5, dtype=mx.float16).item())
    print(mx.array([1.5], dtype=mx.bfloat16).tolist(), mx.array([1 + 1j]).tolist())
    round_trip = mx.array(np.array(mx.array([[1.5, 2.5]], dtype=mx.float16)))
    print(round_trip.dtype, round_trip, np.array(mx.array([True, False])).dtype)


def mistakes():
    print("== mistakes")
    logits = mx.zeros((2, 3))
    cases = [
        lambda: mx.arange(6).reshape(4, -1),
        lambda: mx.ones((2, 3)) + mx.ones((3, 2)),
        lambda: mx.broadcast_to(mx.ones((2, 3)), (3, 3)),
        lambda: mx.random.categorical(logits, num_samples=2, shape=(2, 2)),
        lambda: mx.random.categorical(logits, shape=(3,)),
        lambda: mx.arange(4)[mx.array([0.0, 1.0])],
        lambda: mx.concatenate([mx.ones((2, 2)), mx.ones(2)]),
        lambda: mx.split(mx.arange(7), 3),
        lambda: mx.arange(4)[mx.array([True, False, True, False])],
        lambda: mx.array([1, 2], dtype=mx.int8) + 1000,
        lambda: mx.moveaxis(mx.ones((2, 3)), 0, 4),
        lambda: mx.expand_dims(mx.ones((2, 3)), (0, -4)),
        lambda: mx.squeeze(mx.ones((1, 3)), (0, 5)),
        lambda: mx.flatten(mx.ones((2, 3, 4)), 2, 1),
        lambda: mx.unflatten(mx.ones((2, 6)), -1, (4, -1)),
        lambda: mx.zeros((2, 3))[0, ..., 1, ...],
        lambda: mx.zeros((2, 3))[0, 1, 2],
        lambda: mx.tril(mx.ones(3)),
        lambda: mx.full((2, -1), 1.0),
        lambda: mx.einsum("ij,jk->ik", mx.ones((2, 3)), mx.ones((4, 4))),
        lambda: mx.trace(mx.ones(3)),
    ]
    for case in cases:
        try:
            print("no error", case())
        except Exception as e:
            print(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    random_numbers()
    construction()
    indexing()
    dtypes()
    shapes()
    reductions()
    printing()
    mistakes()
