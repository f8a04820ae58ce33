"""MLX arrays the way a NumPy user first tries them: indexing (ints, negative and reversed
slices, Ellipsis / None, integer arrays in one and several axes mixed with slices, what
happens out of range, boolean masks), assignment with broadcasting and repeated indices,
`.at[]` updates, take / take_along_axis / put_along_axis, slice / slice_update with array
starts, where; printing of every dtype, of large, 0-d and empty arrays; tolist / item,
NumPy conversions (and arrays from a memoryview), construction from mixed lists, NumPy
arrays and big Python ints, astype wrap-around; saving and loading (.npy, .npz, .safetensors with
metadata, .gguf, a file NumPy wrote); and the mistakes users make.
The same file runs on MLX and, via `python -m ember.run indexing_io.py`, on ember.
"""

import os
import tempfile
import zipfile

import numpy as np

import mlx.core as mx

DTYPES = [mx.bool_, mx.uint8, mx.uint16, mx.uint32, mx.uint64, mx.int8, mx.int16, mx.int32,
          mx.int64, mx.float16, mx.bfloat16, mx.float32, mx.float64, mx.complex64]


def show(name, x):
    """One line per array: name, shape, dtype and its printed values."""
    text = str(x).replace("\n", " ")
    print(f"{name}: {tuple(x.shape)} {x.dtype} {text}")


def attempt(name, fn, root=None):
    """Print what `fn()` gives, or the type and message of what it raises (with the
    temporary directory `root` written as <tmp>)."""
    try:
        out = fn()
        if isinstance(out, mx.array):
            show(name, out)
        else:
            print(f"{name}: {out}")
    except Exception as e:
        message = str(e) if root is None else str(e).replace(root, "<tmp>")
        print(f"{name}: {type(e).__name__}: {message}")


def reading():
    print("== reading")
    a = mx.arange(24).reshape(2, 3, 4)
    show("int", a[1])
    show("neg int", a[-1, -2])
    show("scalar", a[0, 1, 2])
    show("step", a[..., ::2])
    show("reversed", a[::-1, ::-1, ::-1][0])
    show("neg step bounds", a[0, 2:0:-1, -1:-4:-2])
    show("clipped slice", a[:, 1:100, -100:2])
    show("empty slice", a[:, 2:1])
    show("ellipsis", a[..., 0])
    show("ellipsis mid", a[0, ..., 1])
    show("none", a[None, 0, :, None, 1])
    show("arr 1 axis", a[:, mx.array([2, 0, 2])])
    show("arr neg", a[mx.array([-1, 0])])
    show("arr 2-d", a[0, mx.array([[0, 1], [2, 2]])])
    show("arrs broadcast", a[mx.array([[0], [1]]), mx.array([0, 2]), 1])
    show("arrs apart", a[mx.array([0, 1]), :, mx.array([3, 0])])
    show("arrs adjacent", a[:, mx.array([0, 2]), mx.array([1, 3])])
    show("arr none", a[mx.array([1]), None, 1:])
    show("arr uint8", a[0, mx.array([1, 2], dtype=mx.uint8)])
    show("arr int64", a[1, mx.array([2], dtype=mx.int64), ::3])
    show("arr 0-d", a[mx.array(1), 2])
    show("take flat", mx.take(a, mx.array([0, 5, 23])))
    show("take axis", mx.take(a, mx.array([[1, 0]]), axis=1))
    show("take int", mx.take(a, 2, axis=-1))
    show("take neg", mx.take(mx.arange(5), mx.array([-1, -5])))
    idx = mx.array([[[0, 3]], [[2, 1]]])
    show("take_along", mx.take_along_axis(a, idx, axis=2))
    show("take_along flat", mx.take_along_axis(a, mx.array([7, 0]), axis=None))
    show("take_along bcast", mx.take_along_axis(a, mx.array([[[1]]]), axis=1))
    show("slice arr", mx.slice(a, mx.array([1, 2]), axes=(0, 2), slice_size=(1, 3, 2)))
    show("slice int start", mx.slice(a, mx.array(1), axes=(1,), slice_size=(2, 2, 4)))
    show("where", mx.where(a[0] % 3 == 0, a[0], -a[0]))
    show("where scalars", mx.where(mx.array([True, False]), 1.5, 2))
    show("where bcast", mx.where(mx.array([[True], [False]]), mx.array([1, 2, 3]), 0))


