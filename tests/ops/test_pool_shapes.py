"""ops/_pool_shapes.py: PyTorch's checks of a pooling's input shape, in its words: which
empty dims each pooling refuses (every dim but a batched input's batch dim; an adaptive
pooling's own set), a 1-d adaptive pooling's dims and its int[1] output size, and the
all-ones adaptive average pooling that PyTorch computes as a mean before any check."""

from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")

_POOLS = [  # (function name, pooled dims, output size or kernel)
    ("avg_pool1d", 1, 1), ("max_pool1d", 1, 1), ("adaptive_avg_pool1d", 1, 2),
    ("adaptive_avg_pool1d", 1, 1), ("adaptive_max_pool1d", 1, 1),
    ("avg_pool2d", 2, 1), ("max_pool2d", 2, 1), ("adaptive_avg_pool2d", 2, 2),
    ("adaptive_avg_pool2d", 2, 1), ("adaptive_max_pool2d", 2, 1),
    ("avg_pool3d", 3, 1), ("max_pool3d", 3, 1), ("adaptive_avg_pool3d", 3, 2),
    ("adaptive_avg_pool3d", 3, 1), ("adaptive_max_pool3d", 3, 1),
]


def _outcome(lib, name: str, shape: list, arg: int) -> str:
    """The result's shape, or the exception's type and message."""
    try:
        return str(list(getattr(lib.nn.functional, name)(lib.ones(*shape), arg).shape))
    except Exception as e:  # noqa: BLE001 (the exception itself is what is compared)
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("name,nd,arg", _POOLS, ids=[f"{p[0]}-{p[2]}" for p in _POOLS])
def test_empty_dims_as_torch(name, nd, arg):
    # every dim emptied in turn, unbatched and batched; and dims too few or too many
    shapes = []
    for n in (nd + 1, nd + 2):
        for zero in range(n):
            shapes.append([2 if d != zero else 0 for d in range(n)])
    shapes += [[3] * n for n in range(1, nd + 4) if n not in (nd + 1, nd + 2)]
    for shape in shapes:
        assert _outcome(ember, name, shape, arg) == _outcome(torch, name, shape, arg), shape


@pytest.mark.parametrize("nd", [2, 3])
def test_adaptive_avg_all_ones_is_a_mean_of_any_dims(nd):
    # PyTorch's shortcut: any number of leading dims, an empty plane's mean is nan
    x = torch.arange(2.0 * 3 * 2 * 4 * 5).reshape(2, 3, 2, 4, 5)
    for t in (x, x.flatten(0, 4 - nd)[0], x[..., :0, :]):
        f = f"adaptive_avg_pool{nd}d"
        want = getattr(torch.nn.functional, f)(t, 1)
        got = getattr(ember.nn.functional, f)(ember.tensor(t.numpy()), 1)
        assert got.shape == want.shape
        assert torch.equal(torch.from_numpy(got.numpy()), want.detach()) or (
            want.isnan().all() and got.isnan().all())


def test_adaptive_max_pool1d_unbatched_without_channels():
    # (0, L): no channels to pool, each pooled to the output size, with int64 indices
    v, i = ember.nn.functional.adaptive_max_pool1d(ember.ones(0, 6), 3, return_indices=True)
    assert (tuple(v.shape), tuple(i.shape), i.dtype) == ((0, 3), (0, 3), ember.int64)


_ONE_SIZES = [None, 2.5, (2.5,), (True,), (2, None), [2], (2, 2, 2), (), -1, 0, 3, 7]


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_1d_output_size_as_torch(kind):
    # the parser's TypeErrors, then the input's dims, then the count, then the sizes
    name = f"adaptive_{kind}_pool1d"
    for shape in ([2, 6], [0, 3, 6], [3, 0, 6], [2, 2, 2, 6]):
        for size in _ONE_SIZES:
            assert _outcome(ember, name, shape, size) == _outcome(torch, name, shape, size), \
                (shape, size)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "complex64"])
def test_adaptive_max_1d_refuses_the_dtypes_of_the_2d_kernel_it_runs(dtype):
    def call(lib):
        return lib.nn.functional.adaptive_max_pool1d(lib.ones(2, 3, 6).to(getattr(lib, dtype)), 3)

    with pytest.raises(NotImplementedError) as want:
        call(torch)
    with pytest.raises(NotImplementedError) as got:
        call(ember)
    assert str(got.value) == str(want.value)
