"""explain_tensor: storage indices, contiguity and `.view` verdicts, against torch and by hand."""

import itertools
import math

import pytest
import torch

import ember
from ember.utils import explain_tensor

# (name, build(m)): the same layout made in ember and in torch
LAYOUTS = [
    ("contiguous", lambda m: m.arange(24.0).view(2, 3, 4)),
    ("transposed", lambda m: m.arange(6.0).view(2, 3).t()),
    ("permuted", lambda m: m.arange(24.0).view(2, 3, 4).permute(2, 0, 1)),
    ("permuted_slice", lambda m: m.arange(24.0).view(2, 3, 4).permute(0, 2, 1)[:, 1:, :]),
    ("stepped", lambda m: m.arange(30.0)[3::4]),
    ("column", lambda m: m.arange(12.0).view(3, 4)[:, 1]),
    ("narrow", lambda m: m.arange(20.0).view(4, 5).narrow(1, 1, 3)),
    ("rows", lambda m: m.arange(20.0).view(4, 5)[1:3]),
    ("expanded", lambda m: m.arange(3.0).expand(2, 3)),
    ("expanded_middle", lambda m: m.arange(6.0).view(2, 1, 3).expand(2, 4, 3)),
    ("unsqueezed_t", lambda m: m.arange(6.0).view(2, 3).t().unsqueeze(1)),
    ("diagonal", lambda m: m.arange(16.0).view(4, 4).diagonal()),
    ("as_strided", lambda m: m.arange(20.0).as_strided((3, 2), (4, 1), 5)),
    ("selected", lambda m: m.arange(24.0).view(2, 3, 4)[1]),
    ("scalar", lambda m: m.arange(6.0)[4]),
    ("empty", lambda m: m.arange(6.0)[2:2]),
    ("unfold", lambda m: m.arange(10.0).unfold(0, 4, 2)),
    ("size_one_dims", lambda m: m.arange(6.0).view(1, 2, 1, 3).permute(2, 3, 0, 1)),
    ("int64_t", lambda m: m.arange(6).view(3, 2).t()),
]


def targets(shape):
    """Shapes to ask `.view` for: flatten, merges of neighbours, splits in two, 1 in front."""
    n = math.prod(shape)
    out = {(-1,), tuple(shape), (1, *shape)}
    for d in range(len(shape) - 1):
        out.add(tuple(shape[:d]) + (shape[d] * shape[d + 1],) + tuple(shape[d + 2:]))
    for d, size in enumerate(shape):
        if size % 2 == 0 and size > 2:
            out.add(tuple(shape[:d]) + (2, size // 2) + tuple(shape[d + 1:]))
    if n % 2 == 0 and n:
        out.add((2, -1))
        out.add((-1, 2))
    return sorted(out)


@pytest.mark.parametrize("name,build", LAYOUTS, ids=[n for n, _ in LAYOUTS])
def test_layout_matches_torch(name, build):
    e, t = build(ember), build(torch)
    x = explain_tensor(e)
    assert x.shape == tuple(t.shape)
    assert x.stride == t.stride()
    assert x.storage_offset == t.storage_offset()
    assert x.is_contiguous == t.is_contiguous()
    assert x.storage_size == t.untyped_storage().nbytes() // t.element_size()
    # the storage index of each element, as torch's own arithmetic over an index storage
    index = torch.arange(x.storage_size).as_strided(t.shape, t.stride(), t.storage_offset())
    assert x.indices == tuple(index.reshape(-1).tolist())
    assert x.reads == torch.bincount(index.reshape(-1), minlength=x.storage_size).tolist()
    assert x.values == tuple(torch.tensor([], dtype=t.dtype).set_(t.untyped_storage()).tolist())


@pytest.mark.parametrize("name,build", LAYOUTS, ids=[n for n, _ in LAYOUTS])
def test_view_verdicts_match_torch(name, build):
    e, t = build(ember), build(torch)
    for target in targets(tuple(t.shape)):
        x = explain_tensor(e, view=target)
        try:
            viewed = t.view(target)
        except RuntimeError as err:
            assert "view size is not compatible" in str(err)
            assert not x.view_ok, (target, x.view_reason)
            assert "would merge dims" in x.view_reason
        else:
            assert x.view_ok, (target, x.view_reason)
            assert x.view_shape == tuple(viewed.shape)
            assert x.view_stride == viewed.stride()


def test_transposed_matrix_by_hand():
    x = explain_tensor(ember.arange(6.0).view(2, 3).t())
    text = str(x).splitlines()
    # t[i, j] = storage[i + 3j]: the columns of the original are the rows now
    assert text[:9] == [
        "tensor of shape (3, 2), ember.float32, on cpu",
        "  stride (1, 3), storage offset 0",
        "  contiguous: no (row-major strides for this shape are (2, 1))",
        "  storage: 6 elements of 4 bytes (24 bytes)",
        "  element [i, j] is storage[0 + i*1 + j*3]:",
        "         j=0 j=1",
        "    i=0    0   3",
        "    i=1    1   4",
        "    i=2    2   5",
    ]
    assert "    read  x x x x x x" in text
    verdict = " ".join(line.strip() for line in text[text.index(
        next(s for s in text if s.startswith("  .view"))):])
    # merging the two dims needs stride[0] == size[1] * stride[1]: 1 against 2 * 3
    assert verdict.startswith(".view(6) fails: new dim 0 (size 6) would merge dims 0 and 1")
    assert "but 1 != 2 * 3" in verdict and ".reshape(6) copies them" in verdict


def test_expanded_reads_each_element_twice_by_hand():
    x = explain_tensor(ember.arange(3.0).expand(2, 3))
    assert x.stride == (0, 1) and x.reads == [2, 2, 2]
    assert "    read  2 2 2" in str(x).splitlines()
    assert "(some more than once: a stride of 0)" in str(x)


def test_stepped_slice_reads_every_other_element_and_views():
    x = explain_tensor(ember.arange(8.0)[1::2], view=(2, 2))
    assert x.indices == (1, 3, 5, 7)
    assert x.reads == [0, 1, 0, 1, 0, 1, 0, 1]
    # splitting one dim of stride 2 keeps it a view: strides (4, 2)
    assert x.view_ok and x.view_stride == (4, 2)


def test_meta_tensors_are_explained_without_values():
    x = explain_tensor(ember.empty(4, 5, device="meta").t())
    assert x.values is None and x.indices[:3] == (0, 5, 10) and not x.view_ok
    assert "value" not in str(x)


def test_bad_target_shape_and_bad_input():
    x = explain_tensor(ember.ones(4, 5), view=(3, -1))
    assert x.view_shape is None and not x.view_ok
    assert "no shape [3, -1] holds 20 elements" in str(x)
    with pytest.raises(TypeError, match="expects a tensor, but got list"):
        explain_tensor([1, 2])


def test_big_tensors_are_cut_short():
    text = str(explain_tensor(ember.zeros(3, 20, 30).transpose(0, 2)))
    assert "more rows" in text and "(27 more)" in text
    assert max(len(line) for line in text.splitlines()) < 100
    rows = list(itertools.takewhile(lambda s: not s.startswith("  it reads"), text.splitlines()))
    assert len(rows) < 50