def writing():
    print("== writing")
    x = mx.zeros((3, 4), dtype=mx.int32)
    x[1] = 5
    x[:, -1] = mx.array([1, 2, 3])
    x[0, ::2] = mx.array([7, 8])
    x[mx.array([2, 2]), mx.array([0, 1])] = mx.array([9, 10])
    show("setitem", x)
    y = x
    y[..., 1] = -1
    print("alias sees write:", x[0, 1].item())
    d = mx.zeros(4)
    d[mx.array([1, 1, 3])] = mx.array([1.0, 2.0, 3.0])
    show("dup set", d)
    b = mx.zeros((2, 3))
    b[b == 0] = 2.5
    b[mx.array([[True, False, True], [False, False, True]])] = mx.array([7.0, 8.0, 9.0])
    show("mask set", b)
    f = mx.zeros((2, 2), dtype=mx.float16)
    f[0] = 1.7
    f[1, 1] = mx.array(3, dtype=mx.int32)
    show("set cast", f)
    i8 = mx.zeros(3, dtype=mx.int8)
    i8[1] = -1.9
    i8[2] = mx.array(300)
    show("set int8", i8)
    v = mx.array([1.0, 2.0, 3.0, 4.0])
    i = mx.array([1, 3, 1, 1])
    show("at add", v.at[i].add(mx.array([10.0, 20.0, 30.0, 40.0])))
    show("at subtract", v.at[i].subtract(1.0))
    show("at multiply", v.at[i].multiply(3.0))
    show("at divide", v.at[i].divide(2.0))
    show("at minimum", v.at[i].minimum(mx.array([0.0, 9.0, 5.0, -2.0])))
    show("at maximum", v.at[i].maximum(mx.array([0.0, 9.0, 5.0, -2.0])))
    m = mx.arange(6).reshape(2, 3)
    show("at 2-d", m.at[mx.array([0, 0, 1]), mx.array([2, 2, 0])].add(100))
    show("at slice", m.at[:, 1:].multiply(mx.array([2, 3])))
    show("at int add", m.at[0].add(m[1]))
    show("at f into int", m.at[1].add(0.9))
    show("at unchanged", m)
    z = mx.zeros((2, 3), dtype=mx.int32)
    show("put_along", mx.put_along_axis(z, mx.array([[0, 2], [1, 1]]),
                                        mx.array([[5, 6], [7, 8]]), axis=1))
    show("put_along scalar", mx.put_along_axis(z, mx.array([[2], [0]]), mx.array(9), axis=1))
    show("put_along flat", mx.put_along_axis(z, mx.array([1, 4]), mx.array([3, 4]), axis=None))
    base = mx.zeros((3, 4))
    upd = mx.ones((2, 2))
    show("slice_update", mx.slice_update(base, upd, mx.array([1, 1]), axes=(0, 1)))
    show("slice_update 1 axis", mx.slice_update(base, mx.ones((3, 2)), mx.array(2), axes=(1,)))


def printing():
    print("== printing")
    for dt in DTYPES:
        a = mx.array([0, 1, 2]).astype(dt)
        if dt != mx.bool_:
            a = a * 3
        if dt in (mx.float16, mx.bfloat16, mx.float32, mx.float64):
            a = mx.array([-1.5, 0.0, 2.25], dtype=dt)
        if dt == mx.complex64:
            a = mx.array([1 + 2j, -0.5j, 3])
        with mx.stream(mx.cpu):
            print(f"{dt}: {a} | {a!r}")
    print(repr(mx.array(5, dtype=mx.int8)), repr(mx.array(2.5)), repr(mx.array(True)))
    print(repr(mx.array(1 - 1j)), mx.array(3.0, dtype=mx.bfloat16))
    print(repr(mx.zeros(0)), repr(mx.zeros((0, 3), dtype=mx.int16)), mx.zeros((2, 0, 1)))
    print(mx.arange(1001))
    print(mx.arange(30).reshape(10, 3) * 1.5)
    print(repr(mx.arange(3000, dtype=mx.int64).reshape(1000, 3)))
    print(mx.ones((4, 5, 6), dtype=mx.bool_)[:2, :2])
    print(repr(mx.array([[1e-8, 1.0], [1e8, -2.0]])))
    print(repr(mx.array([123456789.0, 0.001])), repr(mx.array([1.0, 2.0, 3.5])))
    print(repr(mx.array([2**31 - 1, -2**31])), repr(mx.array([2**63 - 1], dtype=mx.int64)))
    print(repr(mx.array(-1).astype(mx.uint64)), repr(mx.array([-1, 300]).astype(mx.uint8)))
    big = mx.array([1.5e300, -2.0], dtype=mx.float64)
    with mx.stream(mx.cpu):
        print(repr(big), repr(mx.array([0.1], dtype=mx.float64)))


def conversions():
    print("== conversions")
    for dt in DTYPES:
        a = mx.array([1, 0]).astype(dt)
        with mx.stream(mx.cpu):
            items = a.tolist()
            one = a[0].item()
        print(f"{dt}: tolist {items} {type(items[0]).__name__}, item {one!r} "
              f"{type(one).__name__}")
    print(mx.arange(6).reshape(2, 1, 3).tolist(), mx.array(4).tolist(), mx.zeros((2, 0)).tolist())
    for dt in DTYPES:
        if dt == mx.bfloat16:
            continue
        with mx.stream(mx.cpu):
            arr = np.array(mx.array([2, 3]).astype(dt))
        print(f"numpy {dt}: {arr.dtype} {arr.tolist()} {arr.flags['C_CONTIGUOUS']}")
    arr = np.array(mx.arange(6).reshape(2, 3)[:, ::2])
    print("numpy of slice:", arr.shape, arr.strides, arr.tolist())
    print("asarray copy=False:", np.asarray(mx.array([1.5, 2.5])).tolist())
    print("from memoryview:", mx.array(memoryview(np.array([1.5, 2.5], dtype=np.float32))))


def construction():
    print("== construction")
    lists = [
        [True, False], [True, 2], [1, 2.5], [True, 1.5], [1, 2j], [True, 1, 1.0, 1j],
        [[1, 2], [3.0, 4]], [2**31 - 1], [2**31], [-2**31 - 1], [2**40, 1], [2**63 - 1],
        [1.0, 2**40], [], [[], []], [[True], [False]],
    ]
    for lst in lists:
        attempt(f"array {lst}", lambda lst=lst: mx.array(lst))
    attempt("array 2**64", lambda: mx.array([2**64]))
    attempt("array 2**63", lambda: mx.array(2**63))
    attempt("array int 2**40", lambda: mx.array(2**40))
    attempt("array float", lambda: mx.array(1e40))
    attempt("array ragged", lambda: mx.array([[1, 2], [3]]))
    attempt("array str", lambda: mx.array(["a"]))
    attempt("array dtype", lambda: mx.array([1.7, -2.7], dtype=mx.int32))
    attempt("array int to bool", lambda: mx.array([0, 2], mx.bool_))
    attempt("array tuple", lambda: mx.array(((1, 2), (3, 4))))
    attempt("array of arrays", lambda: mx.array([mx.array([1, 2]), mx.array([3, 4])]))
    attempt("array of 0-d", lambda: mx.array([mx.array(1.5), 2]))
    attempt("array np scalar", lambda: mx.array(np.float64(2.5)))
    attempt("array np int64 scalar", lambda: mx.array(np.int64(3)))
    for dt in (np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32,
               np.int64, np.float16, np.float32, np.float64, np.complex64, np.complex128):
        src = np.array([[0, 1], [2, 3]]).astype(dt)
        attempt(f"from np {np.dtype(dt).name}", lambda src=src: mx.array(src))
    attempt("from np slice", lambda: mx.array(np.arange(12).reshape(3, 4)[::2, ::-1]))
    attempt("from np fortran", lambda: mx.array(np.asfortranarray(np.arange(6).reshape(2, 3))))
    attempt("from np dtype", lambda: mx.array(np.array([1.5, 2.5]), dtype=mx.float16))
    print("== astype")
    f = mx.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 255.7, 256.0, -129.0])
    for dt in (mx.uint8, mx.int8, mx.int16, mx.uint32, mx.bool_):
        print(f"astype {dt}:", f.astype(dt).tolist())
    i = mx.array([-1, 127, 128, 255, 256, 65535, 70000, -70000])
    for dt in (mx.uint8, mx.int8, mx.uint16, mx.int16, mx.uint32, mx.uint64, mx.float16,
               mx.bool_):
        print(f"astype int {dt}:", i.astype(dt).tolist())
    show("astype f16", mx.array([65504.0, 65520.0, 1e-8, 0.1]).astype(mx.float16))
    show("astype bf16", mx.array([3.14159, 1e38, 1.00390625]).astype(mx.bfloat16))
    show("astype nan int", mx.array([float("nan"), float("inf")]).astype(mx.int32))
    show("astype complex", mx.array([1 + 2j, -3.7 - 1j]).astype(mx.float32))
    show("astype complex int", mx.array([1 + 2j, -3.7 - 1j]).astype(mx.int32))
    show("astype to complex", mx.array([1, -2]).astype(mx.complex64))


def files(root):
    print("== files")
    a = mx.arange(6, dtype=mx.float32).reshape(2, 3)
    path = os.path.join(root, "a.npy")
    mx.save(path, a)
    back = mx.load(path)
    show("npy", back)
    mx.save(os.path.join(root, "noext"), mx.array([1, 2], dtype=mx.int16))
    print("npy appended:", sorted(os.listdir(root)))
    show("npy noext", mx.load(os.path.join(root, "noext.npy")))
    for dt in DTYPES:
        p = os.path.join(root, "d.npy")
        with mx.stream(mx.cpu):
            x = mx.array([1, 0]).astype(dt)
            try:
                mx.save(p, x)
                y = mx.load(p)
                print(f"npy {dt}: {y.dtype} {y.tolist()}")
            except Exception as e:
                print(f"npy {dt}: {type(e).__name__}: {e}")
    mx.save(os.path.join(root, "scalar.npy"), mx.array(3.5))
    show("npy 0-d", mx.load(os.path.join(root, "scalar.npy")))
    mx.save(os.path.join(root, "slice.npy"), a[:, ::-2])
    show("npy slice", mx.load(os.path.join(root, "slice.npy")))
    np.save(os.path.join(root, "np.npy"), np.arange(8, dtype=np.int64).reshape(2, 4)[:, 1::2])
    show("npy from numpy", mx.load(os.path.join(root, "np.npy")))
    np.save(os.path.join(root, "npf.npy"), np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    show("npy fortran", mx.load(os.path.join(root, "npf.npy")))
    np.save(os.path.join(root, "npb.npy"), np.array([True, False]))
    show("npy bool", mx.load(os.path.join(root, "npb.npy")))
    np.save(os.path.join(root, "big.npy"), np.array([1.5, -2.0], ">f4"))
    show("npy big-endian", mx.load(os.path.join(root, "big.npy")))
    for name, value in (("complex128", np.array([1j])), ("str", np.array(["ab"])),
                        ("datetime", np.array([1], "M8[s]"))):
        np.save(os.path.join(root, "odd.npy"), value)
        attempt(f"npy {name}", lambda: mx.load(os.path.join(root, "odd.npy")))
    np.savez(os.path.join(root, "np.npz"), w=np.ones((2, 2), np.float32),
             b=np.array([1, 2], np.uint8))
    loaded = mx.load(os.path.join(root, "np.npz"))
    print("npz from numpy:", sorted(loaded), {k: str(v.dtype) for k, v in sorted(loaded.items())})
    print("numpy reads mx npy:", np.load(path).dtype, np.load(path).tolist())

    p = os.path.join(root, "named.npz")
    mx.savez(p, a, mx.array([1, 2]), weight=mx.ones(2), bias=mx.array(0.5))
    loaded = mx.load(p)
    print("savez keys:", list(loaded))
    for k, v in loaded.items():
        show(f"savez {k}", v)
    with np.load(p) as z:
        print("numpy reads savez:", sorted(z.files))
    with zipfile.ZipFile(p) as z:
        print("savez entries:", sorted((i.filename, i.create_version, i.file_size, i.compress_type)
                                       for i in z.infolist()))
    mx.savez_compressed(os.path.join(root, "comp"), x=mx.arange(100), y=mx.zeros((2, 2)))
    print("savez_compressed ext:", sorted(f for f in os.listdir(root) if f.startswith("comp")))
    loaded = mx.load(os.path.join(root, "comp.npz"))
    print("compressed:", {k: (v.shape, str(v.dtype)) for k, v in loaded.items()},
          loaded["x"].sum().item())
    print("load format:", type(mx.load(p, format="npz")).__name__)

    st = os.path.join(root, "w.safetensors")
    weights = {"b": mx.array([1, 2], dtype=mx.int8), "a": mx.ones((2, 2), dtype=mx.bfloat16),
               "c": mx.array(1.5)}
    mx.save_safetensors(st, weights, metadata={"format": "mlx", "step": "3"})
    tensors, meta = mx.load(st, return_metadata=True)
    print("safetensors keys:", list(tensors), meta)
    for k, v in tensors.items():
        show(f"safetensors {k}", v)
    print("safetensors no meta:", type(mx.load(st)).__name__, sorted(mx.load(st, "safetensors")))
    mx.save_safetensors(os.path.join(root, "plain"), {"x": mx.zeros(2)})
    print("safetensors ext:", sorted(f for f in os.listdir(root) if f.startswith("plain")))
    _, meta = mx.load(os.path.join(root, "plain.safetensors"), return_metadata=True)
    print("safetensors empty meta:", meta)

    if hasattr(mx, "save_gguf"):
        g = os.path.join(root, "m.gguf")
        mx.save_gguf(g, {"w": mx.arange(4, dtype=mx.float32), "h": mx.ones(2, dtype=mx.float16)},
                     {"name": "tiny", "layers": mx.array(2, dtype=mx.int32),
                      "list": ["a", "b"]})
        arrays, meta = mx.load(g, return_metadata=True)
        print("gguf keys:", sorted(arrays), sorted(meta))
        for k in sorted(arrays):
            show(f"gguf {k}", arrays[k])
        print("gguf meta:", meta["name"], meta["layers"].item(), meta["list"])

    mx.save(os.path.join(root, "t.txt"), mx.zeros(1))
    mx.savez(os.path.join(root, "t.bin"), mx.zeros(1))
    print("other extensions:", sorted(f for f in os.listdir(root) if f.startswith("t.")))
    cases = [
        ("load missing", lambda: mx.load(os.path.join(root, "missing.npy"))),
        ("save no folder", lambda: mx.save(os.path.join(root, "no", "x.npy"), a)),
        ("safetensors no folder", lambda: mx.save_safetensors(os.path.join(root, "no", "x"),
                                                              {"a": a})),
        ("load bad ext", lambda: mx.load(os.path.join(root, "t.txt"))),
        ("load no ext", lambda: mx.load(os.path.join(root, "noext"))),
        ("load wrong format", lambda: mx.load(path, format="npz")),
        ("load unknown format", lambda: mx.load(path, format="zip")),
        ("npy meta", lambda: mx.load(path, return_metadata=True)),
        ("npz meta", lambda: mx.load(p, return_metadata=True)),
        ("save dict npy", lambda: mx.save(os.path.join(root, "x.npy"), {"a": a})),
        ("save list", lambda: mx.save(os.path.join(root, "l.npy"), [1, 2])),
        ("safetensors list", lambda: mx.save_safetensors(os.path.join(root, "y"), [a])),
        ("safetensors meta", lambda: mx.save_safetensors(
            os.path.join(root, "y.safetensors"), {"a": a}, metadata={"n": 3})),
    ]
    for name, case in cases:
        attempt(name, case, root)
    try:  # (MLX's message is only "std::bad_cast"; ember names the key: the type is printed)
        mx.savez(os.path.join(root, "x.npz"), w=[1, 2])
    except Exception as e:
        print("savez list:", type(e).__name__)


def mistakes():
    print("== mistakes")
    a = mx.arange(12).reshape(3, 4)
    cases = [
        ("too many indices", lambda: a[0, 1, 2]),
        ("too many with none", lambda: a[None, 0, 1, 2]),
        ("float index", lambda: a[1.0]),
        ("float array index", lambda: a[mx.array([0.0])]),
        ("bool mask read", lambda: a[a > 5]),
        ("bool scalar index", lambda: a[True]),
        ("str index", lambda: a["x"]),
        ("list index", lambda: a[[0, 1]]),
        ("tuple of lists", lambda: a[[0, 1], [1, 2]]),
        ("np index", lambda: a[np.array([0, 2])]),
        ("np int index", lambda: a[np.int64(1)]),
        ("two ellipsis", lambda: a[..., ...]),
        ("take float", lambda: mx.take(a, mx.array([0.5]), axis=0)),
        ("take axis", lambda: mx.take(a, mx.array([0]), axis=2)),
        ("take_along ndim", lambda: mx.take_along_axis(a, mx.array([0]), axis=0)),
        ("put_along ndim", lambda: mx.put_along_axis(a, mx.array([0]), mx.array(1), axis=0)),
        ("slice size", lambda: mx.slice(a, mx.array([0]), axes=(0,), slice_size=(2,))),
        ("slice float start", lambda: mx.slice(a, mx.array([0.0]), axes=(0,),
                                               slice_size=(2, 4))),
        ("slice_update shape", lambda: mx.slice_update(a, mx.ones((2, 5), mx.int32),
                                                       mx.array([0]), axes=(0,))),
        ("where shape", lambda: mx.where(mx.array([True, False]), a, 0)),
        ("uint64 max", lambda: mx.array([2**64 - 1], dtype=mx.uint64)),
        ("uint64 2**63", lambda: mx.array(2**63, dtype=mx.uint64)),
        ("item of many", lambda: mx.ones((2, 2)).item()),
        ("empty item", lambda: mx.zeros(0).item()),
        ("astype str", lambda: a.astype("float32")),
    ]
    # NOTE: MLX does not check integer indices against the shape (a[3] of a 3-row array
    # reads whatever memory follows, and can crash; a zero slice step stops the process), so
    # no such case is printed here
    for name, case in cases:
        attempt(name, case)

    def set_(target, idx, value):
        target[idx] = value
        return target

    sets = [
        ("set shape mismatch", lambda: set_(mx.zeros((2, 3)), 0, mx.ones(2))),
        ("set too many dims", lambda: set_(mx.zeros(3), slice(None), mx.ones((2, 3)))),
        ("set float index", lambda: set_(mx.zeros(3), 1.5, 1.0)),
        ("set list value", lambda: set_(mx.zeros(3), 0, [1.0])),
        ("set leading ones", lambda: set_(mx.zeros(3), 1, mx.ones((1, 1)))),
        ("set mask shape", lambda: set_(mx.zeros((2, 2)), mx.array([True, False, True]), 1.0)),
        ("at too many", lambda: mx.zeros(3).at[0, 1].add(1.0)),
        ("at shape", lambda: mx.zeros((2, 3)).at[0].add(mx.ones(2))),
    ]
    for name, case in sets:
        attempt(name, case)


if __name__ == "__main__":
    reading()
    writing()
    printing()
    conversions()
    construction()
    with tempfile.TemporaryDirectory() as root:
        files(root)
    mistakes()
